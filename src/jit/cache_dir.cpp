#include "tilegraph/jit/cache_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tilegraph/core/error.h"

namespace tg::jit {

namespace {

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", unsigned(mode & 07777));
  return text;
}

void make_dirs(const std::filesystem::path& dir) {
  struct stat st;
  if (dir.empty() || ::lstat(dir.c_str(), &st) == 0) return;
  if (dir.has_relative_path()) make_dirs(dir.parent_path());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw Error("jit: cannot create cache directory " + dir.string() + ": " + std::strerror(errno));
  }
}

}  // namespace

void prepare_cache_dir(const std::filesystem::path& dir) {
  make_dirs(std::filesystem::absolute(dir));
  check_cache_dir(dir);
}

void check_cache_dir(const std::filesystem::path& dir) {
  const std::filesystem::path absolute = std::filesystem::absolute(dir);
  struct stat st;
  if (::stat(absolute.c_str(), &st) != 0) {
    throw Error("jit: cache directory " + absolute.string() + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw Error("jit: cache directory " + absolute.string() + " is not a directory");
  }
  if (st.st_uid != ::geteuid()) {
    throw Error("jit: refusing cache directory " + absolute.string() + ": it is owned by uid " +
                std::to_string(st.st_uid) + ", not by this user (uid " + std::to_string(::geteuid()) +
                "), who would load code from it; set TG_JIT_CACHE_DIR to a directory of your own");
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    throw Error("jit: refusing cache directory " + absolute.string() + ": mode " + octal_mode(st.st_mode) +
                " lets other users write code this process would load; run chmod 700 on it");
  }
}

}  // namespace tg::jit
