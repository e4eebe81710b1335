// The disk cache's safety properties: damaged entries are rebuilt, never loaded; eviction keeps
// to the byte budget in least-recently-used order and never removes a kernel some process has
// loaded, nor anything the cache did not write; clear and the listings.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "file_lock.h"
#include "jit_test_utils.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/sha256.h"

namespace tg::jit {
namespace {

using testing::cached_ids;
using testing::kernel_template;
using testing::saxpy_works;
using testing::TempDir;
using testing::test_config;

MacroMap scale(int s) { return {{"SCALE", std::to_string(s)}}; }

// Builds the saxpy kernel with SCALE=s in a short-lived Compiler, so no one holds it afterwards.
std::string build(const Config& config, int s) {
  Compiler compiler(config);
  return compiler.load(kernel_template("saxpy.cpp"), scale(s), KernelType::kCpu).id;
}

bool contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

void expect_rebuilt(const Config& config, const std::string& id) {
  Compiler compiler(config);
  const Kernel kernel = compiler.load(kernel_template("saxpy.cpp"), scale(2), KernelType::kCpu);
  EXPECT_EQ(kernel.id, id);
  EXPECT_EQ(kernel.source, KernelSource::kCompiled);
  EXPECT_EQ(compiler.stats().rebuilt_bad_entries, 1u);
  EXPECT_TRUE(saxpy_works(kernel.entry, 2.0f));
  const Manifest m = *compiler.cache().list()[0].manifest;
  EXPECT_EQ(m.sha256, sha256_file(compiler.cache().kernel_path(id)));
}

TEST(DiskCache, TruncatedKernelIsRebuiltNotLoaded) {
  TempDir tmp;
  const Config config = test_config(tmp.path());
  const std::string id = build(config, 2);
  const std::filesystem::path so = DiskCache(config.cache_dir).kernel_path(id);
  std::filesystem::resize_file(so, std::filesystem::file_size(so) / 2);
  expect_rebuilt(config, id);
}

TEST(DiskCache, BitFlippedKernelIsRebuiltNotLoaded) {
  TempDir tmp;
  const Config config = test_config(tmp.path());
  const std::string id = build(config, 2);
  const std::filesystem::path so = DiskCache(config.cache_dir).kernel_path(id);
  std::string bytes = testing::read_text(so);
  bytes[bytes.size() / 2] ^= 0x10;  // same size: only the content hash can tell
  testing::write_text(so, bytes);
  expect_rebuilt(config, id);
}

TEST(DiskCache, KernelWithoutManifestIsRebuilt) {
  TempDir tmp;
  const Config config = test_config(tmp.path());
  const std::string id = build(config, 2);
  std::filesystem::remove(DiskCache(config.cache_dir).manifest_path(id));
  expect_rebuilt(config, id);
}

TEST(DiskCache, GarbledManifestIsRebuilt) {
  TempDir tmp;
  const Config config = test_config(tmp.path());
  const std::string id = build(config, 2);
  testing::write_text(DiskCache(config.cache_dir).manifest_path(id), "{\"id\": 1");
  expect_rebuilt(config, id);
}

TEST(DiskCache, EvictsLeastRecentlyUsedPastTheBudget) {
  TempDir tmp;
  Config config = test_config(tmp.path());
  const std::string a = build(config, 1);
  const uint64_t entry_bytes = DiskCache(config.cache_dir).stats(0).bytes;
  config.max_cache_bytes = entry_bytes * 5 / 2;  // room for two entries
  const std::string b = build(config, 2);
  // Use `a` again (a disk hit) so that `b` becomes the least recently used.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    Compiler compiler(config);
    EXPECT_EQ(compiler.load(kernel_template("saxpy.cpp"), scale(1), KernelType::kCpu).source, KernelSource::kDisk);
  }
  Compiler compiler(config);
  const std::string c = compiler.load(kernel_template("saxpy.cpp"), scale(3), KernelType::kCpu).id;
  EXPECT_EQ(compiler.stats().evictions, 1u);
  const std::vector<std::string> ids = cached_ids(compiler.cache());
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_TRUE(contains(ids, a));
  EXPECT_FALSE(contains(ids, b));
  EXPECT_TRUE(contains(ids, c));
  EXPECT_LE(compiler.cache().stats(0).bytes, config.max_cache_bytes);
  // The evicted kernel's dependency record went with it.
  EXPECT_EQ(testing::files_in(compiler.cache(), "deps"), 2u);
}

TEST(DiskCache, NeverEvictsAKernelInUse) {
  TempDir tmp;
  Config config = test_config(tmp.path(), 1);  // every entry is over budget
  Compiler holder(config);
  const std::string a = holder.load(kernel_template("saxpy.cpp"), scale(1), KernelType::kCpu).id;
  std::string b;
  {
    Compiler other(config);
    b = other.load(kernel_template("saxpy.cpp"), scale(2), KernelType::kCpu).id;
    EXPECT_EQ(other.stats().evictions, 0u);  // a is held by `holder`, b by `other`
    EXPECT_EQ(cached_ids(other.cache()).size(), 2u);
  }
  Compiler third(config);
  const std::string c = third.load(kernel_template("saxpy.cpp"), scale(3), KernelType::kCpu).id;
  const std::vector<std::string> ids = cached_ids(third.cache());
  EXPECT_TRUE(contains(ids, a));
  EXPECT_FALSE(contains(ids, b));
  EXPECT_TRUE(contains(ids, c));
  // The kernels still run.
  EXPECT_TRUE(saxpy_works(holder.get_kernel(kernel_template("saxpy.cpp"), scale(1), KernelType::kCpu), 1.0f));
}

TEST(DiskCache, ClearRemovesEverythingNotInUse) {
  TempDir tmp;
  const Config config = test_config(tmp.path());
  build(config, 1);
  Compiler holder(config);
  const std::string held = holder.load(kernel_template("saxpy.cpp"), scale(2), KernelType::kCpu).id;
  const CacheRemoval removal = holder.cache().clear();
  EXPECT_EQ(removal.removed, 1u);
  EXPECT_EQ(removal.kept_in_use, 1u);
  EXPECT_GT(removal.bytes, 0u);
  EXPECT_EQ(cached_ids(holder.cache()), std::vector<std::string>{held});
  for (const char* sub : {"deps", "toolchains", "tmp"}) EXPECT_EQ(testing::files_in(holder.cache(), sub), 0u) << sub;
}

TEST(DiskCache, ListAndStatsDescribeTheEntries) {
  TempDir tmp;
  const Config config = test_config(tmp.path());
  const std::string old_id = build(config, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  Compiler compiler(config);
  const std::string new_id = compiler.load(kernel_template("saxpy.cpp"), scale(2), KernelType::kCpu).id;
  const std::vector<CacheEntryInfo> entries = compiler.cache().list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].id, new_id);  // most recently used first
  EXPECT_TRUE(entries[0].in_use);
  EXPECT_EQ(entries[1].id, old_id);
  EXPECT_FALSE(entries[1].in_use);
  const CacheStats stats = compiler.cache().stats(config.max_cache_bytes);
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.in_use, 1u);
  EXPECT_EQ(stats.incomplete, 0u);
  EXPECT_EQ(stats.bytes, entries[0].bytes + entries[1].bytes);
  EXPECT_EQ(stats.max_bytes, config.max_cache_bytes);
  EXPECT_EQ(stats.dependency_records, 2u);
  EXPECT_GT(stats.compile_seconds, 0.0);
}

