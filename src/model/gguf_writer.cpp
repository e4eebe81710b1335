// GgufWriter: header, metadata, tensor descriptors, then each tensor's data at an aligned offset.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>

#include "temporary_files.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf.h"

namespace tg::model {

namespace {

uint64_t align_up(uint64_t n, uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

// Sinks count what they have written, so the writer can pad to the alignment.
struct CountingSink {
  uint64_t written = 0;
  void put(const void*, size_t n) { written += n; }
};

struct VectorSink {
  std::vector<uint8_t>& out;
  uint64_t written = 0;
  void put(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    out.insert(out.end(), p, p + n);
    written += n;
  }
};

struct FileSink {
  std::FILE* file;
  const std::string& path;
  uint64_t written = 0;
  void put(const void* data, size_t n) {
    if (n && std::fwrite(data, 1, n, file) != n) {
      throw Error("gguf: writing '" + path + "' failed: " + std::strerror(errno));
    }
    written += n;
  }
};

template <class Sink, class T>
void put_scalar(Sink& sink, T value) {
  sink.put(&value, sizeof value);
}

template <class Sink>
void put_string(Sink& sink, const std::string& s) {
  put_scalar(sink, uint64_t(s.size()));
  sink.put(s.data(), s.size());
}

template <class Sink, class T>
void put_element(Sink& sink, const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    put_string(sink, value);
  } else if constexpr (std::is_same_v<T, bool>) {
    put_scalar(sink, uint8_t(value ? 1 : 0));
  } else {
    put_scalar(sink, value);
  }
}

template <class Sink, class T>
void put_array(Sink& sink, const GgufValue& value) {
  const std::vector<T>& values = value.get_array<T>();
  put_scalar(sink, uint32_t(GgufTypeOf<T>::value));
  put_scalar(sink, uint64_t(values.size()));
  for (const auto& v : values) put_element<Sink, T>(sink, v);
}

template <class Sink>
void put_value(Sink& sink, const GgufValue& value) {
  if (!value.is_array()) {
    switch (value.type()) {
      case GgufType::U8: return put_element(sink, value.get<uint8_t>());
      case GgufType::I8: return put_element(sink, value.get<int8_t>());
      case GgufType::U16: return put_element(sink, value.get<uint16_t>());
      case GgufType::I16: return put_element(sink, value.get<int16_t>());
      case GgufType::U32: return put_element(sink, value.get<uint32_t>());
      case GgufType::I32: return put_element(sink, value.get<int32_t>());
      case GgufType::F32: return put_element(sink, value.get<float>());
      case GgufType::BOOL: return put_element(sink, value.get<bool>());
      case GgufType::STRING: return put_element(sink, value.get<std::string>());
      case GgufType::U64: return put_element(sink, value.get<uint64_t>());
      case GgufType::I64: return put_element(sink, value.get<int64_t>());
      case GgufType::F64: return put_element(sink, value.get<double>());
      case GgufType::ARRAY: break;
    }
    return;
  }
  switch (value.element_type()) {
    case GgufType::U8: return put_array<Sink, uint8_t>(sink, value);
    case GgufType::I8: return put_array<Sink, int8_t>(sink, value);
    case GgufType::U16: return put_array<Sink, uint16_t>(sink, value);
    case GgufType::I16: return put_array<Sink, int16_t>(sink, value);
    case GgufType::U32: return put_array<Sink, uint32_t>(sink, value);
    case GgufType::I32: return put_array<Sink, int32_t>(sink, value);
    case GgufType::F32: return put_array<Sink, float>(sink, value);
    case GgufType::BOOL: return put_array<Sink, bool>(sink, value);
    case GgufType::STRING: return put_array<Sink, std::string>(sink, value);
    case GgufType::U64: return put_array<Sink, uint64_t>(sink, value);
    case GgufType::I64: return put_array<Sink, int64_t>(sink, value);
    case GgufType::F64: return put_array<Sink, double>(sink, value);
    case GgufType::ARRAY: break;
  }
}

template <class Sink>
void put_zeros(Sink& sink, uint64_t n) {
  static constexpr uint8_t kZeros[256] = {};
  while (n > 0) {
    const size_t chunk = size_t(std::min<uint64_t>(n, sizeof kZeros));
    sink.put(kZeros, chunk);
    n -= chunk;
  }
}

}  // namespace

void GgufWriter::set(std::string key, GgufValue value) {
  if (key.empty() || key.size() > kGgufMaxKeyLength) {
    throw Error("gguf writer: a key must have 1.." + std::to_string(kGgufMaxKeyLength) + " bytes");
  }
  if (key_index_.count(key)) throw Error("gguf writer: duplicate metadata key '" + key + "'");
  if (key == gguf_keys::kAlignment) {
    if (value.type() != GgufType::U32 || value.get<uint32_t>() == 0 || !std::has_single_bit(value.get<uint32_t>())) {
      throw Error("gguf writer: " + key + " must be a u32 power of two, got " + value.describe());
    }
    alignment_ = value.get<uint32_t>();
  }
  key_index_.emplace(key, metadata_.size());
  metadata_.emplace_back(std::move(key), std::move(value));
}

void GgufWriter::add_tensor(std::string name, DType type, std::span<const int64_t> ne, const void* data) {
  add_pending(std::move(name), type, ne, data, {});
}

namespace {

// A tensor's dimensions up to its last one above 1.
std::span<const int64_t> trimmed_shape(const Tensor& tensor) {
  int n_dims = kMaxDims;
  while (n_dims > 1 && tensor.ne[n_dims - 1] == 1) --n_dims;
  return std::span<const int64_t>(tensor.ne, size_t(n_dims));
}

}  // namespace

void GgufWriter::add_tensor(std::string name, const Tensor& tensor) {
  if (!tensor.is_contiguous() || (!tensor.data && !tensor.is_empty())) {
    throw Error("gguf writer: tensor '" + name + "' must be contiguous and have data: " + describe(tensor));
  }
  add_pending(std::move(name), tensor.type, trimmed_shape(tensor), tensor.data, {});
}

void GgufWriter::add_tensor(std::string name, const Tensor& shape, TensorSource source) {
  if (!source) throw Error("gguf writer: tensor '" + name + "' has no source");
  add_pending(std::move(name), shape.type, trimmed_shape(shape), nullptr, std::move(source));
}

void GgufWriter::add_pending(std::string name, DType type, std::span<const int64_t> ne, const void* data,
                             TensorSource source) {
  const std::string what = "gguf writer: tensor '" + name + "'";
  if (name.empty() || name.size() > kGgufMaxTensorName) {
    throw Error(what + ": a name must have 1.." + std::to_string(kGgufMaxTensorName) + " bytes");
  }
  if (tensor_index_.count(name)) throw Error("gguf writer: duplicate tensor name '" + name + "'");
  if (ne.empty() || ne.size() > size_t(kMaxDims)) {
    throw Error(what + ": needs 1.." + std::to_string(kMaxDims) + " dimensions, got " + std::to_string(ne.size()));
  }
  GgufTensorInfo info;
  info.name = std::move(name);
  info.type = type;
  info.n_dims = int(ne.size());
  for (size_t d = 0; d < ne.size(); ++d) {
    if (ne[d] < 0) throw Error(what + ": ne[" + std::to_string(d) + "] is negative");
    info.ne[d] = ne[d];
  }
  info.size = row_size(type, info.ne[0]) * uint64_t(info.ne[1] * info.ne[2] * info.ne[3]);
  if (info.size && !data && !source) throw Error(what + ": no data");
  tensor_index_.emplace(info.name, tensors_.size());
  tensors_.push_back({std::move(info), data, std::move(source)});
}

template <class Sink>
void GgufWriter::write_metadata(Sink& sink) const {
  put_scalar(sink, kGgufMagic);
  put_scalar(sink, kGgufVersion);
  put_scalar(sink, uint64_t(tensors_.size()));
  put_scalar(sink, uint64_t(metadata_.size()));
  for (const auto& [key, value] : metadata_) {
    put_string(sink, key);
    put_scalar(sink, uint32_t(value.type()));
    put_value(sink, value);
  }
}

GgufWriter::Layout GgufWriter::layout() const {
  // The data section starts after the metadata and the tensor descriptors, aligned.
  CountingSink counter;
  write_metadata(counter);
  uint64_t descriptors_end = counter.written;
  for (const PendingTensor& t : tensors_)
    descriptors_end += 8 + t.info.name.size() + 4 + 8 * uint64_t(t.info.n_dims) + 4 + 8;
  Layout layout;
  layout.data_start = align_up(descriptors_end, alignment_);
  // Each tensor at the next multiple of the alignment where its data is aligned in the file too
  // (only an alignment below 4 needs more than one step); the file ends at the alignment after
  // the last one, as ggml writes it.
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    while ((layout.data_start + offset) % tensor_data_alignment(t.info.type) != 0) offset += alignment_;
    layout.offsets.push_back(offset);
    offset = align_up(offset + t.info.size, alignment_);
  }
  layout.file_size = layout.data_start + offset;
  return layout;
}

