#include "dependencies.h"

#include <nlohmann/json.hpp>
#include <unordered_set>

#include "escape.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/process.h"
#include "tilegraph/jit/sha256.h"

namespace tg::jit {

namespace {

// 2: paths are stored escaped (escape_bytes).
constexpr int kRecordFormat = 2;
// The make target the compiler is told to name, so its output can be split from the file list.
constexpr std::string_view kTarget = "tg-deps";

std::filesystem::path record_path(const std::filesystem::path& records_dir, const std::string& key) {
  return records_dir / (key + ".json");
}

std::optional<TrackedFile> track(const std::string& path, int64_t now_ns) {
  const std::optional<FileStamp> stamp = stamp_of(path);
  if (!stamp) return std::nullopt;
  return TrackedFile{path, sha256_file(path), *stamp, stamp->is_settled(now_ns)};
}

// Splits make-rule text ("tg-deps: a.cpp b\ c.h \\\n d.h") into the prerequisite paths,
// undoing make's escapes for spaces, '#' and '$'.
std::vector<std::string> parse_make_rule(const std::string& text, const std::string& what) {
  size_t i = text.find_first_not_of(" \t\n");
  if (i == std::string::npos || text.compare(i, kTarget.size(), kTarget) != 0) {
    throw Error("jit: unexpected dependency output from " + what + ": " + text.substr(0, 200));
  }
  i = text.find(':', i + kTarget.size());
  if (i == std::string::npos) throw Error("jit: no ':' in the dependency output of " + what);
  std::vector<std::string> paths;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) paths.push_back(std::move(current));
    current.clear();
  };
  for (++i; i < text.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '\\' && next == '\n') {
      flush();
      ++i;
    } else if (c == '\\' && (next == ' ' || next == '#' || next == '\\')) {
      current += next;
      ++i;
    } else if (c == '$' && next == '$') {
      current += '$';
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
    } else {
      current += c;
    }
  }
  flush();
  return paths;
}

nlohmann::json file_json(const TrackedFile& f) {
  return {{"path", escape_bytes(f.path)}, {"sha256", f.sha256},        {"device", f.stamp.device},
          {"inode", f.stamp.inode},       {"size", f.stamp.size},      {"mtime_ns", f.stamp.mtime_ns},
          {"ctime_ns", f.stamp.ctime_ns}, {"trusted", f.stamp_trusted}};
}

TrackedFile file_from_json(const nlohmann::json& j) {
  TrackedFile f;
  f.path = unescape_bytes(j.at("path").get<std::string>());
  f.sha256 = j.at("sha256").get<std::string>();
  f.stamp = {j.at("device").get<uint64_t>(), j.at("inode").get<uint64_t>(), j.at("size").get<int64_t>(),
             j.at("mtime_ns").get<int64_t>(), j.at("ctime_ns").get<int64_t>()};
  f.stamp_trusted = j.at("trusted").get<bool>();
  return f;
}

// The recorded files if each still has its recorded content: a trusted stamp that still matches
// proves it without reading the file, anything else is re-hashed. nullopt if there is no usable
// record or some file's content changed (its include set may then have changed too).
std::optional<std::vector<TrackedFile>> revalidate(const std::filesystem::path& path, const std::string& template_path,
                                                   bool* outdated) {
  const std::optional<std::string> text = read_file(path);
  if (!text) return std::nullopt;
  std::vector<TrackedFile> files;
  try {
    const nlohmann::json record = nlohmann::json::parse(*text);
    if (record.at("format") != kRecordFormat) return std::nullopt;
    for (const nlohmann::json& f : record.at("files")) files.push_back(file_from_json(f));
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  if (files.empty() || files.front().path != template_path) return std::nullopt;
  const int64_t now = unix_time_ns();
  for (TrackedFile& recorded : files) {
    const std::optional<FileStamp> stamp = stamp_of(recorded.path);
    if (!stamp) return std::nullopt;
    if (recorded.stamp_trusted && *stamp == recorded.stamp) continue;
    std::optional<TrackedFile> fresh = track(recorded.path, now);
    if (!fresh || fresh->sha256 != recorded.sha256) return std::nullopt;
    *outdated = *outdated || fresh->stamp != recorded.stamp || fresh->stamp_trusted != recorded.stamp_trusted;
    recorded = std::move(*fresh);
  }
  return files;
}

std::vector<TrackedFile> ask_compiler(const std::vector<std::string>& command, const ProcessOptions& options,
                                      const std::string& template_path) {
  std::vector<std::string> argv = command;
  argv.insert(argv.end(), {"-M", "-MT", std::string(kTarget), template_path});
  const ProcessResult result = run_process(argv, options);
  if (!result.ok()) {
    throw Error("jit: preprocessing " + template_path + " failed (" + result.describe() + "):\n" + result.err +
                result.out + "command: " + quote_command(argv));
  }
  std::vector<std::string> paths = parse_make_rule(result.out, quote_command(argv));
  // The key lists the template on its own; the compiler may list it anywhere, or twice.
  std::vector<TrackedFile> files;
  std::unordered_set<std::string> seen = {template_path};
  const int64_t now = unix_time_ns();
  auto add = [&](const std::string& p) {
    std::optional<TrackedFile> f = track(p, now);
    if (!f) throw Error("jit: " + p + ", a dependency of " + template_path + ", cannot be found");
    files.push_back(std::move(*f));
  };
  add(template_path);
  for (const std::string& p : paths) {
    if (seen.insert(p).second) add(p);
  }
  return files;
}

}  // namespace

DependencyScan scan_dependencies(const std::vector<std::string>& command, const ProcessOptions& options,
                                 const std::string& template_path, const std::string& direct_key,
                                 const std::filesystem::path& records_dir) {
  DependencyScan scan;
  scan.direct_key = direct_key;
  if (auto files = revalidate(record_path(records_dir, direct_key), template_path, &scan.record_outdated)) {
    scan.files = std::move(*files);
    return scan;
  }
  scan.files = ask_compiler(command, options, template_path);
  scan.record_outdated = true;
  return scan;
}

void store_dependency_record(const DependencyScan& scan, const std::string& kernel_id,
                             const std::filesystem::path& records_dir, const std::filesystem::path& tmp_dir) {
  nlohmann::json files = nlohmann::json::array();
  for (const TrackedFile& f : scan.files) files.push_back(file_json(f));
  // "kernel_id" lets eviction drop records whose kernel is gone (DiskCache::evict).
  const nlohmann::json record = {{"format", kRecordFormat}, {"kernel_id", kernel_id}, {"files", std::move(files)}};
  write_file_atomically(tmp_dir, record_path(records_dir, scan.direct_key), record.dump(1) + "\n");
}

std::string changed_since_scan(const DependencyScan& scan) {
  for (const TrackedFile& f : scan.files) {
    if (stamp_of(f.path) != f.stamp) return f.path;
  }
  return "";
}

}  // namespace tg::jit
