// The JIT compiler end to end with the host compiler: entry point ABI, memory and disk hits, id
// sensitivity to the files and toolchain, rejection of hostile macros, compile errors.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "jit/kernels/saxpy_params.h"
#include "jit_test_utils.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/kernel_id.h"
#include "tilegraph/jit/process.h"
#include "tilegraph/jit/sha256.h"

namespace tg::jit {
namespace {

using testing::cached_ids;
using testing::files_in;
using testing::kernel_template;
using testing::saxpy_works;
using testing::TempDir;
using testing::test_config;

const MacroMap kScale2 = {{"SCALE", "2"}};

// A private copy of the saxpy template and its header, to edit.
struct EditableKernel {
  TempDir dir;
  std::filesystem::path source = dir.path() / "saxpy.cpp";
  std::filesystem::path header = dir.path() / "saxpy_params.h";
  EditableKernel() {
    std::filesystem::copy_file(kernel_template("saxpy.cpp"), source);
    std::filesystem::copy_file(kernel_template("saxpy_params.h"), header);
  }
};

// Throws unless `fn` throws a tg::Error, whose message it returns.
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no tg::Error thrown";
  return "";
}

TEST(Compiler, EntryPointRunsWithAParamsStruct) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  const EntryFn entry = compiler.get_kernel(kernel_template("saxpy.cpp"), {{"SCALE", "3"}}, KernelType::kCpu);
  ASSERT_NE(entry, nullptr);
  EXPECT_TRUE(saxpy_works(entry, 3.0f, 1000, 1));
  EXPECT_TRUE(saxpy_works(entry, 3.0f, 1001, 7));
  EXPECT_TRUE(saxpy_works(entry, 3.0f, 3, 8));  // more blocks than elements
  const EntryFn half = compiler.get_kernel(kernel_template("saxpy.cpp"), {{"SCALE", "0.5f"}}, KernelType::kCpu);
  EXPECT_NE(half, entry);
  EXPECT_TRUE(saxpy_works(half, 0.5f));
}

TEST(Compiler, InstanceIsConfiguredFromTheEnvironment) {
  TempDir tmp;
  const testing::ScopedEnv dir("TG_JIT_CACHE_DIR", (tmp.path() / "cache").c_str());
  const testing::ScopedEnv budget("TG_JIT_CACHE_MAX_BYTES", "12345678");
  Compiler& compiler = Compiler::instance();
  EXPECT_EQ(&Compiler::instance(), &compiler);
  EXPECT_EQ(compiler.config().cache_dir, tmp.path() / "cache");
  EXPECT_EQ(compiler.config().max_cache_bytes, 12345678u);
  const EntryFn entry = compiler.get_kernel(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu);
  EXPECT_TRUE(saxpy_works(entry, 2.0f));
  EXPECT_EQ(testing::cached_ids(compiler.cache()).size(), 1u);
}

TEST(Compiler, SecondRequestIsAMemoryHit) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  const Kernel first = compiler.load(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu);
  EXPECT_EQ(first.source, KernelSource::kCompiled);
  const Kernel second = compiler.load(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu);
  EXPECT_EQ(second.source, KernelSource::kMemory);
  EXPECT_EQ(second.entry, first.entry);
  EXPECT_EQ(second.id, first.id);
  EXPECT_EQ(compiler.get_kernel(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu), first.entry);
  const CompilerStats stats = compiler.stats();
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.memory_hits, 2u);
  EXPECT_EQ(stats.disk_hits, 0u);
  EXPECT_GT(stats.compile_seconds, 0.0);
}

TEST(Compiler, AnotherSpellingOfTheSameKernelSharesItsLoad) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  const Kernel a = compiler.load(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu);
  const std::string dotted = std::string(TG_TEST_SOURCE_DIR) + "/unit/jit/./kernels/saxpy.cpp";
  const Kernel b = compiler.load(dotted, kScale2, KernelType::kCpu);
  EXPECT_EQ(b.id, a.id);
  EXPECT_EQ(b.entry, a.entry);
  EXPECT_EQ(b.source, KernelSource::kMemory);
}

TEST(Compiler, AFreshCompilerLoadsFromDisk) {
  TempDir tmp;
  std::string id;
  {
    Compiler first(test_config(tmp.path()));
    id = first.load(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu).id;
  }
  Compiler second(test_config(tmp.path()));
  const Kernel kernel = second.load(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu);
  EXPECT_EQ(kernel.source, KernelSource::kDisk);
  EXPECT_EQ(kernel.id, id);
  EXPECT_TRUE(saxpy_works(kernel.entry, 2.0f));
  EXPECT_EQ(second.stats().disk_hits, 1u);
  EXPECT_EQ(second.stats().compiles, 0u);
}

