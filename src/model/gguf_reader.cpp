// GgufFile: maps a GGUF file and checks every field before trusting it. Counts are compared with
// the bytes left before anything is reserved, so a hostile count cannot make us allocate more
// than the file's own size justifies.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>

#include "printable.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/input_file.h"
#include "tilegraph/model/gguf.h"

namespace tg::model {

struct GgufFile::Mapping {
  void* address = nullptr;  // from mmap, or null for bytes held in `memory`
  size_t length = 0;
  std::vector<uint8_t> memory;

  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (address) munmap(address, length);
  }
};

namespace {

// Smallest encodings, used to bound counts by the bytes that remain.
constexpr uint64_t kMinKeyValueBytes = 8 + 1 + 4 + 1;        // key length, 1-byte key, type, u8
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 4 + 8;  // name length, name, n_dims (0: no ne), type, offset

uint64_t element_bytes(GgufType type) {
  switch (type) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::BOOL: return 1;
    case GgufType::U16:
    case GgufType::I16: return 2;
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::F32: return 4;
    case GgufType::U64:
    case GgufType::I64:
    case GgufType::F64: return 8;
    case GgufType::STRING: return 8;  // at least its length field
    case GgufType::ARRAY: return 12;  // at least its element type and count
  }
  return 1;
}

std::string quoted(std::string_view name) { return printable(name, '\''); }

// A bounded reader over the file's bytes; every read checks the bytes left first.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size, const std::string& source) : data_(data), size_(size), source_(source) {}

  uint64_t position() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }

  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }
  // For a problem found after the field that causes it was read.
  [[noreturn]] void fail_at(uint64_t position, const std::string& what) const {
    throw Error("gguf: " + source_ + ": " + what + " (at byte " + std::to_string(position) + ")");
  }

  // `what` names the field in errors: a string, or a function making one, for labels that cost
  // more to build than the read (array elements) and are only needed when it fails.
  template <class T, class Label>
  T read(const Label& what) {
    if (remaining() < sizeof(T)) {
      fail("truncated file: " + text(what) + " needs " + std::to_string(sizeof(T)) + " bytes, " +
           std::to_string(remaining()) + " remain");
    }
    T value;
    std::memcpy(&value, data_ + pos_, sizeof value);
    pos_ += sizeof value;
    return value;
  }

  template <class Label>
  std::string read_string(const Label& what) {
    const uint64_t length = read<uint64_t>([&] { return text(what) + " length"; });
    if (length > remaining()) {
      fail("truncated file: " + text(what) + " of " + std::to_string(length) + " bytes, " +
           std::to_string(remaining()) + " remain");
    }
    std::string s(reinterpret_cast<const char*>(data_ + pos_), size_t(length));
    pos_ += length;
    return s;
  }

  template <class Label>
  static std::string text(const Label& what) {
    if constexpr (std::is_invocable_v<Label>) {
      return what();
    } else {
      return std::string(what);
    }
  }

  // Fails unless `count` elements of at least `min_bytes` each can fit in what remains.
  void check_count(uint64_t count, uint64_t min_bytes, const std::string& what) const {
    if (count > remaining() / min_bytes) {
      fail(what + " count " + std::to_string(count) + " is larger than the file could hold (" +
           std::to_string(remaining()) + " bytes remain)");
    }
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string& source_;
};

template <class T>
GgufValue read_array_of(Cursor& in, uint64_t count, const std::string& what) {
  std::vector<T> values;
  values.reserve(size_t(count));  // bounded by the bytes left: check_count ran first
  for (uint64_t i = 0; i < count; ++i) {
    const auto element = [&] { return what + "[" + std::to_string(i) + "]"; };
    if constexpr (std::is_same_v<T, std::string>) {
      values.push_back(in.read_string(element));
    } else if constexpr (std::is_same_v<T, bool>) {
      const uint8_t b = in.read<uint8_t>(element);
      if (b > 1) in.fail(element() + ": bool value " + std::to_string(b) + " is neither 0 nor 1");
      values.push_back(b != 0);
    } else {
      values.push_back(in.read<T>(element));
    }
  }
  return GgufValue(std::move(values));
}

