// The GGUF reader against malformed files: a fixed-seed mutation fuzzer over small generated
// models (a SentencePiece and a byte-level BPE vocabulary). Each mutant is a truncation, flipped
// bytes, or one of the file's own counts, lengths, types, dimensions or offsets replaced by a
// hostile value; each must load (file, configuration, vocabulary and model) or fail with a
// tg::Error — never crash, throw anything else, or allocate beyond a limit. The libFuzzer targets
// in tests/fuzz (make fuzz) search the same ground without a fixed budget.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/vocab.h"

namespace tg::model {
namespace {

constexpr int kMutantsPerFile = 200;

std::vector<uint8_t> small_model(const Vocab& vocab) {
  LlamaConfig c;
  c.n_vocab = vocab.size();
  c.n_ctx_train = 64;
  c.n_embd = 32;
  c.n_layer = 1;
  c.n_ff = 64;
  c.n_head = 4;
  c.n_head_kv = 2;
  return LlamaModel::generate_gguf(c, WeightTypes::all(DType::Q8_0), 7, "mutant", vocab).to_bytes();
}

// A field of the file that holds a count, a length, a type, a dimension or an offset.
struct Field {
  size_t offset;
  size_t width;  // 4 or 8
};

// Walks the file's layout (GGUF v3: header, key-value pairs, tensor infos) and lists its fields.
class FieldWalker {
 public:
  explicit FieldWalker(const std::vector<uint8_t>& bytes) : b_(bytes) {}

  std::vector<Field> walk() {
    at_ = 8;
    const uint64_t n_tensors = u64();
    const uint64_t n_kv = u64();
    for (uint64_t i = 0; i < n_kv; ++i) {
      string();
      value(uint32_t(u32()));
    }
    for (uint64_t i = 0; i < n_tensors; ++i) {
      string();
      const uint32_t n_dims = u32();
      for (uint32_t d = 0; d < n_dims; ++d) u64();
      u32();  // type
      u64();  // offset
    }
    return fields_;
  }

 private:
  uint64_t read(size_t width) {
    uint64_t v = 0;
    std::memcpy(&v, b_.data() + at_, width);
    fields_.push_back({at_, width});
    at_ += width;
    return v;
  }
  uint64_t u64() { return read(8); }
  uint32_t u32() { return uint32_t(read(4)); }
  void string() { at_ += u64(); }
  void value(uint32_t type) {
    switch (GgufType(type)) {
      case GgufType::STRING: string(); return;
      case GgufType::ARRAY: {
        const uint32_t element = u32();
        const uint64_t n = u64();
        // Long arrays of scalars are skipped whole; their elements hold no structure.
        if (GgufType(element) != GgufType::STRING && GgufType(element) != GgufType::ARRAY) {
          at_ += n * scalar_size(element);
          return;
        }
        for (uint64_t i = 0; i < n; ++i) value(element);
        return;
      }
      default: at_ += scalar_size(type);
    }
  }
  static size_t scalar_size(uint32_t type) {
    switch (GgufType(type)) {
      case GgufType::U8:
      case GgufType::I8:
      case GgufType::BOOL: return 1;
      case GgufType::U16:
      case GgufType::I16: return 2;
      case GgufType::U32:
      case GgufType::I32:
      case GgufType::F32: return 4;
      default: return 8;
    }
  }