uint64_t GgufWriter::file_size() const { return layout().file_size; }

template <class Sink>
void GgufWriter::write(Sink& sink) const {
  const Layout layout = this->layout();
  write_metadata(sink);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const GgufTensorInfo& info = tensors_[i].info;
    put_string(sink, info.name);
    put_scalar(sink, uint32_t(info.n_dims));
    for (int d = 0; d < info.n_dims; ++d) put_scalar(sink, uint64_t(info.ne[size_t(d)]));
    put_scalar(sink, ggml_type_id(info.type));
    put_scalar(sink, layout.offsets[i]);
  }
  put_zeros(sink, layout.data_start - sink.written);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const PendingTensor& t = tensors_[i];
    put_zeros(sink, layout.data_start + layout.offsets[i] - sink.written);
    if (!t.source) {
      sink.put(t.data, size_t(t.info.size));
      continue;
    }
    // A source's miscount would shift every later tensor: it is refused as it happens.
    const uint64_t start = sink.written;
    const auto miscount = [&](uint64_t given) {
      return Error("gguf writer: tensor '" + t.info.name + "': its source gave " + std::to_string(given) +
                   " bytes, expected " + std::to_string(t.info.size));
    };
    t.source([&](const void* data, size_t n) {
      if (n > t.info.size - (sink.written - start)) throw miscount(sink.written - start + n);
      sink.put(data, n);
    });
    if (sink.written - start != t.info.size) throw miscount(sink.written - start);
  }
  put_zeros(sink, layout.file_size - sink.written);
}

