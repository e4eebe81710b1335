// GGUF: write -> read round trips of every value and tensor type, and a corpus of malformed
// files built byte by byte, each expected to fail with a tg::Error naming its problem.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/expect_error.h"
#include "common/tensor_utils.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/gguf.h"

namespace tg::model {
namespace {

// ---- helpers ----

// Bytes of a GGUF file written field by field, so tests can put any value anywhere.
class Raw {
 public:
  Raw& u8(uint8_t v) { return put(v); }
  Raw& u32(uint32_t v) { return put(v); }
  Raw& u64(uint64_t v) { return put(v); }
  Raw& str(std::string_view s) {
    u64(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  Raw& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return u32(kGgufMagic).u32(version).u64(n_tensors).u64(n_kv);
  }
  Raw& kv_u32(std::string_view key, uint32_t v) { return str(key).u32(uint32_t(GgufType::U32)).u32(v); }
  // A tensor descriptor: name, dims, ggml type, offset.
  Raw& tensor(std::string_view name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(uint32_t(ne.size()));
    for (uint64_t n : ne) u64(n);
    return u32(type).u64(offset);
  }
  Raw& pad_to(size_t alignment) {
    while (bytes.size() % alignment) bytes.push_back(0);
    return *this;
  }
  Raw& zeros(size_t n) {
    bytes.insert(bytes.end(), n, 0);
    return *this;
  }

  std::vector<uint8_t> bytes;

 private:
  template <class T>
  Raw& put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof v);
    return *this;
  }
};

// Expects parsing to throw a tg::Error whose message contains `expected`.
void expect_parse_error(const std::vector<uint8_t>& bytes, const std::string& expected) {
  try {
    GgufFile::parse(bytes, "test.gguf");
    ADD_FAILURE() << "parsed without error; expected \"" << expected << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << expected;
    EXPECT_NE(std::string(e.what()).find("test.gguf"), std::string::npos) << "the source is not named: " << e.what();
  }
}

constexpr uint32_t kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ8_0 = 8, kGgmlQ2_K = 10, kGgmlQ4_K = 12;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tg_gguf_" + std::to_string(getpid()) + "_" + name)).string();
}

// ---- values ----

TEST(GgufValue, ReportsTypesAndRejectsMismatchedAccess) {
  const GgufValue u32 = uint32_t(7);
  EXPECT_EQ(u32.type(), GgufType::U32);
  EXPECT_EQ(u32.element_type(), GgufType::U32);
  EXPECT_FALSE(u32.is_array());
  EXPECT_EQ(u32.get<uint32_t>(), 7u);
  EXPECT_EQ(u32.to_int(), 7);
  EXPECT_THROW(u32.get<int32_t>(), Error);
  EXPECT_THROW(u32.get_array<uint32_t>(), Error);
  EXPECT_THROW(u32.to_float(), Error);
  try {
    u32.get<float>();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected f32, got u32 7"), std::string::npos) << e.what();
  }

  const GgufValue names = std::vector<std::string>{"a", "bc"};
  EXPECT_EQ(names.type(), GgufType::ARRAY);
  EXPECT_EQ(names.element_type(), GgufType::STRING);
  EXPECT_EQ(names.array_size(), 2u);
  EXPECT_EQ(names.describe(), "array of 2 string");
  EXPECT_THROW(names.to_int(), Error);

  EXPECT_EQ(GgufValue("llama").get<std::string>(), "llama");
  EXPECT_EQ(GgufValue(true).type(), GgufType::BOOL);
  EXPECT_DOUBLE_EQ(GgufValue(1.5f).to_float(), 1.5);
  EXPECT_DOUBLE_EQ(GgufValue(2.25).to_float(), 2.25);
  EXPECT_EQ(GgufValue(int8_t(-3)).to_int(), -3);
  EXPECT_EQ(GgufValue(uint64_t(1) << 40).to_int(), int64_t(1) << 40);
  EXPECT_THROW(GgufValue(std::numeric_limits<uint64_t>::max()).to_int(), Error);
}

TEST(GgufTypes, MapDTypesToGgmlIds) {
  EXPECT_EQ(ggml_type_id(DType::F32), 0u);
  EXPECT_EQ(ggml_type_id(DType::F16), 1u);
  EXPECT_EQ(ggml_type_id(DType::Q8_0), 8u);
  EXPECT_EQ(ggml_type_id(DType::I32), 26u);
  EXPECT_EQ(ggml_type_id(DType::BF16), 30u);
  // ggml's GGML_TYPE_* numbers of the quantized types.
  EXPECT_EQ(ggml_type_id(DType::Q4_0), 2u);
  EXPECT_EQ(ggml_type_id(DType::Q4_1), 3u);
  EXPECT_EQ(ggml_type_id(DType::Q5_0), 6u);
  EXPECT_EQ(ggml_type_id(DType::Q5_1), 7u);
  EXPECT_EQ(ggml_type_id(DType::Q4_K), 12u);
  EXPECT_EQ(ggml_type_id(DType::Q5_K), 13u);
  EXPECT_EQ(ggml_type_id(DType::Q6_K), 14u);
  for (int t = 0; t < kDTypeCount; ++t) {
    EXPECT_EQ(dtype_from_ggml(ggml_type_id(DType(t))), DType(t)) << dtype_name(DType(t));
    EXPECT_EQ(tensor_data_alignment(DType(t)) % 2, 0u);
  }
  EXPECT_THROW(dtype_from_ggml(10), Error);  // q2_K
  EXPECT_THROW(dtype_from_ggml(1000), Error);
}