TEST(Compiler, GeneratedSourceIsCachedByContent) {
  TempDir tmp;
  const std::string source = testing::read_text(kernel_template("saxpy.cpp"));
  const std::vector<std::string> includes = {std::string(TG_TEST_SOURCE_DIR) + "/unit/jit/kernels"};
  std::string id;
  {
    Compiler compiler(test_config(tmp.path()));
    const Kernel first = compiler.load_source(source, kScale2, KernelType::kCpu, includes);
    EXPECT_EQ(first.source, KernelSource::kCompiled);
    EXPECT_TRUE(saxpy_works(first.entry, 2.0f));
    const Kernel again = compiler.load_source(source, kScale2, KernelType::kCpu, includes);
    EXPECT_EQ(again.source, KernelSource::kMemory);
    EXPECT_EQ(again.id, first.id);
    EXPECT_EQ(files_in(compiler.cache(), "sources"), 1u);
    const Kernel other = compiler.load_source(source + "\n// another kernel\n", kScale2, KernelType::kCpu, includes);
    EXPECT_NE(other.id, first.id);
    EXPECT_EQ(files_in(compiler.cache(), "sources"), 2u);
    id = first.id;
  }
  // A fresh process finds the same file, hence the same id, on disk; clear() drops the sources
  // and a later request writes them again.
  Compiler compiler(test_config(tmp.path()));
  EXPECT_EQ(compiler.load_source(source, kScale2, KernelType::kCpu, includes).source, KernelSource::kDisk);
  compiler.cache().clear();
  EXPECT_EQ(files_in(compiler.cache(), "sources"), 0u);
  Compiler after_clear(test_config(tmp.path()));
  const Kernel rebuilt = after_clear.load_source(source, kScale2, KernelType::kCpu, includes);
  EXPECT_EQ(rebuilt.id, id);
  EXPECT_TRUE(saxpy_works(rebuilt.entry, 2.0f));
}

TEST(Compiler, ManifestDescribesTheEntry) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  const Kernel kernel = compiler.load(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu);
  const std::vector<CacheEntryInfo> entries = compiler.cache().list();
  ASSERT_EQ(entries.size(), 1u);
  ASSERT_TRUE(entries[0].manifest);
  const Manifest& m = *entries[0].manifest;
  EXPECT_EQ(m.id, kernel.id);
  EXPECT_EQ(kernel_id(m.key), kernel.id);  // the id can be recomputed from the manifest
  EXPECT_EQ(m.sha256, sha256_file(compiler.cache().kernel_path(kernel.id)));
  EXPECT_EQ(m.size, std::filesystem::file_size(compiler.cache().kernel_path(kernel.id)));
  EXPECT_GT(m.created_ms, 0);
  EXPECT_GE(m.last_used_ms, m.created_ms);
  EXPECT_EQ(m.template_path(), std::filesystem::canonical(kernel_template("saxpy.cpp")).string());
  EXPECT_NE(m.macros().find("SCALE=2&__ARCH__="), std::string::npos) << m.macros();
  const nlohmann::json json = m.to_json();
  for (const char* field : {"id", "inputs", "compiler", "flags", "sha256", "size", "created", "last_used"}) {
    EXPECT_TRUE(json.contains(field)) << field;
  }
  EXPECT_FALSE(json["compiler"]["version"].get<std::string>().empty());
  bool header_listed = false;
  for (const auto& h : json["inputs"]["headers"]) {
    header_listed = header_listed || h["path"].get<std::string>().ends_with("saxpy_params.h");
  }
  EXPECT_TRUE(header_listed) << json["inputs"].dump(2);
  EXPECT_TRUE(entries[0].in_use);
  EXPECT_EQ(files_in(compiler.cache(), "tmp"), 0u);
  EXPECT_EQ(files_in(compiler.cache(), "deps"), 1u);
}

TEST(Compiler, IdIsStableAcrossCompilersAndProcesses) {
  TempDir tmp;
  Compiler a(test_config(tmp.path()));
  const std::string id = a.kernel_id(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu);
  EXPECT_EQ(a.kernel_id(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu), id);
  TempDir other;
  Compiler b(test_config(other.path()));
  EXPECT_EQ(b.kernel_id(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu), id);
  EXPECT_EQ(b.load(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu).id, id);
}

