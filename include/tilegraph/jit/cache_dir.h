#pragma once
// The cache directory holds code this process will load and run, so anyone who can write to it
// can run code as this user. It is therefore private: created with mode 0700, and an existing
// directory owned by someone else or writable by group or others is refused.
#include <filesystem>

namespace tg::jit {

// Creates `dir` and any missing parents with mode 0700, then check_cache_dir(dir).
void prepare_cache_dir(const std::filesystem::path& dir);
// Checks, changing nothing, that `dir` is a directory (a symlink to one is followed), owned by
// the effective user, and not writable by group or others. Throws tg::Error saying which check
// failed and how to fix it.
void check_cache_dir(const std::filesystem::path& dir);

}  // namespace tg::jit