// ---- round trips ----

// Metadata of every scalar type, every array element type (empty arrays too), and strings with
// bytes that are not ASCII.
std::vector<std::pair<std::string, GgufValue>> every_value() {
  return {
      {"t.u8", uint8_t(250)},
      {"t.i8", int8_t(-120)},
      {"t.u16", uint16_t(65000)},
      {"t.i16", int16_t(-32000)},
      {"t.u32", uint32_t(4000000000u)},
      {"t.i32", int32_t(-2000000000)},
      {"t.f32", 3.25f},
      {"t.bool_true", true},
      {"t.bool_false", false},
      {"t.string", "hello, gguf"},
      {"t.string_empty", ""},
      {"t.string_bytes", std::string("\0\xff\xc3\xa9", 4)},
      {"t.u64", std::numeric_limits<uint64_t>::max()},
      {"t.i64", std::numeric_limits<int64_t>::min()},
      {"t.f64", -1.0e300},
      {"a.u8", std::vector<uint8_t>{0, 1, 255}},
      {"a.i8", std::vector<int8_t>{-128, 0, 127}},
      {"a.u16", std::vector<uint16_t>{1, 65535}},
      {"a.i16", std::vector<int16_t>{-32768, 32767}},
      {"a.u32", std::vector<uint32_t>{1, 2, 3}},
      {"a.i32", std::vector<int32_t>{-1, 0, 1}},
      {"a.f32", std::vector<float>{0.5f, -0.0f, 1e-30f}},
      {"a.bool", std::vector<bool>{true, false, true}},
      {"a.string", std::vector<std::string>{"<unk>", "", "\xe2\x96\x81the"}},
      {"a.u64", std::vector<uint64_t>{std::numeric_limits<uint64_t>::max(), 0}},
      {"a.i64", std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 5}},
      {"a.f64", std::vector<double>{1.0 / 3.0}},
      {"a.empty_u32", std::vector<uint32_t>{}},
      {"a.empty_string", std::vector<std::string>{}},
  };
}

struct TestTensor {
  std::string name;
  DType type;
  std::vector<int64_t> ne;
  std::vector<uint8_t> data;
};

std::vector<TestTensor> every_tensor_type() {
  std::vector<TestTensor> tensors = {
      {"f32.vector", DType::F32, {7}, {}},        {"f16.matrix", DType::F16, {5, 3}, {}},
      {"bf16.cube", DType::BF16, {3, 2, 2}, {}},  {"q8_0.matrix", DType::Q8_0, {64, 3}, {}},
      {"q4_0.matrix", DType::Q4_0, {64, 3}, {}},  {"q4_1.matrix", DType::Q4_1, {32, 5}, {}},
      {"q5_0.matrix", DType::Q5_0, {96, 1}, {}},  {"q5_1.cube", DType::Q5_1, {32, 3, 2}, {}},
      {"q4_K.matrix", DType::Q4_K, {512, 3}, {}}, {"q5_K.vector", DType::Q5_K, {256}, {}},
      {"q6_K.matrix", DType::Q6_K, {256, 5}, {}}, {"i32.4d", DType::I32, {2, 3, 1, 2}, {}},
      {"f32.empty", DType::F32, {0, 4}, {}},
  };
  std::mt19937 rng(7);
  for (TestTensor& t : tensors) {
    size_t bytes = row_size(t.type, t.ne[0]);
    for (size_t d = 1; d < t.ne.size(); ++d) bytes *= size_t(t.ne[d]);
    t.data.resize(bytes);
    for (uint8_t& b : t.data) b = uint8_t(rng());
  }
  return tensors;
}

