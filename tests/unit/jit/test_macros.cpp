// Macro validation: everything a caller passes ends up as a compiler argument, so only
// identifiers and plain tokens get through.
#include <gtest/gtest.h>

#include <iterator>
#include <vector>

#include "tilegraph/core/error.h"
#include "tilegraph/jit/macros.h"

namespace tg::jit {
namespace {

TEST(MacroMap, KeepsNamesSortedAndUnique) {
  MacroMap m = {{"Z", "1"}, {"A", "2"}, {"M", "3"}, {"A", "ignored"}};
  std::vector<std::string> names;
  for (const auto& [name, value] : m) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"A", "M", "Z"}));
  EXPECT_EQ(*m.find("A"), "2");  // as with std::map, the first of repeated names is kept
  EXPECT_FALSE(m.insert("M", "4"));
  EXPECT_EQ(*m.find("M"), "3");
  EXPECT_TRUE(m.insert("B", "5"));
  m.set("C", "6");
  m.set("Z", "7");
  EXPECT_EQ(m.size(), 5u);
  EXPECT_EQ(m.begin()->first, "A");
  EXPECT_EQ(std::next(m.begin())->first, "B");
  EXPECT_TRUE(m.erase("B"));
  EXPECT_FALSE(m.erase("B"));
  EXPECT_EQ(m.find("B"), nullptr);
  EXPECT_EQ(m, (MacroMap{{"Z", "7"}, {"C", "6"}, {"A", "2"}, {"M", "3"}}));
  m.clear();
  EXPECT_TRUE(m.empty());
}

TEST(Macros, AcceptsIdentifiersQualifiedNamesAndNumbers) {
  for (const char* name : {"A", "SCALE", "CATLASS_JIT_ELEMENT_A", "_x9", "tile_m"}) {
    EXPECT_TRUE(is_macro_name(name)) << name;
  }
  for (const char* value :
       {"half", "tg::Float16", "::std::int8_t", "128", "-1", "0x1F", "1.5e-3f", "2.0f", "1e+5", "0x1p-3"}) {
    EXPECT_TRUE(is_macro_value(value)) << value;
  }
  EXPECT_NO_THROW(validate_macros({{"SCALE", "2.0f"}, {"ELEMENT", "float"}}));
}

TEST(Macros, RejectsHostileNames) {
  for (const char* name :
       {"", "1A", "A B", "A;B", "A$(id)", "A\nB", "-o", "A=B", "A\"", "A'", "__ARCH__", "__KT__", "a-b", "A`id`"}) {
    EXPECT_FALSE(is_macro_name(name)) << name;
    EXPECT_THROW(validate_macros({{name, "1"}}), Error) << name;
  }
  EXPECT_FALSE(is_macro_name(std::string(129, 'A')));
}

TEST(Macros, RejectsHostileValues) {
  for (const char* value : {"",
                            "1 -o /tmp/x",
                            "a b",
                            "\"quoted\"",
                            "'quoted'",
                            "1;rm -rf /",
                            "$(touch /tmp/pwned)",
                            "`id`",
                            "1\n#include </etc/passwd>",
                            "-o",
                            "-DX=1",
                            "a&b",
                            "a=b",
                            "x:y",
                            ":::a",
                            "a::",
                            "a::::b",
                            "1 ",
                            "\t1",
                            "--",
                            "-",
                            "a\\b",
                            "1'000"}) {
    EXPECT_FALSE(is_macro_value(value)) << value;
    EXPECT_THROW(validate_macros({{"A", value}}), Error) << value;
  }
  EXPECT_FALSE(is_macro_value(std::string("a\0b", 3)));
  EXPECT_FALSE(is_macro_value(std::string(257, '1')));
}

TEST(Macros, ErrorNamesTheMacroAndShowsControlCharacters) {
  try {
    validate_macros({{"GOOD", "1"}, {"BAD", "1\nrm"}});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("BAD='1\\x0arm'"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Macros, CanonicalStringIsTheSortedKeyValueList) {
  MacroMap macros;
  macros.set("ELEMENT_B", "half");
  macros.set("ELEMENT_A", "float");
  EXPECT_EQ(canonical_macros(macros, "x86_64", KernelType::kCpu),
            "ELEMENT_A=float&ELEMENT_B=half&__ARCH__=x86_64&__KT__=cpu&");
  EXPECT_EQ(canonical_macros({}, "sm_75", KernelType::kCuda), "__ARCH__=sm_75&__KT__=cuda&");
}

}  // namespace
}  // namespace tg::jit