GgufType read_type(Cursor& in, const std::string& what) {
  const uint32_t type = in.read<uint32_t>(what + " type");
  if (type >= kGgufTypeCount) in.fail(what + ": unknown value type " + std::to_string(type));
  return GgufType(type);
}

GgufValue read_value(Cursor& in, GgufType type, const std::string& what) {
  switch (type) {
    case GgufType::U8: return in.read<uint8_t>(what);
    case GgufType::I8: return in.read<int8_t>(what);
    case GgufType::U16: return in.read<uint16_t>(what);
    case GgufType::I16: return in.read<int16_t>(what);
    case GgufType::U32: return in.read<uint32_t>(what);
    case GgufType::I32: return in.read<int32_t>(what);
    case GgufType::F32: return in.read<float>(what);
    case GgufType::U64: return in.read<uint64_t>(what);
    case GgufType::I64: return in.read<int64_t>(what);
    case GgufType::F64: return in.read<double>(what);
    case GgufType::BOOL: {
      const uint8_t b = in.read<uint8_t>(what);
      if (b > 1) in.fail(what + ": bool value " + std::to_string(b) + " is neither 0 nor 1");
      return b != 0;
    }
    case GgufType::STRING: return in.read_string(what);
    case GgufType::ARRAY: {
      const GgufType element = read_type(in, what + " element");
      if (element == GgufType::ARRAY) in.fail(what + ": nested arrays are not supported");
      const uint64_t count = in.read<uint64_t>(what + " element count");
      in.check_count(count, element_bytes(element), what + " element");
      switch (element) {
        case GgufType::U8: return read_array_of<uint8_t>(in, count, what);
        case GgufType::I8: return read_array_of<int8_t>(in, count, what);
        case GgufType::U16: return read_array_of<uint16_t>(in, count, what);
        case GgufType::I16: return read_array_of<int16_t>(in, count, what);
        case GgufType::U32: return read_array_of<uint32_t>(in, count, what);
        case GgufType::I32: return read_array_of<int32_t>(in, count, what);
        case GgufType::F32: return read_array_of<float>(in, count, what);
        case GgufType::BOOL: return read_array_of<bool>(in, count, what);
        case GgufType::STRING: return read_array_of<std::string>(in, count, what);
        case GgufType::U64: return read_array_of<uint64_t>(in, count, what);
        case GgufType::I64: return read_array_of<int64_t>(in, count, what);
        case GgufType::F64: return read_array_of<double>(in, count, what);
        case GgufType::ARRAY: break;
      }
      break;
    }
  }
  in.fail(what + ": unknown value type " + std::to_string(uint32_t(type)));
}

// Bytes of a tensor, or false when the size overflows. ne[0] is a whole number of blocks.
bool tensor_bytes(DType type, const std::array<int64_t, kMaxDims>& ne, uint64_t* bytes) {
  const DTypeTraits& traits = dtype_traits(type);
  const uint64_t blocks = uint64_t(ne[0]) / traits.block_size;
  if (blocks > std::numeric_limits<uint64_t>::max() / traits.type_size) return false;
  uint64_t total = blocks * traits.type_size;
  for (int d = 1; d < kMaxDims; ++d) {
    if (ne[d] != 0 && total > std::numeric_limits<uint64_t>::max() / uint64_t(ne[d])) return false;
    total *= uint64_t(ne[d]);
  }
  *bytes = total;
  return true;
}

}  // namespace

GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

