// decode_utf8 against RFC 3629: every length, the boundaries of each range, and what is refused.
#include "tilegraph/core/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace tg {
namespace {

TEST(Utf8, DecodesEveryLengthAtItsBoundaries) {
  const struct {
    std::string bytes;
    size_t length;
    uint32_t code_point;
  } valid[] = {
      {std::string(1, '\0'), 1, 0},
      {"\x7f", 1, 0x7F},
      {"\xc2\x80", 2, 0x80},
      {"\xdf\xbf", 2, 0x7FF},
      {"\xe0\xa0\x80", 3, 0x800},
      {"\xed\x9f\xbf", 3, 0xD7FF},
      {"\xee\x80\x80", 3, 0xE000},
      {"\xef\xbf\xbf", 3, 0xFFFF},
      {"\xf0\x90\x80\x80", 4, 0x10000},
      {"\xf4\x8f\xbf\xbf", 4, 0x10FFFF},
      {"\xe2\x96\x81", 3, 0x2581},
  };
  for (const auto& v : valid) {
    const Utf8Char c = decode_utf8(v.bytes + "x", 0);
    EXPECT_EQ(c.length, v.length) << std::hex << v.code_point;
    EXPECT_EQ(c.code_point, v.code_point);
  }
  EXPECT_EQ(decode_utf8("a\xc3\xa9", 1).code_point, 0xE9u);
}

TEST(Utf8, RefusesWhatRfc3629Excludes) {
  for (const std::string bytes : {
           "\x80",              // a continuation byte alone
           "\xc0\xaf",          // overlong (also C1)
           "\xe0\x9f\xbf",      // overlong three-byte
           "\xed\xa0\x80",      // a surrogate
           "\xf0\x8f\xbf\xbf",  // overlong four-byte
           "\xf4\x90\x80\x80",  // above U+10FFFF
           "\xf5\x80\x80\x80",  // a lead byte that never occurs
           "\xff",
           "\xe2\x96",      // cut short by the end
           "\xe2\x41\x81",  // a non-continuation inside
       }) {
    EXPECT_EQ(decode_utf8(bytes, 0).length, 0u) << testing::PrintToString(bytes);
  }
}

}  // namespace
}  // namespace tg