TEST(Compiler, MacroOrderDoesNotChangeTheId) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  MacroMap a;
  a.set("SCALE", "2");
  a.set("UNUSED", "1");
  MacroMap b;
  b.set("UNUSED", "1");
  b.set("SCALE", "2");
  EXPECT_EQ(compiler.kernel_id(kernel_template("saxpy.cpp"), a, KernelType::kCpu),
            compiler.kernel_id(kernel_template("saxpy.cpp"), b, KernelType::kCpu));
}

TEST(Compiler, IdChangesWithMacrosAndIncludeDirs) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  const std::string t = kernel_template("saxpy.cpp");
  std::set<std::string> ids;
  ids.insert(compiler.kernel_id(t, kScale2, KernelType::kCpu));
  ids.insert(compiler.kernel_id(t, {{"SCALE", "3"}}, KernelType::kCpu));
  ids.insert(compiler.kernel_id(t, {{"SCALE", "2"}, {"UNUSED", "1"}}, KernelType::kCpu));
  ids.insert(compiler.kernel_id(t, kScale2, KernelType::kCpu, {tmp.path().string()}));
  EXPECT_EQ(ids.size(), 4u);
}

TEST(Compiler, IdChangesWhenTheTemplateChanges) {
  TempDir tmp;
  EditableKernel kernel;
  Compiler compiler(test_config(tmp.path()));
  const Kernel before = compiler.load(kernel.source.string(), kScale2, KernelType::kCpu);
  testing::write_text(kernel.source, testing::read_text(kernel.source) + "// edited\n");
  const std::string after = compiler.kernel_id(kernel.source.string(), kScale2, KernelType::kCpu);
  EXPECT_NE(after, before.id);
  // The loaded kernel stays what this process resolved; a new process sees the edit.
  EXPECT_EQ(compiler.load(kernel.source.string(), kScale2, KernelType::kCpu).id, before.id);
  Compiler fresh(test_config(tmp.path()));
  EXPECT_EQ(fresh.load(kernel.source.string(), kScale2, KernelType::kCpu).id, after);
}

TEST(Compiler, IdChangesWhenAnIncludedHeaderChanges) {
  TempDir tmp;
  EditableKernel kernel;
  std::string before;
  {
    Compiler compiler(test_config(tmp.path()));
    before = compiler.load(kernel.source.string(), kScale2, KernelType::kCpu).id;
  }
  // Same size, within the same second: only the content differs.
  std::string header = testing::read_text(kernel.header);
  const size_t pos = header.find("int64_t n;");
  ASSERT_NE(pos, std::string::npos);
  header.replace(pos, 10, "int64_t n;");  // identical text first: the id must not move
  testing::write_text(kernel.header, header);
  Compiler same(test_config(tmp.path()));
  EXPECT_EQ(same.kernel_id(kernel.source.string(), kScale2, KernelType::kCpu), before);
  header.replace(pos, 10, "int64_t N;");
  testing::write_text(kernel.header, header);
  Compiler edited(test_config(tmp.path()));
  EXPECT_NE(edited.kernel_id(kernel.source.string(), kScale2, KernelType::kCpu), before);
}

TEST(Compiler, IdChangesWhenANewHeaderIsIncluded) {
  TempDir tmp;
  EditableKernel kernel;
  Compiler compiler(test_config(tmp.path()));
  const std::string before = compiler.kernel_id(kernel.source.string(), kScale2, KernelType::kCpu);
  testing::write_text(kernel.dir.path() / "extra.h", "#pragma once\n");
  testing::write_text(kernel.source, "#include \"extra.h\"\n" + testing::read_text(kernel.source));
  const std::string after = compiler.kernel_id(kernel.source.string(), kScale2, KernelType::kCpu);
  EXPECT_NE(after, before);
  testing::write_text(kernel.dir.path() / "extra.h", "#pragma once\n#define EXTRA 1\n");
  EXPECT_NE(compiler.kernel_id(kernel.source.string(), kScale2, KernelType::kCpu), after);
}