GgufFile GgufFile::open(const std::string& path, Access access) {
  GgufFile file;
  file.source_ = path;
  const InputFile input = InputFile::open(path, "gguf");
  const int fd = input.fd();
  file.mapping_ = std::make_unique<Mapping>();
  if (access == Access::kRead) {
    std::vector<uint8_t>& bytes = file.mapping_->memory;
    bytes.resize(size_t(input.size()));
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        throw Error("gguf: cannot read '" + path +
                    "': " + (n < 0 ? std::strerror(errno) : "it shrank while being read"));
      }
      done += size_t(n);
    }
    file.bytes_ = bytes.data();
    file.size_ = bytes.size();
  } else if (input.size() > 0) {
    void* address = mmap(nullptr, size_t(input.size()), PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) throw Error("gguf: cannot map '" + path + "': " + std::strerror(errno));
    file.mapping_->address = address;
    file.mapping_->length = size_t(input.size());
    file.bytes_ = static_cast<const uint8_t*>(address);
    file.size_ = input.size();
  }
  file.parse_contents();
  return file;
}

GgufFile GgufFile::parse(std::vector<uint8_t> bytes, const std::string& source) {
  GgufFile file;
  file.source_ = source;
  file.mapping_ = std::make_unique<Mapping>();
  file.mapping_->memory = std::move(bytes);
  file.bytes_ = file.mapping_->memory.data();
  file.size_ = file.mapping_->memory.size();
  file.parse_contents();
  return file;
}

