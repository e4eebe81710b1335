#pragma once
// GGUF v3 files (the llama.cpp / ggml model format): a header, typed key-value metadata, tensor
// descriptors, then the tensor data, each tensor at an offset aligned to `general.alignment`.
// The reader validates every count, length, type and offset against the file before using it,
// so a malformed or hostile file gives a tg::Error naming the problem — never a crash, an
// out-of-bounds read or an allocation larger than the file justifies. Little-endian only.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "tilegraph/core/dtype.h"
#include "tilegraph/core/tensor.h"
#include "tilegraph/model/gguf_keys.h"

namespace tg::model {

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr uint32_t kGgufVersion = 3;
inline constexpr uint32_t kGgufDefaultAlignment = 32;
inline constexpr size_t kGgufMaxKeyLength = 65535;          // the GGUF specification's bound
inline constexpr size_t kGgufMaxTensorName = kMaxName - 1;  // ggml's GGML_MAX_NAME with its NUL

// Metadata value types, numbered as in the file.
enum class GgufType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
inline constexpr uint32_t kGgufTypeCount = 13;
std::string_view gguf_type_name(GgufType type);

// ggml tensor type ids of the dtypes tilegraph reads and writes (f32 0, f16 1, q4_0 2, q4_1 3,
// q5_0 6, q5_1 7, q8_0 8, q4_K 12, q5_K 13, q6_K 14, i32 26, bf16 30). dtype_from_ggml throws for
// any other id, naming the ggml type when it is a known one.
uint32_t ggml_type_id(DType type);
DType dtype_from_ggml(uint32_t id);
// Where a tensor's data may start in the file: a multiple of its widest scalar (quantized types:
// their f16 scales), since tensors are used in place from the mapping. `general.alignment`
// values below that do not guarantee it: the writer places tensors so that it holds, the reader
// refuses a tensor where it does not.
uint64_t tensor_data_alignment(DType type);

template <class T>
struct GgufTypeOf;
template <>
struct GgufTypeOf<uint8_t> {
  static constexpr GgufType value = GgufType::U8;
};
template <>
struct GgufTypeOf<int8_t> {
  static constexpr GgufType value = GgufType::I8;
};
template <>
struct GgufTypeOf<uint16_t> {
  static constexpr GgufType value = GgufType::U16;
};
template <>
struct GgufTypeOf<int16_t> {
  static constexpr GgufType value = GgufType::I16;
};
template <>
struct GgufTypeOf<uint32_t> {
  static constexpr GgufType value = GgufType::U32;
};
template <>
struct GgufTypeOf<int32_t> {
  static constexpr GgufType value = GgufType::I32;
};
template <>
struct GgufTypeOf<float> {
  static constexpr GgufType value = GgufType::F32;
};
template <>
struct GgufTypeOf<bool> {
  static constexpr GgufType value = GgufType::BOOL;
};
template <>
struct GgufTypeOf<std::string> {
  static constexpr GgufType value = GgufType::STRING;
};
template <>
struct GgufTypeOf<uint64_t> {
  static constexpr GgufType value = GgufType::U64;
};
template <>
struct GgufTypeOf<int64_t> {
  static constexpr GgufType value = GgufType::I64;
};
template <>
struct GgufTypeOf<double> {
  static constexpr GgufType value = GgufType::F64;
};

template <class T>
concept GgufElement = requires {
  GgufTypeOf<T>::value;
};

// One metadata value: a scalar, a string, or an array of scalars or strings (arrays of arrays
// are not supported, as in ggml).
class GgufValue {
 public:
  template <GgufElement T>
  GgufValue(T value) : storage_(std::move(value)) {}
  GgufValue(const char* value) : storage_(std::string(value)) {}
  GgufValue(std::string_view value) : storage_(std::string(value)) {}
  template <GgufElement T>
  GgufValue(std::vector<T> values) : storage_(std::move(values)) {}

  GgufType type() const;          // ARRAY for arrays
  GgufType element_type() const;  // the type of an array's elements, or type() for a scalar
  bool is_array() const { return type() == GgufType::ARRAY; }
  size_t array_size() const;  // 0 for a scalar

  // The value as exactly T; a different type throws tg::Error naming both types.
  template <GgufElement T>
  const T& get() const {
    if (const T* v = std::get_if<T>(&storage_)) return *v;
    type_mismatch(GgufTypeOf<T>::value, false);
  }
  template <GgufElement T>
  const std::vector<T>& get_array() const {
    if (const auto* v = std::get_if<std::vector<T>>(&storage_)) return *v;
    type_mismatch(GgufTypeOf<T>::value, true);
  }
  // Any integer scalar type, as int64 (a u64 above INT64_MAX throws).
  int64_t to_int() const;
  // f32 or f64.
  double to_float() const;
  // "u32 7", "string \"llama\"", "array of 32000 string" for messages and `tilegraph` output.
  std::string describe() const;

  bool operator==(const GgufValue& other) const = default;

 private:
  [[noreturn]] void type_mismatch(GgufType wanted, bool array) const;