TEST(Compiler, IdChangesWithTheCompilerPathAndVersion) {
  TempDir tmp;
  Config config = test_config(tmp.path());
  const std::string t = kernel_template("saxpy.cpp");
  const std::string base = Compiler(config).kernel_id(t, kScale2, KernelType::kCpu);

  // The same compiler binary through another path: a new id (the key names the path).
  const std::string gxx = find_executable("g++");
  const std::string configured = find_executable(config.cxx);
  if (!gxx.empty() && gxx != configured) {
    config.cxx = gxx;
    EXPECT_NE(Compiler(config).kernel_id(t, kScale2, KernelType::kCpu), base);
  }
  // Another compiler entirely: a new path and version.
  const std::string clang = find_executable("clang++");
  if (clang.empty()) GTEST_SKIP() << "clang++ not installed: version sensitivity not tested";
  config.cxx = clang;
  Compiler with_clang(config);
  const Kernel kernel = with_clang.load(t, kScale2, KernelType::kCpu);
  EXPECT_NE(kernel.id, base);
  EXPECT_TRUE(saxpy_works(kernel.entry, 2.0f));
  EXPECT_NE(with_clang.cache().list()[0].manifest->key["compiler"]["version"].get<std::string>().find("clang"),
            std::string::npos);
}

TEST(Compiler, RecordedStampsAreTrustedOnlyWhileTheFileIsUnchanged) {
  // A fresh process trusts the recorded compiler version and header hashes while the files'
  // stat stamps match, and only for files that had settled when recorded: wait for that, then
  // change a header and the compiler in place, keeping their sizes.
  TempDir tmp;
  EditableKernel kernel;
  const std::filesystem::path cc = tmp.path() / "cc";
  auto write_compiler = [&](const char* version) {
    testing::write_text(cc, std::string("#!/bin/sh\nif [ \"$1\" = --version ]; then echo ") + version +
                                "; exit 0; fi\nexec " + find_executable(Config::from_env().cxx) + " \"$@\"\n");
    std::filesystem::permissions(cc, std::filesystem::perms::owner_all);
  };
  write_compiler("wrapper-1.0");
  Config config = test_config(tmp.path());
  config.cxx = cc.string();
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  const std::string t = kernel.source.string();
  const std::string first = Compiler(config).load(t, kScale2, KernelType::kCpu).id;
  EXPECT_EQ(Compiler(config).load(t, kScale2, KernelType::kCpu).source, KernelSource::kDisk);

  std::string header = testing::read_text(kernel.header);
  header.replace(header.find("int64_t n;"), 10, "int64_t N;");
  testing::write_text(kernel.header, header);
  const std::string header_changed = Compiler(config).kernel_id(t, kScale2, KernelType::kCpu);
  EXPECT_NE(header_changed, first);

  write_compiler("wrapper-2.0");
  EXPECT_NE(Compiler(config).kernel_id(t, kScale2, KernelType::kCpu), header_changed);
}

TEST(Compiler, HostileMacrosAreRejectedBeforeAnyCompile) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  const std::vector<MacroMap> hostile = {
      {{"SCALE", "2 -o /tmp/evil.so"}},
      {{"SCALE", "\"2\""}},
      {{"SCALE", "'2'"}},
      {{"SCALE", "2;touch /tmp/x"}},
      {{"SCALE", "$(touch /tmp/x)"}},
      {{"SCALE", "`id`"}},
      {{"SCALE", "2\n#include <x>"}},
      {{"SCALE", "-o"}},
      {{"-o", "/tmp/evil.so"}},
      {{"SCALE X", "2"}},
      {{"SCALE;", "2"}},
      {{"SCALE\n", "2"}},
      {{"SCALE", "2"}, {"A B", "1"}},
      {{"SCALE", ""}},
      {{"__KT__", "cuda"}},
  };
  for (const MacroMap& macros : hostile) {
    const std::string message =
        error_of([&] { compiler.get_kernel(kernel_template("saxpy.cpp"), macros, KernelType::kCpu); });
    EXPECT_NE(message.find("rejected"), std::string::npos) << message;
    EXPECT_THROW(compiler.kernel_id(kernel_template("saxpy.cpp"), macros, KernelType::kCpu), Error);
  }
  EXPECT_EQ(compiler.stats().compiles, 0u);
  EXPECT_TRUE(cached_ids(compiler.cache()).empty());
  for (const char* sub : {"kernels", "deps", "toolchains", "tmp"})
    EXPECT_EQ(files_in(compiler.cache(), sub), 0u) << sub;
}