std::vector<uint8_t> GgufWriter::to_bytes() const {
  std::vector<uint8_t> out;
  VectorSink sink{out};
  write(sink);
  return out;
}

namespace {

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Calls try_name(name) with fresh hidden names beside `path` (".F.<pid>.<random>.tmp") until it
// returns true; it returns false when the name is taken and throws on other errors.
template <class TryName>
std::string claim_temporary_name(const std::string& path, TryName try_name) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::random_device entropy;
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".%d.%08x.tmp", int(::getpid()), unsigned(entropy()));
    std::string temporary = dir + "." + base + suffix;
    if (try_name(temporary)) return temporary;
  }
  throw Error("gguf: cannot find an unused temporary name beside '" + path + "'");
}

[[noreturn]] void throw_cannot_create(const std::string& path) {
  throw Error("gguf: cannot create a file in '" + directory_of(path) + "': " + std::strerror(errno));
}

// A new file beside `path` that no other process can have opened, with the mode the umask gives
// a new file. Unnamed (O_TMPFILE) where the file system and /proc allow, so that nothing is left
// behind if the process dies, even of SIGKILL: `name` stays empty until link_temporary. Else
// named, created exclusively (so a symlink planted under that name is not followed).
struct NewTemporary {
  int fd;
  std::string name;
};
NewTemporary create_temporary_beside(const std::string& path) {
  if (::access("/proc/self/fd", X_OK) == 0) {
    const int fd = ::open(directory_of(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0) return {fd, ""};
    // Not supported there (the kernel or the file system): fall back to a named temporary.
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) throw_cannot_create(path);
  }
  int fd = -1;
  std::string name = claim_temporary_name(path, [&](const std::string& temporary) {
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) throw_cannot_create(path);
    return fd >= 0;
  });
  return {fd, std::move(name)};
}