// `mapped`: the file is mmapped (page-aligned), so tensor data is aligned in memory too; bytes
// parsed from a std::vector only have operator new's alignment.
void check_round_trip(const GgufFile& file, uint32_t alignment, bool mapped) {
  const auto values = every_value();
  const auto tensors = every_tensor_type();
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(file.alignment(), alignment);
  EXPECT_EQ(file.data_offset() % alignment, 0u);
  size_t expected_keys = values.size() + (alignment != kGgufDefaultAlignment ? 1 : 0);
  ASSERT_EQ(file.metadata().size(), expected_keys);
  for (const auto& [key, value] : values) {
    const GgufValue* read = file.find(key);
    ASSERT_NE(read, nullptr) << key;
    EXPECT_EQ(*read, value) << key << ": wrote " << value.describe() << ", read " << read->describe();
  }
  EXPECT_EQ(file.find("no.such.key"), nullptr);
  EXPECT_THROW(file.get("no.such.key"), Error);
  ASSERT_EQ(file.tensors().size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TestTensor& t = tensors[i];
    const GgufTensorInfo* info = file.find_tensor(t.name);
    ASSERT_NE(info, nullptr) << t.name;
    EXPECT_EQ(&file.tensors()[i], info) << "tensors keep file order";
    EXPECT_EQ(info->type, t.type) << t.name;
    EXPECT_EQ(info->n_dims, int(t.ne.size())) << t.name;
    for (int d = 0; d < kMaxDims; ++d) EXPECT_EQ(info->ne[size_t(d)], d < int(t.ne.size()) ? t.ne[size_t(d)] : 1);
    EXPECT_EQ(info->offset % alignment, 0u) << t.name;
    ASSERT_EQ(info->size, t.data.size()) << t.name;
    if (t.data.empty()) {
      EXPECT_EQ(file.tensor_data(*info), nullptr) << t.name;
    } else {
      EXPECT_EQ(std::memcmp(file.tensor_data(*info), t.data.data(), t.data.size()), 0) << t.name;
      if (mapped) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(file.tensor_data(*info)) % alignment, 0u)
            << t.name << " is not aligned in memory";
      }
    }
  }
  EXPECT_EQ(file.file_size() % alignment, 0u) << "the writer pads the file to the alignment";
}

GgufWriter writer_with_everything(const std::vector<TestTensor>& tensors, uint32_t alignment) {
  GgufWriter w;
  if (alignment != kGgufDefaultAlignment) w.set(std::string(gguf_keys::kAlignment), alignment);
  for (const auto& [key, value] : every_value()) w.set(key, value);
  for (const TestTensor& t : tensors) w.add_tensor(t.name, t.type, t.ne, t.data.data());
  return w;
}

TEST(Gguf, RoundTripsEveryValueAndTensorTypeInMemory) {
  for (uint32_t alignment : {32u, 64u, 1u, 256u}) {
    SCOPED_TRACE("alignment " + std::to_string(alignment));
    const auto tensors = every_tensor_type();
    const std::vector<uint8_t> bytes = writer_with_everything(tensors, alignment).to_bytes();
    check_round_trip(GgufFile::parse(bytes), alignment, false);
  }
}

TEST(Gguf, RoundTripsThroughAMappedFile) {
  const auto tensors = every_tensor_type();
  const std::string path = temp_path("round_trip.gguf");
  writer_with_everything(tensors, 64).write_file(path);
  {
    GgufFile file = GgufFile::open(path);
    EXPECT_EQ(file.source(), path);
    // A moved-to file owns the mapping.
    const GgufFile moved = std::move(file);
    check_round_trip(moved, 64, true);
  }
  std::filesystem::remove(path);
}

// Tensors are used in place from the mapping, so their data must be aligned for its scalars even
// where general.alignment (1, 2) does not ask for it: the writer pads, the reader refuses.
TEST(Gguf, TensorDataIsAlignedForItsScalars) {
  const float f32[3] = {1, 2, 3};
  const uint16_t f16[2] = {0x3c00, 0x4000};
  for (uint32_t alignment : {1u, 2u, 4u}) {
    GgufWriter w;
    w.set("general.alignment", alignment);
    w.set("x", "odd");  // a key of odd length, so the data section starts anywhere
    const int64_t one[] = {1}, two[] = {2}, three[] = {3};
    w.add_tensor("a", DType::F16, one, f16);  // 2 bytes: the next tensor would start at 2 mod 4
    w.add_tensor("b", DType::F32, three, f32);
    w.add_tensor("c", DType::F16, two, f16);
    const GgufFile file = GgufFile::parse(w.to_bytes());
    for (const GgufTensorInfo& t : file.tensors()) {
      EXPECT_EQ((file.data_offset() + t.offset) % tensor_data_alignment(t.type), 0u)
          << t.name << " at alignment " << alignment;
      EXPECT_EQ(t.offset % alignment, 0u);
    }
    EXPECT_EQ(static_cast<const float*>(file.tensor_data(*file.find_tensor("b")))[2], 3.0f);
  }

  // One f32 tensor at alignment 1, its offset moved one byte on.
  GgufWriter w;
  w.set("general.alignment", 1u);
  const int64_t three[] = {3};
  w.add_tensor("b", DType::F32, three, f32);
  std::vector<uint8_t> bytes = w.to_bytes();
  const uint64_t data_offset = GgufFile::parse(bytes).data_offset();
  uint64_t offset = 0;
  std::memcpy(&offset, &bytes[data_offset - 8], 8);  // the last descriptor field
  offset += 1;
  std::memcpy(&bytes[data_offset - 8], &offset, 8);
  bytes.push_back(0);
  expect_parse_error(bytes, "tensor 'b': f32 data starting at byte " + std::to_string(data_offset + offset) +
                                " is not aligned to 4 bytes (general.alignment 1)");
}