TEST(Compiler, CompileErrorCarriesDiagnosticsAndLeavesNothing) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  const std::string message =
      error_of([&] { compiler.get_kernel(kernel_template("broken.cpp"), {}, KernelType::kCpu); });
  EXPECT_NE(message.find("this_identifier_is_not_declared_anywhere"), std::string::npos) << message;
  EXPECT_NE(message.find("error"), std::string::npos) << message;
  EXPECT_NE(message.find("broken.cpp"), std::string::npos) << message;
  EXPECT_NE(message.find("command: "), std::string::npos) << message;
  EXPECT_TRUE(cached_ids(compiler.cache()).empty());
  for (const char* sub : {"kernels", "deps", "tmp"}) EXPECT_EQ(files_in(compiler.cache(), sub), 0u) << sub;
  // Not remembered as a failure: fixing the template is enough.
  EXPECT_THROW(compiler.get_kernel(kernel_template("broken.cpp"), {}, KernelType::kCpu), Error);
}

TEST(Compiler, TemplateWithoutRunIsRejectedAndNotCached) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  const std::string message =
      error_of([&] { compiler.get_kernel(kernel_template("no_entry.cpp"), {}, KernelType::kCpu); });
  EXPECT_NE(message.find("defines no extern \"C\" run"), std::string::npos) << message;
  EXPECT_TRUE(cached_ids(compiler.cache()).empty());
  EXPECT_EQ(files_in(compiler.cache(), "tmp"), 0u);
}

TEST(Compiler, MissingTemplateOrIncludeDirIsAClearError) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  EXPECT_NE(error_of([&] { compiler.get_kernel(kernel_template("nope.cpp"), {}, KernelType::kCpu); }).find("template"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              compiler.get_kernel(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu, {"/no/such/dir"});
            }).find("include directory"),
            std::string::npos);
}

TEST(Compiler, TemplateMustBeARegularFile) {
  TempDir tmp;
  const std::filesystem::path fifo = tmp.path() / "f.cpp";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Compiler compiler(test_config(tmp.path()));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {fifo.string(), "is a FIFO, not a regular file"},            // the compiler would wait for a writer
      {"/dev/zero", "is a character device, not a regular file"},  // and read this for ever
      {tmp.path().string(), "is a directory, not a regular file"}};
  for (const auto& [path, problem] : cases) {
    const std::string message = error_of([&] { compiler.get_kernel(path, kScale2, KernelType::kCpu); });
    EXPECT_NE(message.find("template '" + path + "' " + problem), std::string::npos) << message;
    EXPECT_THROW(compiler.load(path, kScale2, KernelType::kCpu), Error);
  }
  // Refused before any program ran: not even the compiler's version was asked for.
  EXPECT_EQ(files_in(compiler.cache(), "toolchains"), 0u);
}

TEST(Compiler, AMissingConfiguredCompilerIsNamed) {
  TempDir tmp;
  Config config = test_config(tmp.path());
  config.cxx = "/nonexistent/c++";
  config.nvcc = "/nonexistent/nvcc";
  Compiler compiler(config);
  EXPECT_EQ(error_of([&] { compiler.get_kernel(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu); }),
            "jit: the C++ compiler TG_JIT_CXX='/nonexistent/c++' does not exist");
  EXPECT_EQ(error_of([&] {
              compiler.get_kernel(kernel_template("fill.cu"), {{"VALUE", "7"}}, KernelType::kCuda);
            }),
            "jit: cuda kernels need nvcc, and TG_JIT_NVCC='/nonexistent/nvcc' does not exist");
}