void GgufFile::parse_contents() {
  Cursor in(bytes_, size_, source_);

  // Header.
  const uint32_t magic = in.read<uint32_t>("magic");
  if (magic != kGgufMagic) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", magic);
    throw Error("gguf: " + source_ + ": bad magic " + buf + ": not a GGUF file (expected \"GGUF\")");
  }
  version_ = in.read<uint32_t>("version");
  if (__builtin_bswap32(version_) == 2 || __builtin_bswap32(version_) == 3) {
    in.fail("big-endian GGUF file (version field " + std::to_string(version_) +
            "); only little-endian files are supported");
  }
  if (version_ != 2 && version_ != 3) {
    in.fail("unsupported GGUF version " + std::to_string(version_) + " (supported: 2 and 3)");
  }
  const uint64_t n_tensors = in.read<uint64_t>("tensor count");
  const uint64_t n_kv = in.read<uint64_t>("metadata count");
  in.check_count(n_kv, kMinKeyValueBytes, "metadata");

  // Metadata.
  metadata_.reserve(size_t(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string where = "metadata entry " + std::to_string(i);
    std::string key = in.read_string(where + " key");
    if (key.empty()) in.fail(where + ": empty key");
    if (key.size() > kGgufMaxKeyLength)
      in.fail(where + ": key of " + std::to_string(key.size()) + " bytes is too long");
    if (key_index_.count(key)) in.fail("duplicate metadata key " + quoted(key));
    const std::string what = "metadata " + quoted(key);
    const GgufType type = read_type(in, what);
    GgufValue value = read_value(in, type, what);
    key_index_.emplace(key, metadata_.size());
    metadata_.emplace_back(std::move(key), std::move(value));
  }
  if (const GgufValue* a = find(gguf_keys::kAlignment)) {
    if (a->type() != GgufType::U32 || a->get<uint32_t>() == 0 || !std::has_single_bit(a->get<uint32_t>())) {
      in.fail(std::string(gguf_keys::kAlignment) + " must be a u32 power of two, got " + a->describe());
    }
    alignment_ = a->get<uint32_t>();
  }

  // Tensor descriptors.
  in.check_count(n_tensors, kMinTensorInfoBytes, "tensor");
  tensors_.reserve(size_t(n_tensors));
  // Where each tensor's offset field is: its data is checked once the data section's start is
  // known, and an error points there.
  std::vector<uint64_t> offset_fields;
  offset_fields.reserve(size_t(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = in.read_string("tensor " + std::to_string(i) + " name");
    if (t.name.empty()) in.fail("tensor " + std::to_string(i) + " has an empty name");
    const std::string what = "tensor " + quoted(t.name);
    if (t.name.size() > kGgufMaxTensorName) {
      in.fail(what + ": name of " + std::to_string(t.name.size()) + " bytes is longer than " +
              std::to_string(kGgufMaxTensorName));
    }
    if (tensor_index_.count(t.name)) in.fail("duplicate tensor name " + quoted(t.name));
    const uint32_t n_dims = in.read<uint32_t>(what + " n_dims");
    // ggml reads 0 dimensions as a scalar (every ne 1).
    if (n_dims > uint32_t(kMaxDims)) {
      in.fail(what + ": n_dims " + std::to_string(n_dims) + " is outside 0.." + std::to_string(kMaxDims));
    }
    t.n_dims = int(n_dims);
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne = in.read<uint64_t>(what + " ne[" + std::to_string(d) + "]");
      if (ne > uint64_t(std::numeric_limits<int64_t>::max())) {
        in.fail(what + ": ne[" + std::to_string(d) + "]=" + std::to_string(ne) + " is out of range");
      }
      t.ne[d] = int64_t(ne);
    }
    const uint32_t ggml_type = in.read<uint32_t>(what + " type");
    try {
      t.type = dtype_from_ggml(ggml_type);
    } catch (const Error& e) {
      in.fail(what + ": " + e.what());
    }
    const size_t block = dtype_traits(t.type).block_size;
    if (t.ne[0] % int64_t(block) != 0) {
      in.fail(what + ": ne[0]=" + std::to_string(t.ne[0]) + " is not a multiple of the " +
              std::string(dtype_name(t.type)) + " block size " + std::to_string(block));
    }
    if (!tensor_bytes(t.type, t.ne, &t.size)) in.fail(what + ": size overflows");
    offset_fields.push_back(in.position());
    t.offset = in.read<uint64_t>(what + " data offset");
    if (t.offset % alignment_ != 0) {
      in.fail(what + ": data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
              std::to_string(alignment_));
    }
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
  }

  // Tensor data: inside the file and not overlapping.
  const uint64_t end_of_infos = in.position();
  data_offset_ = (end_of_infos + alignment_ - 1) / alignment_ * alignment_;
  const uint64_t data_bytes = data_offset_ <= size_ ? size_ - data_offset_ : 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const GgufTensorInfo& t = tensors_[i];
    if (t.offset > data_bytes || t.size > data_bytes - t.offset) {
      in.fail_at(offset_fields[i], "tensor " + quoted(t.name) + ": data [" + std::to_string(t.offset) + ", " +
                                       std::to_string(t.offset) + " + " + std::to_string(t.size) +
                                       ") extends past the end of the file (the data section holds " +
                                       std::to_string(data_bytes) + " bytes)");
    }
    if ((data_offset_ + t.offset) % tensor_data_alignment(t.type) != 0) {
      throw Error("gguf: " + source_ + ": tensor " + quoted(t.name) + ": " + std::string(dtype_name(t.type)) +
                  " data starting at byte " + std::to_string(data_offset_ + t.offset) + " is not aligned to " +
                  std::to_string(tensor_data_alignment(t.type)) + " bytes (general.alignment " +
                  std::to_string(alignment_) + ")");
    }
  }
  std::vector<size_t> order(tensors_.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tensors_[a].offset < tensors_[b].offset; });
  const GgufTensorInfo* previous = nullptr;
  for (size_t index : order) {
    const GgufTensorInfo& t = tensors_[index];
    if (t.size == 0) continue;
    if (previous && previous->offset + previous->size > t.offset) {
      in.fail_at(offset_fields[index], "tensors " + quoted(previous->name) + " [" + std::to_string(previous->offset) +
                                           ", " + std::to_string(previous->offset + previous->size) + ") and " +
                                           quoted(t.name) + " [" + std::to_string(t.offset) + ", " +
                                           std::to_string(t.offset + t.size) + ") overlap");
    }
    previous = &t;
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = key_index_.find(std::string(key));
  return it == key_index_.end() ? nullptr : &metadata_[it->second].second;
}

const GgufValue& GgufFile::get(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) throw Error("gguf: " + source_ + ": missing metadata key '" + std::string(key) + "'");
  return *v;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace tg::model