// write_file replaces only a regular file, through a temporary of its own: other files beside
// it (one named like the old fixed temporary, a symlink planted there) are never touched.
TEST(Gguf, WriteFileReplacesOnlyItsOwnFile) {
  namespace fs = std::filesystem;
  const fs::path dir = temp_path("write_dir");
  fs::remove_all(dir);
  fs::create_directory(dir);
  const auto read = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; };
  GgufWriter writer;
  writer.set("general.name", "x");
  const std::string out = (dir / "out.gguf").string();

  write(dir / "out.gguf.tmp", "notes");
  write(dir / "victim.txt", "keep");
  fs::create_symlink(dir / "victim.txt", dir / "other.gguf.tmp");
  write(out, "old");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write);
  writer.write_file(out);
  writer.write_file((dir / "other.gguf").string());
  EXPECT_EQ(GgufFile::open(out).get("general.name").get<std::string>(), "x");
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(read(dir / "out.gguf.tmp"), "notes");
  EXPECT_EQ(read(dir / "victim.txt"), "keep");
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    files += entry.path().filename().string().find(".tmp") == std::string::npos;
  EXPECT_EQ(files, 3u) << "out.gguf, other.gguf, victim.txt and no stray temporaries";

  // Refused before anything is written, the existing file untouched.
  fs::create_symlink(out, dir / "link.gguf");
  fs::create_directory(dir / "sub.gguf");
  ASSERT_EQ(mkfifo((dir / "fifo.gguf").c_str(), 0600), 0);
  const std::pair<std::string, std::string> refused[] = {
      {(dir / "link.gguf").string(), "is a symbolic link"},
      {(dir / "sub.gguf").string(), "is a directory"},
      {(dir / "fifo.gguf").string(), "exists and is not a regular file"},
      {(dir / "sub.gguf").string() + "/", "names a directory"},
      {(dir / "missing" / "x.gguf").string(), "No such file or directory"},
      {(dir / "victim.txt" / "x.gguf").string(), "Not a directory"},
      {"", "the output path is empty"},
  };
  for (const auto& [path, message] : refused) {
    try {
      writer.write_file(path);
      ADD_FAILURE() << path << " was written";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(fs::is_symlink(dir / "link.gguf"));
  EXPECT_TRUE(fs::is_fifo(dir / "fifo.gguf"));
  EXPECT_EQ(GgufFile::open(out).get("general.name").get<std::string>(), "x");
  fs::remove_all(dir);
}

// A write that fails part-way (here: the file size limit) leaves the old file and no temporary.
TEST(Gguf, AFailedWriteLeavesTheOldFile) {
  namespace fs = std::filesystem;
  const fs::path dir = temp_path("failed_write_dir");
  fs::remove_all(dir);
  fs::create_directory(dir);
  const std::string out = (dir / "out.gguf").string();
  GgufWriter small;
  small.set("general.name", "old");
  small.write_file(out);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG
    const rlimit limit{1 << 16, 1 << 16};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    std::vector<uint8_t> data(1 << 20, 1);
    GgufWriter big;
    const int64_t ne[] = {int64_t(data.size() / 4)};
    big.add_tensor("t", DType::F32, ne, data.data());
    try {
      big.write_file(out);
    } catch (const Error& e) {
      _exit(std::string(e.what()).find("writing '" + out + "' failed: File too large") != std::string::npos ? 0 : 2);
    }
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error, 2: another message, 3: no limit";
  EXPECT_EQ(GgufFile::open(out).get("general.name").get<std::string>(), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "a temporary was left";
  fs::remove_all(dir);
}

// Two writers of one path publish whole files: the result is one of them, never a mixture.
TEST(Gguf, ConcurrentWritersPublishWholeFiles) {
  const std::string path = temp_path("concurrent.gguf");
  std::vector<uint8_t> a(1 << 20, 0xaa), b(1 << 20, 0xbb);
  GgufWriter wa, wb;
  const int64_t ne[] = {int64_t(a.size() / 4)};
  wa.add_tensor("t", DType::F32, ne, a.data());
  wb.add_tensor("t", DType::F32, ne, b.data());
  for (int round = 0; round < 5; ++round) {
    std::string errors[2];
    const auto write = [&](const GgufWriter& w, std::string& error) {
      try {
        w.write_file(path);
      } catch (const std::exception& e) {
        error = e.what();
      }
    };
    std::thread other(write, std::cref(wb), std::ref(errors[1]));
    write(wa, errors[0]);
    other.join();
    EXPECT_EQ(errors[0], "");
    EXPECT_EQ(errors[1], "");
    const GgufFile file = GgufFile::open(path);
    const auto* data = static_cast<const uint8_t*>(file.tensor_data(*file.find_tensor("t")));
    const uint8_t first = data[0];
    EXPECT_TRUE(first == 0xaa || first == 0xbb);
    EXPECT_EQ(std::count(data, data + a.size(), first), std::ptrdiff_t(a.size())) << "round " << round;
  }
  std::filesystem::remove(path);
}

TEST(Gguf, OpeningAFifoIsRefusedWithoutWaiting) {
  const std::string fifo = temp_path("fifo.gguf");
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  try {
    GgufFile::open(fifo);
    ADD_FAILURE() << "a FIFO was opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
  }
  std::filesystem::remove(fifo);
}

// Access::kRead holds its own copy: the file can be truncated under it (a mapping would give
// SIGBUS on the next read of a lost page).
TEST(Gguf, AFileReadIntoMemoryOutlivesChangesToTheFile) {
  const auto tensors = every_tensor_type();
  const std::string path = temp_path("read_access.gguf");
  writer_with_everything(tensors, 64).write_file(path);
  const GgufFile file = GgufFile::open(path, GgufFile::Access::kRead);
  std::filesystem::resize_file(path, 0);
  check_round_trip(file, 64, false);  // malloc's alignment, not the file's 64
  std::filesystem::remove(path);
}

TEST(Gguf, WritesTensorsFromContextTensors) {
  Context ctx;
  Tensor* w = ctx.new_tensor(DType::Q8_0, {64, 5});
  test::Rng rng(3);
  test::fill_uniform(*w, rng);
  GgufWriter writer;
  writer.add_tensor("w", *w);
  const GgufFile file = GgufFile::parse(writer.to_bytes());
  const GgufTensorInfo& info = file.tensors().at(0);
  EXPECT_EQ(info.n_dims, 2);
  EXPECT_EQ(info.ne[0], 64);
  EXPECT_EQ(info.ne[1], 5);
  EXPECT_EQ(std::memcmp(file.tensor_data(info), w->data, w->nbytes()), 0);

  Tensor* view = transpose(ctx, ctx.new_tensor(DType::F32, {4, 3}));
  EXPECT_THROW(writer.add_tensor("t", *view), Error);
}

// A source gives a tensor's bytes in pieces as the file is written, and only then; the file is
// the one its data would make. file_size() is the size written, at any alignment.
TEST(GgufWriter, WritesTensorsFromSourcesAsTheFileIsWritten) {
  Context ctx;
  Tensor* w = ctx.new_tensor(DType::Q8_0, {64, 5});
  test::Rng rng(3);
  test::fill_uniform(*w, rng);
  Context headers{ContextOptions{.no_alloc = true}};
  const Tensor* shape = headers.new_tensor(DType::Q8_0, {64, 5});
  for (uint32_t alignment : {1u, 32u}) {
    int calls = 0;
    GgufWriter with_data, with_source;
    for (GgufWriter* writer : {&with_data, &with_source}) {
      writer->set(std::string(gguf_keys::kAlignment), alignment);
      writer->set("x", "odd");
    }
    with_data.add_tensor("w", *w);
    with_source.add_tensor("w", *shape, [&](const GgufWriter::ByteSink& sink) {
      ++calls;
      const auto* bytes = static_cast<const uint8_t*>(w->data);
      for (size_t at = 0; at < w->nbytes(); at += 7) sink(bytes + at, std::min<size_t>(7, w->nbytes() - at));
    });
    EXPECT_EQ(calls, 0);
    const std::vector<uint8_t> bytes = with_source.to_bytes();
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(bytes, with_data.to_bytes());
    EXPECT_EQ(with_source.file_size(), bytes.size());
    EXPECT_EQ(GgufFile::parse(bytes).tensors().at(0).ne[1], 5);
  }
}

// A source that gives more or fewer bytes than its tensor holds would shift every tensor after it.
TEST(GgufWriter, RefusesASourceThatMiscounts) {
  Context headers{ContextOptions{.no_alloc = true}};
  const Tensor* shape = headers.new_tensor(DType::F32, {4});
  const float data[5] = {};
  for (size_t given : {12u, 20u}) {
    GgufWriter w;
    w.add_tensor("t", *shape, [&](const GgufWriter::ByteSink& sink) {
      sink(data, 8);
      sink(data, given - 8);
    });
    test::expect_error([&] { w.to_bytes(); },
                       "gguf writer: tensor 't': its source gave " + std::to_string(given) + " bytes, expected 16");
  }
}

TEST(GgufWriter, RejectsBadInput) {
  GgufWriter w;
  w.set("a", uint32_t(1));
  EXPECT_THROW(w.set("a", uint32_t(2)), Error);
  EXPECT_THROW(w.set("", uint32_t(2)), Error);
  EXPECT_THROW(w.set(std::string(gguf_keys::kAlignment), uint32_t(48)), Error);
  EXPECT_THROW(w.set(std::string(gguf_keys::kAlignment), uint64_t(64)), Error);
  const float data[4] = {};
  const int64_t ne[] = {4};
  w.add_tensor("x", DType::F32, ne, data);
  EXPECT_THROW(w.add_tensor("x", DType::F32, ne, data), Error);
  EXPECT_THROW(w.add_tensor(std::string(64, 'n'), DType::F32, ne, data), Error);
  EXPECT_THROW(w.add_tensor("q", DType::Q8_0, ne, data), Error);  // 4 is not a multiple of 32
  EXPECT_THROW(w.add_tensor("k", DType::Q4_K, ne, data), Error);  // nor of 256
  EXPECT_THROW(w.add_tensor("none", DType::F32, ne, nullptr), Error);
  const int64_t five_dims[] = {1, 1, 1, 1, 1};
  EXPECT_THROW(w.add_tensor("5d", DType::F32, five_dims, data), Error);
}

// ---- malformed files ----

// A valid file: two f32 tensors of 4 elements, with data. Used as the base for mutations.
std::vector<uint8_t> valid_file() {
  Raw r;
  r.header(2, 1).kv_u32("general.test", 1);
  r.tensor("a", {4}, kGgmlF32, 0).tensor("b", {4}, kGgmlF32, 32);
  r.pad_to(32).zeros(64);
  return r.bytes;
}

TEST(GgufMalformed, ValidBaseParses) {
  const GgufFile file = GgufFile::parse(valid_file());
  EXPECT_EQ(file.tensors().size(), 2u);
}

TEST(GgufMalformed, Header) {
  expect_parse_error({}, "truncated file: magic");
  expect_parse_error({'G', 'G'}, "truncated file: magic");
  expect_parse_error(Raw().u32(0x67676a74).u32(3).bytes, "bad magic 0x67676a74");
  expect_parse_error(Raw().header(0, 0, 1).bytes, "unsupported GGUF version 1");
  expect_parse_error(Raw().header(0, 0, 4).bytes, "unsupported GGUF version 4");
  expect_parse_error(Raw().header(0, 0, 0x03000000).bytes, "big-endian");
  expect_parse_error(Raw().u32(kGgufMagic).u32(3).bytes, "truncated file: tensor count");
  expect_parse_error(Raw().u32(kGgufMagic).u32(3).u64(0).u32(0).bytes, "truncated file: metadata count");
  // The smallest valid file: no tensors, no metadata; version 2 has the same layout.
  EXPECT_EQ(GgufFile::parse(Raw().header(0, 0).bytes).tensors().size(), 0u);
  EXPECT_EQ(GgufFile::parse(Raw().header(0, 0, 2).bytes).version(), 2u);
}

TEST(GgufMalformed, AbsurdCounts) {
  expect_parse_error(Raw().header(0, uint64_t(1) << 60).bytes,
                     "metadata count 1152921504606846976 is larger than the file could hold");
  expect_parse_error(Raw().header(std::numeric_limits<uint64_t>::max(), 0).bytes,
                     "tensor count 18446744073709551615 is larger than the file could hold");
  expect_parse_error(Raw()
                         .header(0, 1)
                         .str("k")
                         .u32(uint32_t(GgufType::ARRAY))
                         .u32(uint32_t(GgufType::U64))
                         .u64(uint64_t(1) << 61)
                         .bytes,
                     "element count 2305843009213693952 is larger than the file could hold");
  expect_parse_error(Raw()
                         .header(0, 1)
                         .str("k")
                         .u32(uint32_t(GgufType::ARRAY))
                         .u32(uint32_t(GgufType::STRING))
                         .u64(100)
                         .zeros(16)
                         .bytes,
                     "element count 100 is larger than the file could hold");
  expect_parse_error(Raw().header(0, 1).u64(uint64_t(1) << 62).zeros(16).bytes,
                     "truncated file: metadata entry 0 key of 4611686018427387904 bytes");
  expect_parse_error(Raw().header(0, 1).str("k").u32(uint32_t(GgufType::STRING)).u64(~uint64_t(0)).bytes,
                     "truncated file: metadata 'k' of 18446744073709551615 bytes");
}

TEST(GgufMalformed, Metadata) {
  expect_parse_error(Raw().header(0, 1).str("").u32(0).u8(0).zeros(8).bytes, "metadata entry 0: empty key");
  expect_parse_error(Raw().header(0, 2).kv_u32("a", 1).kv_u32("a", 2).bytes, "duplicate metadata key 'a'");
  expect_parse_error(Raw().header(0, 1).str("k").u32(13).u64(0).bytes, "metadata 'k': unknown value type 13");
  expect_parse_error(Raw().header(0, 1).str("k").u32(0xffffffff).u64(0).bytes, "unknown value type 4294967295");
  expect_parse_error(
      Raw().header(0, 1).str("k").u32(uint32_t(GgufType::ARRAY)).u32(uint32_t(GgufType::ARRAY)).u64(0).bytes,
      "metadata 'k': nested arrays are not supported");
  expect_parse_error(Raw().header(0, 1).str("k").u32(uint32_t(GgufType::ARRAY)).u32(77).u64(0).bytes,
                     "metadata 'k' element: unknown value type 77");
  expect_parse_error(Raw().header(0, 1).str("k").u32(uint32_t(GgufType::BOOL)).u8(2).bytes,
                     "bool value 2 is neither 0 nor 1");
  expect_parse_error(
      Raw().header(0, 1).str("k").u32(uint32_t(GgufType::ARRAY)).u32(uint32_t(GgufType::BOOL)).u64(2).u8(1).u8(7).bytes,
      "metadata 'k'[1]: bool value 7 is neither 0 nor 1");
  expect_parse_error(Raw().header(0, 1).str("k").u32(uint32_t(GgufType::U64)).u32(1).bytes,
                     "truncated file: metadata 'k' needs 8 bytes, 4 remain");
  expect_parse_error(Raw().header(0, 1).str("k").u32(uint32_t(GgufType::STRING)).u64(10).zeros(3).bytes,
                     "truncated file: metadata 'k' of 10 bytes, 3 remain");
  expect_parse_error(Raw()
                         .header(0, 1)
                         .str("k")
                         .u32(uint32_t(GgufType::ARRAY))
                         .u32(uint32_t(GgufType::STRING))
                         .u64(2)
                         .str("x")
                         .u64(50)
                         .bytes,
                     "truncated file: metadata 'k'[1] of 50 bytes");
  expect_parse_error(Raw().header(0, 1).str(std::string(kGgufMaxKeyLength + 1, 'k')).u32(0).u8(0).bytes,
                     "key of 65536 bytes is too long");
  // Names from the file are quoted with non-printable bytes escaped.
  expect_parse_error(Raw().header(0, 2).kv_u32(std::string("a\nb", 3), 1).kv_u32(std::string("a\nb", 3), 1).bytes,
                     "duplicate metadata key 'a\\x0ab'");
}

TEST(GgufMalformed, Alignment) {
  for (uint32_t bad : {0u, 3u, 48u}) {
    expect_parse_error(Raw().header(0, 1).kv_u32(gguf_keys::kAlignment, bad).bytes,
                       "general.alignment must be a u32 power of two, got u32 " + std::to_string(bad));
  }
  expect_parse_error(Raw().header(0, 1).str(gguf_keys::kAlignment).u32(uint32_t(GgufType::U64)).u64(64).bytes,
                     "general.alignment must be a u32 power of two, got u64 64");
  // With alignment 64, an offset of 32 is misaligned.
  Raw r;
  r.header(1, 1).kv_u32(gguf_keys::kAlignment, 64).tensor("a", {4}, kGgmlF32, 32).pad_to(64).zeros(64);
  expect_parse_error(r.bytes, "tensor 'a': data offset 32 is not a multiple of the alignment 64");
}

TEST(GgufMalformed, TensorDescriptors) {
  auto one_tensor = [](std::string_view name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset = 0) {
    return Raw().header(1, 0).tensor(name, std::move(ne), type, offset).pad_to(32).zeros(256).bytes;
  };
  expect_parse_error(one_tensor("", {4}, kGgmlF32), "tensor 0 has an empty name");
  expect_parse_error(one_tensor(std::string(64, 'n'), {4}, kGgmlF32), "name of 64 bytes is longer than 63");
  EXPECT_NO_THROW(GgufFile::parse(one_tensor(std::string(63, 'n'), {4}, kGgmlF32)));
  expect_parse_error(one_tensor("t", {1, 1, 1, 1, 1}, kGgmlF32), "tensor 't': n_dims 5 is outside 0..4");
  // As in ggml, no dimensions is a scalar.
  const GgufFile scalar = GgufFile::parse(one_tensor("t", {}, kGgmlF32));
  EXPECT_EQ(scalar.tensors()[0].n_dims, 0);
  EXPECT_EQ(scalar.tensors()[0].size, 4u);
  expect_parse_error(one_tensor("t", {uint64_t(1) << 63}, kGgmlF32),
                     "tensor 't': ne[0]=9223372036854775808 is out of range");
  expect_parse_error(one_tensor("t", {uint64_t(1) << 40, uint64_t(1) << 40}, kGgmlF32), "tensor 't': size overflows");
  // The bytes of dimension 0 alone overflow (2^62 f32 or f16 elements); 2^62 + 1 would wrap to 4.
  expect_parse_error(one_tensor("t", {uint64_t(1) << 62}, kGgmlF32), "tensor 't': size overflows");
  expect_parse_error(one_tensor("t", {(uint64_t(1) << 62) + 1}, kGgmlF32), "tensor 't': size overflows");
  // 2^64 - 2 bytes of f16 still fit the size: it is the bounds check that refuses them.
  expect_parse_error(one_tensor("t", {(uint64_t(1) << 63) - 1}, kGgmlF16),
                     "tensor 't': data [0, 0 + 18446744073709551614) extends past the end of the file (the data "
                     "section holds 256 bytes) (at byte 49)");
  expect_parse_error(one_tensor("t", {uint64_t(1) << 62, 4}, kGgmlF32), "tensor 't': size overflows");
  expect_parse_error(one_tensor("t", {4}, 99), "tensor 't': unknown ggml tensor type 99");
  expect_parse_error(one_tensor("t", {256}, kGgmlQ2_K), "tensor 't': unsupported ggml tensor type 10 (q2_K)");
  expect_parse_error(one_tensor("t", {33}, kGgmlQ8_0),
                     "tensor 't': ne[0]=33 is not a multiple of the q8_0 block size 32");
  expect_parse_error(one_tensor("t", {224, 2}, kGgmlQ4_K),
                     "tensor 't': ne[0]=224 is not a multiple of the q4_K block size 256");
  expect_parse_error(one_tensor("t", {4}, kGgmlF32, 8),
                     "tensor 't': data offset 8 is not a multiple of the alignment 32");
  expect_parse_error(
      Raw().header(2, 0).tensor("t", {4}, kGgmlF32, 0).tensor("t", {4}, kGgmlF32, 32).pad_to(32).zeros(64).bytes,
      "duplicate tensor name 't'");
  const std::string long_name(30, 't');
  expect_parse_error(Raw().header(1, 0).str(long_name).u32(2).u64(4).bytes,
                     "truncated file: tensor '" + long_name + "' ne[1] needs 8 bytes");
}

TEST(GgufMalformed, TensorData) {
  // 4 f32 = 16 bytes; the data section holds 16 bytes after padding.
  auto file = [](uint64_t offset_a, uint64_t offset_b, size_t data_bytes, std::vector<uint64_t> ne_b = {4}) {
    return Raw()
        .header(2, 0)
        .tensor("a", {4}, kGgmlF32, offset_a)
        .tensor("b", std::move(ne_b), kGgmlF16, offset_b)
        .pad_to(32)
        .zeros(data_bytes)
        .bytes;
  };
  // Errors point at the offending tensor's offset field: after the 24-byte header, a's name
  // (8 + 1), n_dims (4), ne[0] (8) and type (4); b's as many bytes after a's offset.
  const std::string at_a = " (at byte 49)", at_b = " (at byte 82)";
  EXPECT_NO_THROW(GgufFile::parse(file(0, 32, 40)));
  expect_parse_error(
      file(0, 32, 39),
      "tensor 'b': data [32, 32 + 8) extends past the end of the file (the data section holds 39 bytes)" + at_b);
  expect_parse_error(file(0, uint64_t(1) << 62, 64),
                     "tensor 'b': data [4611686018427387904, 4611686018427387904 + 8) extends past the end of the file "
                     "(the data section holds 64 bytes)" +
                         at_b);
  expect_parse_error(file(~uint64_t(31), 0, 64),
                     "tensor 'a': data [18446744073709551584, 18446744073709551584 + 16) extends past the end of the "
                     "file (the data section holds 64 bytes)" +
                         at_a);
  // An overlap is the fault of the tensor that starts inside the other.
  expect_parse_error(file(32, 0, 64, {32}), "tensors 'b' [0, 64) and 'a' [32, 48) overlap" + at_a);
  expect_parse_error(file(0, 0, 64), "tensors 'a' [0, 16) and 'b' [0, 8) overlap" + at_b);
  // No data section at all.
  expect_parse_error(
      Raw().header(1, 0).tensor("a", {4}, kGgmlF32, 0).bytes,
      "tensor 'a': data [0, 0 + 16) extends past the end of the file (the data section holds 0 bytes)" + at_a);
  // Empty tensors occupy nothing and may share an offset.
  EXPECT_NO_THROW(GgufFile::parse(file(0, 0, 64, {0})));
}

TEST(GgufMalformed, EveryTruncationFailsCleanly) {
  const auto tensors = every_tensor_type();
  const std::vector<uint8_t> bytes = writer_with_everything(tensors, 32).to_bytes();
  const GgufFile whole = GgufFile::parse(bytes);
  uint64_t data_end = 0;
  for (const GgufTensorInfo& t : whole.tensors())
    data_end = std::max(data_end, whole.data_offset() + t.offset + t.size);
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + long(n));
    if (n < data_end) {
      EXPECT_THROW(GgufFile::parse(prefix), Error) << "prefix of " << n << " bytes";
    } else {
      EXPECT_NO_THROW(GgufFile::parse(prefix)) << "prefix of " << n << " bytes only loses padding";
    }
  }
}