TEST(Compiler, PathsNeedNotBeUtf8) {
  TempDir tmp;
  const std::filesystem::path dir = std::filesystem::canonical(tmp.path()) /
                                    "k\xfe"
                                    "dir";
  std::filesystem::create_directory(dir);
  std::filesystem::copy_file(kernel_template("saxpy.cpp"), dir / "saxpy.cpp");
  std::filesystem::copy_file(kernel_template("saxpy_params.h"), dir / "saxpy_params.h");
  // The same file under a name that reads like the escaped form of the other.
  std::filesystem::create_directory(tmp.path() / "k%FEdir");
  std::filesystem::copy_file(dir / "saxpy.cpp", tmp.path() / "k%FEdir" / "saxpy.cpp");
  std::filesystem::copy_file(dir / "saxpy_params.h", tmp.path() / "k%FEdir" / "saxpy_params.h");
  Config config = test_config(tmp.path());
  config.cache_dir = tmp.path() /
                     "c\xff"
                     "ache";
  const std::string source = (dir / "saxpy.cpp").string();
  std::string id;
  {
    Compiler compiler(config);
    const Kernel kernel = compiler.load(source, kScale2, KernelType::kCpu);
    EXPECT_EQ(kernel.source, KernelSource::kCompiled);
    EXPECT_TRUE(saxpy_works(kernel.entry, 2.0f));
    const Manifest m = *compiler.cache().list()[0].manifest;
    EXPECT_EQ(m.template_path(), source);
    EXPECT_EQ(kernel_id(m.key), kernel.id);
    id = kernel.id;
    EXPECT_NE(compiler.kernel_id((tmp.path() / "k%FEdir" / "saxpy.cpp").string(), kScale2, KernelType::kCpu), id);
  }
  Compiler fresh(config);
  const Kernel again = fresh.load(source, kScale2, KernelType::kCpu);
  EXPECT_EQ(again.source, KernelSource::kDisk);
  EXPECT_EQ(again.id, id);
  const Kernel generated = fresh.load_source(testing::read_text(source), kScale2, KernelType::kCpu, {dir.string()});
  EXPECT_TRUE(saxpy_works(generated.entry, 2.0f));
}

TEST(Compiler, MissingHeaderIsReportedWithDiagnostics) {
  TempDir tmp;
  const std::filesystem::path source = tmp.path() / "k.cpp";
  testing::write_text(source, "#include \"does_not_exist.h\"\n");
  Compiler compiler(test_config(tmp.path()));
  const std::string message = error_of([&] { compiler.get_kernel(source.string(), {}, KernelType::kCpu); });
  EXPECT_NE(message.find("does_not_exist.h"), std::string::npos) << message;
  EXPECT_TRUE(cached_ids(compiler.cache()).empty());
}

// A header the checks on the template cannot see: the compiler blocks opening it. The time limit
// ends the wait, and the request fails naming it.
TEST(Compiler, ACompilerPastTheTimeLimitIsKilled) {
  TempDir tmp;
  const std::filesystem::path fifo = tmp.path() / "blocks.h";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::filesystem::path source = tmp.path() / "k.cpp";
  testing::write_text(source, "#include \"blocks.h\"\n");
  Config config = test_config(tmp.path());
  config.compile_timeout = std::chrono::seconds(1);
  Compiler compiler(config);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_of([&] { compiler.get_kernel(source.string(), {}, KernelType::kCpu); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_NE(message.find("killed after running for 1 s, the time limit"), std::string::npos) << message;
  EXPECT_TRUE(cached_ids(compiler.cache()).empty());
}

TEST(Compiler, ThreadsAskingForOneNewKernelCompileItOnce) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  constexpr int kThreads = 8;
  std::vector<EntryFn> entries(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      entries[size_t(i)] = compiler.get_kernel(kernel_template("saxpy.cpp"), {{"SCALE", "5"}}, KernelType::kCpu);
    });
  }
  for (std::thread& t : threads) t.join();
  for (EntryFn e : entries) EXPECT_EQ(e, entries[0]);
  EXPECT_TRUE(saxpy_works(entries[0], 5.0f));
  const CompilerStats stats = compiler.stats();
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.compiles + stats.memory_hits + stats.disk_hits, uint64_t(kThreads));
}

TEST(Compiler, CudaKernelBuildsWithNvcc) {
  Config config = Config::from_env();
  if (find_executable(config.nvcc).empty() && find_executable("/usr/local/cuda/bin/nvcc").empty()) {
    GTEST_SKIP() << "nvcc not found";
  }
  TempDir tmp;
  config.cache_dir = tmp.path() / "cache";
  Compiler compiler(config);
  const Kernel kernel = compiler.load(kernel_template("fill.cu"), {{"VALUE", "7"}}, KernelType::kCuda);
  EXPECT_EQ(kernel.source, KernelSource::kCompiled);
  std::vector<float> y(10, 0.0f);
  const SaxpyParams params{10, nullptr, y.data()};
  kernel.entry(1, nullptr, &params);
  for (float v : y) EXPECT_EQ(v, 7.0f);
  EXPECT_NE(kernel.id, compiler.kernel_id(kernel_template("fill.cu"), {{"VALUE", "8"}}, KernelType::kCuda));
  EXPECT_NE(compiler.cache().list()[0].manifest->macros().find("__KT__=cuda&"), std::string::npos);
}

}  // namespace
}  // namespace tg::jit
