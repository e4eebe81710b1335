// The kernel id as a pure function of its inputs: stable, and different whenever any input that
// decides the compiled code is different.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>
#include <set>

#include "escape.h"
#include "jit_test_utils.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/kernel_id.h"
#include "tilegraph/jit/sha256.h"

namespace tg::jit {
namespace {

KernelKeyInputs base_inputs() {
  KernelKeyInputs in;
  in.macros = {{"SCALE", "2"}, {"ELEMENT", "float"}};
  in.arch = "x86_64";
  in.kernel_type = KernelType::kCpu;
  in.template_source = {"/src/k.cpp", std::string(64, 'a')};
  in.headers = {{"/src/k.h", std::string(64, 'b')}, {"/usr/include/stdint.h", std::string(64, 'c')}};
  in.compiler_path = "/usr/bin/c++";
  in.compiler_version = "c++ (Debian 12.2.0-14) 12.2.0";
  in.flags = {"-std=c++20", "-O2", "-fPIC", "-shared", "-DELEMENT=float", "-DSCALE=2"};
  in.tilegraph_version = "0.1.0";
  return in;
}

TEST(KernelId, IsStable64HexDigits) {
  const std::string id = kernel_id(base_inputs());
  EXPECT_EQ(id.size(), 64u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(kernel_id(base_inputs()), id);
  EXPECT_EQ(kernel_id(key_material(base_inputs())), id);
}

TEST(KernelId, IsTheSha256OfTheKeyMaterial) {
  const nlohmann::json key = key_material(base_inputs());
  EXPECT_EQ(kernel_id(base_inputs()), sha256_hex(key.dump()));
  EXPECT_EQ(key["inputs"]["macros"], "ELEMENT=float&SCALE=2&__ARCH__=x86_64&__KT__=cpu&");
}

TEST(KernelId, ChangesWithEveryInput) {
  const std::vector<std::pair<const char*, std::function<void(KernelKeyInputs&)>>> changes = {
      {"macro value", [](KernelKeyInputs& in) { in.macros.set("SCALE", "3"); }},
      {"macro added", [](KernelKeyInputs& in) { in.macros.set("EXTRA", "1"); }},
      {"macro removed", [](KernelKeyInputs& in) { in.macros.erase("ELEMENT"); }},
      {"macro renamed",
       [](KernelKeyInputs& in) {
         in.macros.erase("SCALE");
         in.macros.set("SCALE2", "2");
       }},
      {"arch", [](KernelKeyInputs& in) { in.arch = "aarch64"; }},
      {"kernel type", [](KernelKeyInputs& in) { in.kernel_type = KernelType::kCuda; }},
      {"template content", [](KernelKeyInputs& in) { in.template_source.sha256[0] = 'f'; }},
      {"template path", [](KernelKeyInputs& in) { in.template_source.path = "/src/other.cpp"; }},
      {"header content", [](KernelKeyInputs& in) { in.headers[1].sha256[5] = 'f'; }},
      {"header added",
       [](KernelKeyInputs& in) {
         in.headers.push_back({"/src/more.h", std::string(64, 'd')});
       }},
      {"header removed", [](KernelKeyInputs& in) { in.headers.pop_back(); }},
      {"compiler path", [](KernelKeyInputs& in) { in.compiler_path = "/usr/bin/g++-12"; }},
      {"compiler version", [](KernelKeyInputs& in) { in.compiler_version += "-1"; }},
      {"flag changed", [](KernelKeyInputs& in) { in.flags[1] = "-O3"; }},
      {"flag added", [](KernelKeyInputs& in) { in.flags.push_back("-ffast-math"); }},
      {"flags reordered", [](KernelKeyInputs& in) { std::swap(in.flags[0], in.flags[1]); }},
      {"tilegraph version", [](KernelKeyInputs& in) { in.tilegraph_version = "0.2.0"; }},
  };
  std::set<std::string> ids = {kernel_id(base_inputs())};
  for (const auto& [what, change] : changes) {
    KernelKeyInputs in = base_inputs();
    change(in);
    EXPECT_TRUE(ids.insert(kernel_id(in)).second) << what << " did not change the id";
  }
}

TEST(KernelId, IgnoresTheOrderMacrosWereGivenIn) {
  KernelKeyInputs a = base_inputs();
  KernelKeyInputs b = base_inputs();
  a.macros.clear();
  b.macros.clear();
  for (const char* name : {"Z", "A", "M"}) a.macros.set(name, "1");
  for (const char* name : {"M", "Z", "A"}) b.macros.set(name, "1");
  EXPECT_EQ(kernel_id(a), kernel_id(b));
}

TEST(KernelId, FieldBoundariesCannotBeShifted) {
  // The same characters split differently between fields must not collide.
  KernelKeyInputs a = base_inputs();
  KernelKeyInputs b = base_inputs();
  a.flags = {"-DA=1", "-DB=2"};
  b.flags = {"-DA=1-DB=2"};
  EXPECT_NE(kernel_id(a), kernel_id(b));
  a = base_inputs();
  b = base_inputs();
  a.compiler_path = "/usr/bin/c++x";
  b.compiler_version = "x" + b.compiler_version;
  EXPECT_NE(kernel_id(a), kernel_id(b));
}

TEST(KernelId, PathsMayHoldAnyBytes) {
  // Paths are bytes; JSON, hence the key, is UTF-8. Each of these is a different file.
  const std::vector<std::string> paths = {
      "/src/k\xff.cpp",         "/src/k\xfe.cpp",     "/src/k%FF.cpp", "/src/k%25FF.cpp", "/src/k%.cpp",
      "/src/k\xc3\xa9.cpp",                            // é: valid UTF-8
      "/src/k\xc3.cpp",                                // a truncated sequence
      "/src/k\xed\xa0\x80.cpp", "/src/k\xc0\xaf.cpp",  // a surrogate, an overlong '/'
  };
  std::set<std::string> ids;
  for (const std::string& path : paths) {
    KernelKeyInputs in = base_inputs();
    in.template_source.path = path;
    in.headers[0].path = path + ".h";
    in.compiler_path = path + "-c++";
    in.compiler_version = path;
    in.flags.push_back("-I" + path);
    EXPECT_TRUE(ids.insert(kernel_id(in)).second) << path;
  }
  KernelKeyInputs in = base_inputs();
  in.template_source.path = "/src/k\xff.cpp";
  EXPECT_EQ(key_material(in)["inputs"]["template"]["path"], "/src/k%FF.cpp");
  in.template_source.path = "/src/k\xc3\xa9.cpp";
  EXPECT_EQ(key_material(in)["inputs"]["template"]["path"], "/src/k\xc3\xa9.cpp");
}

TEST(EscapeBytes, KeepsUtf8AndRoundTrips) {
  EXPECT_EQ(escape_bytes("/home/user/kernels/saxpy.cpp"), "/home/user/kernels/saxpy.cpp");
  EXPECT_EQ(escape_bytes("/k/\xe2\x82\xac/\xf0\x9f\x98\x80"), "/k/\xe2\x82\xac/\xf0\x9f\x98\x80");
  EXPECT_EQ(escape_bytes("100%"), "100%25");
  EXPECT_EQ(escape_bytes("a\xff\x80z"), "a%FF%80z");
  EXPECT_EQ(escape_bytes("\xe2\x82"), "%E2%82");                // cut short
  EXPECT_EQ(escape_bytes("\xf4\x90\x80\x80"), "%F4%90%80%80");  // above U+10FFFF
  std::string all;
  for (int b = 0; b < 256; ++b) all += char(b);
  for (const std::string& bytes : {all, std::string("%%41%"), std::string("\xe2\x82\xac%E2")}) {
    EXPECT_EQ(unescape_bytes(escape_bytes(bytes)), bytes);
  }
  EXPECT_EQ(unescape_bytes("50%-%4"), "50%-%4");  // not an escape: kept as it is
}

TEST(Sha256, RefusesFilesThatAreNotRegular) {
  testing::TempDir tmp;
  const std::filesystem::path fifo = tmp.path() / "header.h";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Opening the FIFO would wait for a writer, reading /dev/zero never end.
  for (const std::string& path : {fifo.string(), std::string("/dev/zero"), tmp.path().string()}) {
    try {
      sha256_file(path);
      ADD_FAILURE() << path << " was hashed";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
}

TEST(Sha256, MatchesKnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace tg::jit