TEST(DiskCache, AbandonedBuildDirectoriesAreRemoved) {
  TempDir tmp;
  Config config = test_config(tmp.path());
  DiskCache cache(config.cache_dir);
  // What a compiler killed mid-build leaves behind: a build directory no one holds the lock of.
  const std::filesystem::path abandoned = cache.tmp_dir() / (std::string(64, 'a') + ".build.x1y2z3");
  std::filesystem::create_directory(abandoned);
  testing::write_text(abandoned / "kernel.so", "partial");
  cache.evict(config.max_cache_bytes);
  EXPECT_FALSE(std::filesystem::exists(abandoned));
}

void make_old(const std::filesystem::path& path) {
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now() - std::chrono::hours(2));
}

TEST(DiskCache, TouchesNothingItDidNotWrite) {
  TempDir tmp;
  const Config config = test_config(tmp.path(), 1);  // every compile evicts all it can
  const std::string id = build(config, 1);
  DiskCache cache(config.cache_dir);
  // Other files and folders, old enough to be taken for abandoned temporaries, some with names
  // close to the cache's own.
  const std::string hex(64, '0');
  const std::filesystem::path dir = config.cache_dir;
  const std::vector<std::filesystem::path> files = {
      dir / "notes.txt",       dir / "kernels" / "notes.txt",       dir / "kernels" / (hex + ".so.bak"),
      dir / "deps" / "README", dir / "toolchains" / "gcc.json",     dir / "sources" / "main.cpp",
      dir / "tmp" / "old.iso", dir / "tmp" / (hex + ".json.Ab12Cd")};
  const std::vector<std::filesystem::path> folders = {dir / "sources" / "sub", dir / "sources" / (hex + ".cpp"),
                                                      dir / "kernels" / (hex + ".so"), dir / "tmp" / (hex + ".backup")};
  for (const auto& folder : folders) {
    std::filesystem::create_directory(folder);
    testing::write_text(folder / "data", "x");
    make_old(folder / "data");
    make_old(folder);
  }
  for (const auto& file : files) {
    testing::write_text(file, "x");
    make_old(file);
  }
  const CacheStats stats = cache.stats(0);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.incomplete, 0u);
  EXPECT_EQ(stats.dependency_records, 1u);
  EXPECT_EQ(stats.toolchain_records, 1u);
  EXPECT_EQ(stats.temporaries, 0u);
  EXPECT_EQ(cached_ids(cache), std::vector<std::string>{id});

  const std::string other = build(config, 2);  // evicts `id`
  EXPECT_EQ(cached_ids(cache), std::vector<std::string>{other});
  const CacheRemoval removal = cache.clear();
  EXPECT_EQ(removal.removed, 1u);
  EXPECT_EQ(removal.kept_temporaries, 0u);
  EXPECT_TRUE(cached_ids(cache).empty());
  for (const auto& file : files) EXPECT_TRUE(std::filesystem::exists(file)) << file;
  for (const auto& folder : folders) EXPECT_TRUE(std::filesystem::exists(folder / "data")) << folder;
  EXPECT_TRUE(std::filesystem::exists(dir / "CACHEDIR.TAG"));
}