  std::variant<std::vector<uint8_t>, std::vector<int8_t>, std::vector<uint16_t>, std::vector<int16_t>,
               std::vector<uint32_t>, std::vector<int32_t>, std::vector<float>, std::vector<bool>,
               std::vector<std::string>, std::vector<uint64_t>, std::vector<int64_t>, std::vector<double>, uint8_t,
               int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string, uint64_t, int64_t, double>
      storage_;
};

struct GgufTensorInfo {
  std::string name;
  DType type = DType::F32;
  int n_dims = 1;                                   // 0..4; ggml files may hold 0 for a scalar
  std::array<int64_t, kMaxDims> ne = {1, 1, 1, 1};  // dims past n_dims are 1
  uint64_t offset = 0;                              // from the start of the data section; a multiple of the alignment
  uint64_t size = 0;                                // bytes
};

// A GGUF file opened for reading. open() maps the file read-only, or reads it into memory;
// tensor_data() points into those bytes, which live as long as the GgufFile (tensors built over
// it must not outlive it).
class GgufFile {
 public:
  enum class Access {
    kMap,   // mmap: no copy, pages loaded on use; changing the file in place while it is used
            // gives SIGBUS (replacing it by rename is safe)
    kRead,  // read whole into memory: costs the file's size in RAM, then independent of the file
  };
  static GgufFile open(const std::string& path, Access access = Access::kMap);
  // Parses bytes held in memory (`source` names them in errors).
  static GgufFile parse(std::vector<uint8_t> bytes, const std::string& source = "<memory>");

  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  ~GgufFile();

  const std::string& source() const { return source_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // where the data section starts
  uint64_t file_size() const { return size_; }

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(std::string_view key) const;
  // The value of `key`; a missing key throws tg::Error naming it and the file.
  const GgufValue& get(std::string_view key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  // Null for an empty tensor.
  const void* tensor_data(const GgufTensorInfo& info) const {
    return info.size ? bytes_ + data_offset_ + info.offset : nullptr;
  }

 private:
  struct Mapping;
  GgufFile() = default;
  void parse_contents();

  std::string source_;
  std::unique_ptr<Mapping> mapping_;  // owns the bytes, mapped or in memory
  const uint8_t* bytes_ = nullptr;
  uint64_t size_ = 0;
  uint32_t version_ = 0;
  uint32_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::unordered_map<std::string, size_t> key_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

// Builds a GGUF v3 file: metadata in the order set, tensors in the order added, each tensor's
// data aligned to `general.alignment` (32 unless that key is set).
class GgufWriter {
 public:
  // Takes a tensor's bytes in order, in pieces of any size.
  using ByteSink = std::function<void(const void* data, size_t bytes)>;
  // Gives a tensor's bytes to the sink, called when the file is written.
  using TensorSource = std::function<void(const ByteSink& sink)>;

  // A duplicate key throws; general.alignment must be a u32 power of two.
  void set(std::string key, GgufValue value);
  // `data` holds the tensor's bytes in ggml order (row_size(type, ne[0]) * ne[1] * ...) and must
  // stay valid until the file is written.
  void add_tensor(std::string name, DType type, std::span<const int64_t> ne, const void* data);
  // A tensor with contiguous data, its shape trimmed to its last dimension above 1.
  void add_tensor(std::string name, const Tensor& tensor);
  // A tensor of `shape`'s type and dimensions (trimmed as above; its data is not used) whose
  // bytes `source` gives as the file is written, so that it never has to be in memory whole. A
  // source that gives more or fewer bytes than the tensor's size makes the write throw.
  void add_tensor(std::string name, const Tensor& shape, TensorSource source);

  // The size of the file to_bytes() and write_file() produce.
  uint64_t file_size() const;
  std::vector<uint8_t> to_bytes() const;
  // Writes to `path`, replacing a regular file there (it keeps its permissions): the bytes go to
  // a new file beside it (unnamed until complete where the file system allows, so not even
  // SIGKILL leaves it behind), synced and then renamed into place, so a failed write or a crash
  // leaves the old file or the whole new one, and concurrent writers each publish a whole file.
  // check_destination() runs first, then a file system without file_size() bytes available (the
  // old file, if any, still holding its own) is refused before anything is written.
  void write_file(const std::string& path) const;
  // Throws tg::Error unless `path` is writable by write_file: absent or a regular file (not a
  // symbolic link, directory or device), in an existing directory this process may write. For
  // callers that want to refuse a bad path before spending time on the contents.
  static void check_destination(const std::string& path);
  // Makes SIGINT, SIGTERM and SIGHUP remove the temporary of a write_file in progress before the
  // process dies of them, where those signals still have their default action. For command-line
  // tools; a program with its own handlers keeps them (its own cleanup then owns the question).
  static void remove_temporaries_on_signals();

 private:
  struct PendingTensor {
    GgufTensorInfo info;
    const void* data;     // the bytes, or null for a source's
    TensorSource source;  // empty for data held in memory
  };
  // Where the data section starts, each tensor's offset in it, and the file's size.
  struct Layout {
    uint64_t data_start = 0;
    std::vector<uint64_t> offsets;
    uint64_t file_size = 0;
  };
  void add_pending(std::string name, DType type, std::span<const int64_t> ne, const void* data, TensorSource source);
  template <class Sink>
  void write_metadata(Sink& sink) const;  // the header and the key-value pairs
  Layout layout() const;
  template <class Sink>
  void write(Sink& sink) const;

  uint32_t alignment_ = kGgufDefaultAlignment;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<PendingTensor> tensors_;
  std::unordered_map<std::string, size_t> key_index_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace tg::model
