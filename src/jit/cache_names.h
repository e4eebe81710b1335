#pragma once
// Every name the disk cache writes, and a test for each. The cache lists, counts, evicts and
// removes only names that pass these tests, so nothing else that is in its directory — a file
// someone put there, or a whole directory TG_JIT_CACHE_DIR was pointed at by mistake — is ever
// touched:
//
//   CACHEDIR.TAG, evict.lock        the marker; the lock of whoever evicts or clears
//   kernels/     <id>.so  <id>.json  <id>.lock
//   deps/, toolchains/  <hex>.json   sources/  <hex>.cpp  <hex>.cu
//   tmp/         <id>.build.XXXXXX/  a build; <name>.tmp.XXXXXX  a file being written as <name>
//
// The temporary names carry a word (build, tmp) besides the random part, so that a name someone
// chose, such as <hex>.backup, is not taken for one.
#include <filesystem>
#include <string>
#include <string_view>

namespace tg::jit::cache_names {

inline constexpr std::string_view kTag = "CACHEDIR.TAG";
inline constexpr std::string_view kEvictLock = "evict.lock";
inline constexpr std::string_view kSubdirs[] = {"kernels", "deps", "toolchains", "tmp", "sources"};
// mkdtemp and mkstemp templates, appended to a kernel id and to the name being written.
inline constexpr std::string_view kBuildSuffix = ".build.XXXXXX";
inline constexpr std::string_view kTempSuffix = ".tmp.XXXXXX";

// The marker: the signature line of https://bford.info/cachedir/ (which also makes backup tools
// skip the directory), then a comment naming tilegraph.
std::string tag_content();
// True if `path` is a regular file that starts like tag_content(): another program's tag does
// not make a directory tilegraph's.
bool is_our_tag(const std::filesystem::path& path);

// 64 lowercase hex digits: a kernel id or a content hash.
bool is_hex_id(std::string_view s);
// kernels/<id>.so or <id>.json: the two files of an entry.
bool is_entry_file(std::string_view name);
bool is_kernel_file(std::string_view name);  // an entry file or <id>.lock
bool is_lock(std::string_view name);         // <id>.lock
bool is_record(std::string_view name);       // <hex>.json
bool is_source(std::string_view name);       // <hex>.cpp or <hex>.cu
bool is_build_dir(std::string_view name);    // <id>.build.XXXXXX
bool is_temp_file(std::string_view name);    // <a name above, or the tag>.tmp.XXXXXX

// The first entry of the directory `dir` that the cache would not have written — another
// program's file, or one of the cache's names with the wrong file type — as a path relative to
// `dir`; "" if there is none. Symlinks are not followed.
std::string first_foreign_entry(const std::filesystem::path& dir);

}  // namespace tg::jit::cache_names
