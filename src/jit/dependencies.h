#pragma once
// Which files a kernel is built from: the template and every header it includes, each with its
// content hash — the part of the kernel key that needs the preprocessor. Asking the compiler
// (-M) costs as much as a small compile, so the answer is kept on disk as a dependency record
// (ccache's "direct mode"): a fresh process re-checks the recorded files by their stat stamps
// and only asks the compiler again if one of them changed content.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "tilegraph/jit/process.h"

#include "file_util.h"

namespace tg::jit {

struct TrackedFile {
  std::string path;
  std::string sha256;
  FileStamp stamp;             // taken just before hashing
  bool stamp_trusted = false;  // the file had settled when hashed (FileStamp::is_settled)
};

struct DependencyScan {
  std::string direct_key;          // names the record: everything that decides the include set
  std::vector<TrackedFile> files;  // the template first, then every header it includes
  bool record_outdated = false;    // the record on disk is missing or stale
};

// `command` is the compiler and its flags; `options` how to run it (its whole environment, its
// limits). Throws tg::Error carrying the compiler's diagnostics if preprocessing fails (a missing
// header, say) or takes too long (a header that is a FIFO).
DependencyScan scan_dependencies(const std::vector<std::string>& command, const ProcessOptions& options,
                                 const std::string& template_path, const std::string& direct_key,
                                 const std::filesystem::path& records_dir);

// Writes the record once the kernel it resolved to has loaded, so a failed compile leaves none.
void store_dependency_record(const DependencyScan& scan, const std::string& kernel_id,
                             const std::filesystem::path& records_dir, const std::filesystem::path& tmp_dir);

// The first tracked file whose stamp changed since the scan ("" if none): run after a compile,
// it catches a header edited while the compiler was reading it.
std::string changed_since_scan(const DependencyScan& scan);

}  // namespace tg::jit