TEST(DiskCache, ClearKeepsTemporariesOfRunningBuilds) {
  TempDir tmp;
  DiskCache cache(tmp.path() / "cache");
  const std::string a(64, 'a');
  const std::string b(64, 'b');
  // A write in progress, and one a crash left an hour ago.
  const std::filesystem::path writing = cache.tmp_dir() / (a + ".json.tmp.Ab12Cd");
  const std::filesystem::path left = cache.tmp_dir() / (b + ".json.tmp.Ab12Cd");
  testing::write_text(writing, "{");
  testing::write_text(left, "{");
  make_old(left);
  // A build whose process holds its lock, and one whose process is gone.
  const std::filesystem::path building = cache.tmp_dir() / (a + ".build.Ab12Cd");
  const std::filesystem::path abandoned = cache.tmp_dir() / (b + ".build.Ab12Cd");
  std::filesystem::create_directory(building);
  std::filesystem::create_directory(abandoned);
  EXPECT_EQ(cache.stats(0).temporaries, 4u);
  const FileLock build_lock = FileLock::acquire(cache.dir() / "kernels" / (a + ".lock"));
  const CacheRemoval removal = cache.clear();
  EXPECT_EQ(removal.kept_temporaries, 2u);
  EXPECT_TRUE(std::filesystem::exists(writing));
  EXPECT_TRUE(std::filesystem::exists(building));
  EXPECT_FALSE(std::filesystem::exists(left));
  EXPECT_FALSE(std::filesystem::exists(abandoned));
}

TEST(DiskCache, OpeningAMissingCacheCreatesNothing) {
  TempDir tmp;
  const DiskCache cache = DiskCache::open_existing(tmp.path() / "a" / "cache");
  EXPECT_TRUE(cache.list().empty());
  const CacheStats stats = cache.stats(1);
  EXPECT_EQ(stats.entries + stats.dependency_records + stats.toolchain_records + stats.temporaries, 0u);
  EXPECT_EQ(stats.dir, tmp.path() / "a" / "cache");
  DiskCache writable = DiskCache::open_existing(tmp.path() / "a" / "cache");
  EXPECT_EQ(writable.clear().removed, 0u);
  EXPECT_EQ(writable.evict(0).removed, 0u);
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "a"));
}

TEST(DiskCache, RejectsMalformedIds) {
  TempDir tmp;
  DiskCache cache(tmp.path() / "cache");
  EXPECT_THROW(cache.load_or_build("../../etc/passwd", {}, [](const auto&, const auto&) {}), Error);
}

}  // namespace
}  // namespace tg::jit
