#pragma once
// Temporary files that a fatal signal must not leave behind. GgufWriter::write_file registers its
// temporary while it exists; once install_temporary_cleanup() has run, SIGINT, SIGTERM and SIGHUP
// unlink every registered temporary before the process dies of them. The registry is a fixed
// array, because a signal handler may neither allocate nor lock.
#include <string>

namespace tg::model {

// Registers `path` for as long as it lives; a path too long for the registry, or a full
// registry, is simply not registered (a normal exit still removes the file).
class RegisteredTemporary {
 public:
  explicit RegisteredTemporary(const std::string& path);
  ~RegisteredTemporary();
  RegisteredTemporary(const RegisteredTemporary&) = delete;
  RegisteredTemporary& operator=(const RegisteredTemporary&) = delete;

 private:
  int slot_ = -1;
};

// Installs the handlers where the signal still has its default action (a program's own
// handlers, or an ignored SIGHUP, are left alone). Idempotent.
void install_temporary_cleanup();

}  // namespace tg::model