  const std::vector<uint8_t>& b_;
  size_t at_ = 0;
  std::vector<Field> fields_;
};

std::vector<uint8_t> mutate(const std::vector<uint8_t>& original, const std::vector<Field>& fields,
                            std::mt19937_64& rng) {
  std::vector<uint8_t> m = original;
  auto pick = [&](uint64_t n) { return uint64_t(rng() % n); };
  switch (pick(4)) {
    case 0:  // truncated anywhere
      m.resize(size_t(pick(m.size())));
      break;
    case 1:  // a few bytes flipped
      for (uint64_t i = 0, n = 1 + pick(8); i < n; ++i) m[size_t(pick(m.size()))] ^= uint8_t(1 + pick(255));
      break;
    default: {  // a structural field set to a hostile value
      const Field& f = fields[size_t(pick(fields.size()))];
      const uint64_t size = m.size();
      const uint64_t hostile[] = {0,
                                  1,
                                  2,
                                  7,
                                  13,
                                  255,
                                  1u << 16,
                                  0x7fffffff,
                                  0x80000000,
                                  0xffffffff,
                                  uint64_t(1) << 32,
                                  uint64_t(1) << 40,
                                  uint64_t(1) << 62,
                                  uint64_t(1) << 63,
                                  UINT64_MAX,
                                  UINT64_MAX - 7,
                                  size,
                                  size - 1,
                                  size + 1,
                                  pick(size),
                                  pick(64)};
      uint64_t value = hostile[pick(std::size(hostile))];
      std::memcpy(m.data() + f.offset, &value, f.width);
    }
  }
  return m;
}

// Everything a command does with a model file before it runs it.
void load_everything(std::vector<uint8_t> bytes) {
  const GgufFile file = GgufFile::parse(std::move(bytes), "mutant.gguf");
  llama_config_from_gguf(file);
  if (const std::optional<Vocab> vocab = Vocab::from_gguf(file)) {
    const std::vector<int32_t> ids = vocab->encode("Hello <s>world</s> \xff", true);
    vocab->decode(ids);
  }
  LlamaModel::from_gguf(file);
}

// Runs the mutants in a child process under an address-space limit, so that a huge allocation
// fails there (as std::bad_alloc, which counts as a failure) and a crash ends only the child.
// Returns the failures, one per line, or what ended the child.
std::string run_mutants(const std::vector<uint8_t>& original, uint64_t seed) {
  int report[2];
  if (::pipe(report) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(report[0]);
#if !defined(__SANITIZE_ADDRESS__)
    // The test program's own mappings plus 1 GiB: a file of ~20 KiB needs a few MiB.
    rlimit limit{};
    ::getrlimit(RLIMIT_AS, &limit);
    std::ifstream status("/proc/self/statm");
    uint64_t pages = 0;
    status >> pages;
    limit.rlim_cur = pages * uint64_t(::sysconf(_SC_PAGESIZE)) + (uint64_t(1) << 30);
    ::setrlimit(RLIMIT_AS, &limit);
#endif
    const std::vector<Field> fields = FieldWalker(original).walk();
    std::mt19937_64 rng(seed);
    std::string failures;
    int loaded = 0;
    for (int i = 0; i < kMutantsPerFile; ++i) {
      std::vector<uint8_t> m = mutate(original, fields, rng);
      try {
        load_everything(std::move(m));
        ++loaded;
      } catch (const Error&) {
        // a clean refusal
      } catch (const std::exception& e) {
        failures += "mutant " + std::to_string(i) + ": not a tg::Error: " + e.what() + "\n";
      }
    }
    // Some mutants (a flipped weight byte) still load; none loading would mean every mutant was
    // refused for one reason, such as a broken original.
    if (loaded == 0) failures += "no mutant loaded\n";
    [[maybe_unused]] const ssize_t written = ::write(report[1], failures.data(), failures.size());
    ::_exit(0);
  }
  ::close(report[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(report[0], buffer, sizeof buffer)) > 0;) out.append(buffer, size_t(n));
  ::close(report[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out += "the child ended with status " + std::to_string(status);
    if (WIFSIGNALED(status)) out += std::string(" (") + strsignal(WTERMSIG(status)) + ")";
  }
  return out;
}

TEST(GgufMutations, EveryMutantLoadsOrFailsWithAnError) {
  EXPECT_EQ(run_mutants(small_model(Vocab::minimal_sentencepiece(300)), 1), "");
  EXPECT_EQ(run_mutants(small_model(Vocab::minimal_qwen2(320)), 2), "");
}

// The original files load, and the walker finds their structure: the mutants aim at real fields.
TEST(GgufMutations, TheOriginalsLoadAndTheirFieldsAreFound) {
  for (const Vocab& vocab : {Vocab::minimal_sentencepiece(300), Vocab::minimal_qwen2(320)}) {
    const std::vector<uint8_t> bytes = small_model(vocab);
    EXPECT_NO_THROW(load_everything(bytes));
    const std::vector<Field> fields = FieldWalker(bytes).walk();
    EXPECT_GT(fields.size(), 50u);
    EXPECT_LE(fields.back().offset + fields.back().width, bytes.size());
  }
}

}  // namespace
}  // namespace tg::model
