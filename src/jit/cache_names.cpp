#include "cache_names.h"

#include <sys/stat.h>

#include <system_error>

#include "file_util.h"
#include "tilegraph/core/error.h"

namespace tg::jit::cache_names {

namespace {

// The first two lines; a later version may change the rest of the comment.
constexpr std::string_view kTagHeader =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by tilegraph's kernel JIT";

bool has_suffix_after_hex(std::string_view name, std::string_view suffix) {
  return name.size() == 64 + suffix.size() && is_hex_id(name.substr(0, 64)) && name.ends_with(suffix);
}

// `name` is some prefix followed by `suffix`, an mkstemp template suffix ("....XXXXXX") whose X
// have been filled in as mkstemp does; sets `prefix`.
bool matches_template(std::string_view name, std::string_view suffix, std::string_view* prefix) {
  constexpr size_t kRandom = 6;  // the XXXXXX
  if (name.size() <= suffix.size()) return false;
  const std::string_view random = name.substr(name.size() - kRandom);
  for (const char c : random) {
    if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9')) return false;
  }
  const std::string_view word = suffix.substr(0, suffix.size() - kRandom);
  const std::string_view rest = name.substr(0, name.size() - kRandom);
  if (!rest.ends_with(word)) return false;
  *prefix = rest.substr(0, rest.size() - word.size());
  return true;
}

std::filesystem::file_type type_of(const std::filesystem::directory_entry& entry) {
  std::error_code error;
  return entry.symlink_status(error).type();
}

// An entry removed between the listing and its lstat is not in the directory, whatever it was:
// other processes of the cache unlink their locks and rename their temporary files all the time,
// and eight processes opening one new cache saw such entries as foreign about once in 30 runs.
bool gone(std::filesystem::file_type type) { return type == std::filesystem::file_type::not_found; }

std::string first_foreign_in(const std::filesystem::path& dir, std::string_view subdir) {
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(dir / subdir, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    const std::filesystem::file_type type = type_of(*it);
    if (gone(type)) continue;
    const bool file = type == std::filesystem::file_type::regular;
    bool ours = false;
    if (subdir == "kernels") {
      ours = file && is_kernel_file(name);
    } else if (subdir == "deps" || subdir == "toolchains") {
      ours = file && is_record(name);
    } else if (subdir == "sources") {
      ours = file && is_source(name);
    } else {
      ours = (file && is_temp_file(name)) || (type == std::filesystem::file_type::directory && is_build_dir(name));
    }
    if (!ours) return std::string(subdir) + "/" + name;
  }
  if (error) throw Error("jit: cannot list " + (dir / subdir).string() + ": " + error.message());
  return "";
}

}  // namespace

std::string tag_content() {
  return std::string(kTagHeader) +
         " (docs/jit.md).\n"
         "# For information about cache directory tags, see https://bford.info/cachedir/\n";
}

bool is_our_tag(const std::filesystem::path& path) {
  struct stat st;
  // lstat and the size bound: only a small regular file is read, never a FIFO or a device.
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 4096) return false;
  return read_file(path).value_or("").starts_with(kTagHeader);
}

bool is_hex_id(std::string_view s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool is_entry_file(std::string_view name) {
  return has_suffix_after_hex(name, ".so") || has_suffix_after_hex(name, ".json");
}

bool is_kernel_file(std::string_view name) { return is_entry_file(name) || is_lock(name); }

bool is_lock(std::string_view name) { return has_suffix_after_hex(name, ".lock"); }

bool is_record(std::string_view name) { return has_suffix_after_hex(name, ".json"); }

bool is_source(std::string_view name) {
  return has_suffix_after_hex(name, ".cpp") || has_suffix_after_hex(name, ".cu");
}

bool is_build_dir(std::string_view name) {
  std::string_view id;
  return matches_template(name, kBuildSuffix, &id) && is_hex_id(id);
}

bool is_temp_file(std::string_view name) {
  std::string_view target;
  return matches_template(name, kTempSuffix, &target) && (target == kTag || is_record(target) || is_source(target));
}

std::string first_foreign_entry(const std::filesystem::path& dir) {
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(dir, error); !error && it != std::filesystem::directory_iterator();
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    const std::filesystem::file_type type = type_of(*it);
    if (gone(type)) continue;
    if (name == kTag) {
      if (is_our_tag(it->path())) continue;
      return name + " (not tilegraph's)";
    }
    if (name == kEvictLock && type == std::filesystem::file_type::regular) continue;
    bool subdir = false;
    for (const std::string_view s : kSubdirs) subdir = subdir || name == s;
    if (!subdir || type != std::filesystem::file_type::directory) return name;
    if (std::string foreign = first_foreign_in(dir, name); !foreign.empty()) return foreign;
  }
  if (error) throw Error("jit: cannot list " + dir.string() + ": " + error.message());
  return "";
}

}  // namespace tg::jit::cache_names