// Gives the unnamed file `fd` a hidden name beside `path`, to be renamed over it.
std::string link_temporary(const std::string& path, int fd) {
  const std::string proc_path = "/proc/self/fd/" + std::to_string(fd);
  return claim_temporary_name(path, [&](const std::string& temporary) {
    if (::linkat(AT_FDCWD, proc_path.c_str(), AT_FDCWD, temporary.c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
    if (errno != EEXIST) throw_cannot_create(path);
    return false;
  });
}

}  // namespace

void GgufWriter::check_destination(const std::string& path) {
  if (path.empty()) throw Error("gguf: the output path is empty");
  if (path.back() == '/') throw Error("gguf: '" + path + "' names a directory, not a file");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) throw Error("gguf: '" + path + "' is a symbolic link: name its target instead");
    if (S_ISDIR(st.st_mode)) throw Error("gguf: '" + path + "' is a directory");
    if (!S_ISREG(st.st_mode)) throw Error("gguf: '" + path + "' exists and is not a regular file");
  } else if (errno != ENOENT) {
    throw Error("gguf: cannot write '" + path + "': " + std::strerror(errno));
  }
  const std::string dir = directory_of(path);
  if (::stat(dir.c_str(), &st) != 0)
    throw Error("gguf: cannot write '" + path + "': " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) throw Error("gguf: cannot write '" + path + "': '" + dir + "' is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw Error("gguf: cannot write in directory '" + dir + "': " + std::strerror(errno));
  }
}

void GgufWriter::remove_temporaries_on_signals() { install_temporary_cleanup(); }

namespace {

// "25769803776 bytes (24.0 GiB)".
std::string bytes_text(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double scaled = double(bytes) / 1024;
  size_t unit = 0;
  while (scaled >= 1024 && unit + 1 < std::size(kUnits)) {
    scaled /= 1024;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%llu bytes (%.1f %s)", (unsigned long long)bytes, scaled, kUnits[unit]);
  return text;
}

// Refuses, before anything is written, a file larger than the space its file system has left: a
// large one would otherwise fill the disk first and fail only then. The whole size is needed, as
// a file being replaced keeps its space until the rename.
void check_free_space(const std::string& path, uint64_t bytes) {
  struct statvfs fs {};
  // Where the question has no answer, the write itself still reports a full disk.
  if (::statvfs(directory_of(path).c_str(), &fs) != 0) return;
  const uint64_t available = uint64_t(fs.f_bavail) * uint64_t(fs.f_frsize);
  if (bytes > available) {
    throw Error("gguf: cannot write '" + path + "': it needs " + bytes_text(bytes) + " and its file system has " +
                bytes_text(available) + " available");
  }
}

}  // namespace

void GgufWriter::write_file(const std::string& path) const {
  check_destination(path);
  check_free_space(path, file_size());
  // However this function leaves, the temporary is closed, and removed unless it was published;
  // once named, it stays registered for the signal handlers until then (members outlive the
  // body).
  struct Temporary {
    int fd;
    std::string name;
    std::optional<RegisteredTemporary> registration;
    std::FILE* file = nullptr;
    bool published = false;
    ~Temporary() {
      if (file) {
        std::fclose(file);
      } else if (fd >= 0) {
        ::close(fd);
      }
      if (!published && !name.empty()) std::remove(name.c_str());
    }
  };
  auto [fd, name] = create_temporary_beside(path);
  Temporary tmp{fd, name};
  if (!tmp.name.empty()) tmp.registration.emplace(tmp.name);
  const auto fail = [&](const std::string& what) {
    const int err = errno;
    throw Error("gguf: " + what + " '" + path + "' failed: " + std::strerror(err));
  };
  tmp.file = ::fdopen(tmp.fd, "wb");
  if (!tmp.file) fail("opening");
  // A replaced file keeps its permissions (rename would otherwise give it the new file's).
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0 && ::fchmod(tmp.fd, existing.st_mode & 07777) != 0)
    fail("setting the mode of");
  FileSink sink{tmp.file, path};
  write(sink);
  // On disk before the rename, so a crash leaves the old file or the whole new one.
  if (std::fflush(tmp.file) != 0 || ::fsync(tmp.fd) != 0) fail("writing");
  if (tmp.name.empty()) {
    tmp.name = link_temporary(path, tmp.fd);
    tmp.registration.emplace(tmp.name);
  }
  const int closed = std::fclose(tmp.file);
  tmp.file = nullptr;
  tmp.fd = -1;
  if (closed != 0) fail("writing");
  if (std::rename(tmp.name.c_str(), path.c_str()) != 0) fail("replacing");
  tmp.published = true;
}

}  // namespace tg::model