TEST(GgufMalformed, RandomCorruptionNeverCrashes) {
  // Flipped bytes anywhere: either still a valid file or a tg::Error, never a crash or an
  // out-of-bounds read (the sanitizer build checks the latter).
  const auto tensors = every_tensor_type();
  const std::vector<uint8_t> bytes = writer_with_everything(tensors, 32).to_bytes();
  const size_t structure_end = size_t(GgufFile::parse(bytes).data_offset());
  std::mt19937 rng(11);
  int errors = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> corrupt = bytes;
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Mostly the header, metadata and descriptors, where the structure is.
      const size_t limit = rng() % 4 ? structure_end : corrupt.size();
      corrupt[rng() % limit] = uint8_t(rng());
    }
    try {
      GgufFile::parse(corrupt);
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 300) << "corrupted counts, lengths and types must be detected";
}

TEST(GgufOpen, ReportsMissingAndNonRegularFiles) {
  try {
    GgufFile::open("/nonexistent/dir/model.gguf");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open '/nonexistent/dir/model.gguf': No such file or directory"),
              std::string::npos)
        << e.what();
  }
  try {
    GgufFile::open(std::filesystem::temp_directory_path().string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
  }
  const std::string empty = temp_path("empty.gguf");
  std::fclose(std::fopen(empty.c_str(), "wb"));
  try {
    GgufFile::open(empty);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated file: magic"), std::string::npos) << e.what();
  }
  std::filesystem::remove(empty);
}

}  // namespace
}  // namespace tg::model
