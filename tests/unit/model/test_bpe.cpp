// Byte-level BPE pieces: the pre-tokenizers' splits (GPT-2's and llama 3's regex), GPT-2's byte
// alphabet, and the merge loop's order against a plain reference implementation.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "bpe_bytes.h"
#include "bpe_merges.h"
#include "common/expect_error.h"
#include "pretokenizer.h"
#include "tilegraph/core/utf8.h"

namespace tg::model {
namespace {

using test::expect_error;
using Words = std::vector<std::string>;

Words split(std::string_view pattern, std::string_view text) {
  const std::vector<std::string_view> words = Pretokenizer(pattern).split(text);
  return Words(words.begin(), words.end());
}

// The expected splits are Python's `regex` module's findall with the upstream patterns (GPT-2's
// encoder.py, tiktoken's cl100k with (?i:...)): an independent regex engine.
TEST(Pretokenizer, Gpt2SplitsContractionsWordsDigitsAndSpaces) {
  EXPECT_EQ(split(kGpt2Pattern, "I'm sure they'LL say \"it's 12345 dollars\"!"),
            (Words{"I", "'m", " sure", " they", "'", "LL", " say", " \"", "it", "'s", " 12345", " dollars", "\"!"}));
  EXPECT_EQ(split(kGpt2Pattern, "a  b   c \n\n  d\t\te  "),
            (Words{"a", " ", " b", "  ", " c", " \n\n ", " d", "\t", "\t", "e", "  "}));
  EXPECT_EQ(split(kGpt2Pattern, "x=1234567,y=-0.5"), (Words{"x", "=", "1234567", ",", "y", "=-", "0", ".", "5"}));
  EXPECT_EQ(split(kGpt2Pattern, "line1\r\nline2\n\n"), (Words{"line", "1", "\r", "\n", "line", "2", "\n\n"}));
  EXPECT_EQ(split(kGpt2Pattern, "don't DON'T"), (Words{"don", "'t", " DON", "'", "T"}));
  EXPECT_EQ(split(kGpt2Pattern, "  leading"), (Words{" ", " leading"}));
  EXPECT_EQ(split(kGpt2Pattern, "$$$ ...\n"), (Words{"$$$", " ...", "\n"}));
}

TEST(Pretokenizer, Gpt2SplitsNonAsciiLettersCjkAndEmoji) {
  EXPECT_EQ(split(kGpt2Pattern, "h\xc3\xa9llo w\xc3\xb6rld"), (Words{"h\xc3\xa9llo", " w\xc3\xb6rld"}));  // héllo wörld
  // 日本語のテキスト、です。
  EXPECT_EQ(split(kGpt2Pattern, "日本語のテキスト、です。"), (Words{"日本語のテキスト", "、", "です", "。"}));
  EXPECT_EQ(split(kGpt2Pattern, "hi 👋🏽 there!!"), (Words{"hi", " 👋🏽", " there", "!!"}));
  // U+00A0 and U+3000 are Unicode whitespace; U+0660 and U+0661 Arabic-Indic digits.
  EXPECT_EQ(split(kGpt2Pattern, "a\u00a0b\u3000c"), (Words{"a", "\u00a0", "b", "\u3000", "c"}));
  EXPECT_EQ(split(kGpt2Pattern, "a\u3000\u3000b\u0660\u0661"), (Words{"a", "\u3000", "\u3000", "b", "\u0660\u0661"}));
}

TEST(Pretokenizer, Llama3SplitsDigitsInThreesAndKeepsNewlinesWithWhatPrecedesThem) {
  EXPECT_EQ(
      split(kLlama3Pattern, "I'm sure they'LL say \"it's 12345 dollars\"!"),
      (Words{"I", "'m", " sure", " they", "'LL", " say", " \"", "it", "'s", " ", "123", "45", " dollars", "\"!"}));
  EXPECT_EQ(split(kLlama3Pattern, "a  b   c \n\n  d\t\te  "),
            (Words{"a", " ", " b", "  ", " c", " \n\n", " ", " d", "\t", "\te", "  "}));
  EXPECT_EQ(split(kLlama3Pattern, "x=1234567,y=-0.5"), (Words{"x", "=", "123", "456", "7", ",y", "=-", "0", ".", "5"}));
  EXPECT_EQ(split(kLlama3Pattern, "line1\r\nline2\n\n"), (Words{"line", "1", "\r\n", "line", "2", "\n\n"}));
  EXPECT_EQ(split(kLlama3Pattern, "don't DON'T"), (Words{"don", "'t", " DON", "'T"}));
  EXPECT_EQ(split(kLlama3Pattern, "$$$ ...\n"), (Words{"$$$", " ...\n"}));
  // As llama.cpp: only ASCII case variants are contractions, so 'ſt (U+017F folds to s) is one
  // word, where (?i:'s) would give 'ſ and t.
  EXPECT_EQ(split(kLlama3Pattern, "it'\xc5\xbft"), (Words{"it", "'\xc5\xbft"}));
}

TEST(Pretokenizer, Llama3SplitsNonAsciiLettersCjkAndEmoji) {
  EXPECT_EQ(split(kLlama3Pattern, "h\xc3\xa9llo w\xc3\xb6rld"), (Words{"h\xc3\xa9llo", " w\xc3\xb6rld"}));
  EXPECT_EQ(split(kLlama3Pattern, "日本語のテキスト、です。"), (Words{"日本語のテキスト", "、です", "。"}));
  EXPECT_EQ(split(kLlama3Pattern, "hi 👋🏽 there!!"), (Words{"hi", " 👋🏽", " there", "!!"}));
  EXPECT_EQ(split(kLlama3Pattern, "a\u00a0b\u3000c"), (Words{"a", "\u00a0b", "\u3000c"}));
  EXPECT_EQ(split(kLlama3Pattern, "a\u3000\u3000b\u0660\u0661"), (Words{"a", "\u3000", "\u3000b", "\u0660\u0661"}));
}

// PCRE2 refuses invalid UTF-8; such a byte splits as U+FFFD (a symbol) would, keeping its byte.
TEST(Pretokenizer, InvalidUtf8SplitsAsTheReplacementCharacterAndKeepsItsBytes) {
  for (std::string_view pattern : {kGpt2Pattern, kLlama3Pattern}) {
    EXPECT_EQ(split(pattern, "ab\xff\xfe cd \xc3"), (Words{"ab", "\xff\xfe", " cd", " \xc3"}));
    EXPECT_EQ(split(pattern, "\xe2\x82"), (Words{"\xe2\x82"}));  // a character cut short: two bytes
    EXPECT_TRUE(split(pattern, "").empty());
  }
}

// Whatever the bytes, the words are non-empty and together exactly the text.
TEST(Pretokenizer, WordsCoverRandomBytesExactly) {
  std::mt19937 rng(11);
  const Pretokenizer gpt2(kGpt2Pattern), llama3(kLlama3Pattern);
  for (int trial = 0; trial < 300; ++trial) {
    std::string text(rng() % 40, '\0');
    for (char& c : text) c = char(trial % 2 ? rng() % 256 : " \n\ta1'\xc3\xa9"[rng() % 8]);
    for (const Pretokenizer* p : {&gpt2, &llama3}) {
      std::string joined;
      for (std::string_view word : p->split(text)) {
        EXPECT_FALSE(word.empty());
        joined += word;
      }
      EXPECT_EQ(joined, text);
    }
  }
}

// The built-in patterns match every character; others may not.
TEST(Pretokenizer, TextBetweenMatchesIsAWordOfItsOwn) {
  EXPECT_EQ(split("\\p{L}+", "ab, cd!"), (Words{"ab", ", ", "cd", "!"}));
  EXPECT_EQ(split("\\p{L}+", "12"), (Words{"12"}));
}

TEST(Pretokenizer, ABadPatternIsAnError) {
  expect_error([] { Pretokenizer("(\\p{L}"); }, "does not compile");
  expect_error([] { Pretokenizer("x*").split("ab"); }, "matched no text at offset 0");
}

TEST(Gpt2Bytes, TheAlphabetIsABijectionOntoPrintableCodePoints) {
  std::set<uint32_t> code_points;
  for (int b = 0; b < 256; ++b) {
    const uint32_t cp = gpt2_code_point_of_byte(uint8_t(b));
    code_points.insert(cp);
    EXPECT_EQ(gpt2_byte_of_code_point(cp), b);
    // Printable: not C0/C1 controls, not space, not the soft hyphen.
    EXPECT_TRUE(cp > 0x20 && !(cp >= 0x7f && cp <= 0xa0) && cp != 0xad) << "byte " << b << " -> U+" << std::hex << cp;
  }
  EXPECT_EQ(code_points.size(), 256u);
  int mapped = 0;
  for (uint32_t cp = 0; cp < 0x200; ++cp) mapped += gpt2_byte_of_code_point(cp) >= 0;
  EXPECT_EQ(mapped, 256);
  EXPECT_EQ(gpt2_byte_of_code_point(0x10ffff), -1);
  EXPECT_EQ(gpt2_byte_level("a b\n"),
            "a\xc4\xa0"
            "b\xc4\x8a");                                        // aĠbĊ
  EXPECT_EQ(gpt2_byte_level("\xc3\xa9"), "\xc3\x83\xc2\xa9");    // é's bytes: Ã©
  EXPECT_EQ(gpt2_byte_level(std::string(1, '\0')), "\xc4\x80");  // U+0100
}

BpeMerges merges_of(std::vector<std::string> rules) {
  return BpeMerges(
      std::move(rules), [](std::string_view) { return true; }, "merges");
}

std::vector<std::string> merge_word(const BpeMerges& merges, std::string_view word) {
  const std::vector<std::string_view> pieces = merges.apply(word);
  return {pieces.begin(), pieces.end()};
}

TEST(BpeMerges, TheLowestRankMergesFirst) {
  // b+c (0) before a+b (1): a|bc|d, then bc+d (2), then a+bcd (3). Highest rank first would stop
  // at ab|c|d, which no rule merges further.
  const BpeMerges m = merges_of({"b c", "a b", "bc d", "a bcd"});
  EXPECT_EQ(merge_word(m, "abcd"), (Words{"abcd"}));
  EXPECT_EQ(m.rank("a", "b"), 1);
  EXPECT_EQ(m.rank("ab", "c"), -1);
  // A pair made stale by an earlier merge is not applied: a+b (0) takes the b from b+c (1).
  EXPECT_EQ(merge_word(merges_of({"a b", "b c"}), "abc"), (Words{"ab", "c"}));
  EXPECT_EQ(merge_word(merges_of({"b c", "a b"}), "abc"), (Words{"a", "bc"}));
}

TEST(BpeMerges, EqualRanksMergeLeftmostFirst) {
  const BpeMerges m = merges_of({"a a"});
  EXPECT_EQ(merge_word(m, "aaa"), (Words{"aa", "a"}));
  EXPECT_EQ(merge_word(m, "aaaaa"), (Words{"aa", "aa", "a"}));
  EXPECT_EQ(merge_word(merges_of({"a a", "aa a"}), "aaa"), (Words{"aaa"}));
}

TEST(BpeMerges, MergesWholeCharactersAndKeepsTheFirstRankOfARepeatedRule) {
  const BpeMerges m = merges_of({"\xc3\xa9 t", "x y", "\xc3\xa9 t"});  // ét
  EXPECT_EQ(merge_word(m, "\xc3\xa9t\xc3\xa9"), (Words{"\xc3\xa9t", "\xc3\xa9"}));
  EXPECT_EQ(m.rank("\xc3\xa9", "t"), 0);
  EXPECT_TRUE(merge_word(m, "").empty());
}

// The merge loop against the definition: find the lowest-ranked adjacent pair (leftmost on a
// tie), merge it, repeat; on random words over a small alphabet with random rules.
TEST(BpeMerges, MatchesThePlainDefinitionOnRandomWords) {
  std::mt19937 rng(5);
  const std::vector<std::string> alphabet = {"a", "b", "c", "\xc4\xa0"};  // Ġ: two bytes
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::string> pieces = alphabet, rules;
    for (int i = 0; i < 30; ++i) {
      const std::string& left = pieces[rng() % pieces.size()];
      const std::string& right = pieces[rng() % pieces.size()];
      rules.push_back(left + " " + right);
      pieces.push_back(left + right);
    }
    const BpeMerges m(
        rules, [](std::string_view) { return true; }, "merges");
    for (int k = 0; k < 40; ++k) {
      std::vector<std::string> expected;
      for (size_t n = rng() % 12; n > 0; --n) expected.push_back(alphabet[rng() % alphabet.size()]);
      const std::string word = [&] {
        std::string w;
        for (const std::string& s : expected) w += s;
        return w;
      }();
      for (;;) {
        size_t best = 0;
        int32_t best_rank = -1;
        for (size_t i = 0; i + 1 < expected.size(); ++i) {
          const int32_t r = m.rank(expected[i], expected[i + 1]);
          if (r >= 0 && (best_rank < 0 || r < best_rank)) best = i, best_rank = r;
        }
        if (best_rank < 0) break;
        expected[best] += expected[best + 1];
        expected.erase(expected.begin() + std::ptrdiff_t(best) + 1);
      }
      EXPECT_EQ(merge_word(m, word), expected) << "trial " << trial << ", word " << word;
    }
  }
}

TEST(BpeMerges, MalformedRulesAreRefusedWithTheirIndex) {
  const auto is_piece = [](std::string_view p) { return p == "a" || p == "b" || p == "ab" || p == "bb"; };
  const auto parse = [&](std::vector<std::string> rules) {
    BpeMerges(std::move(rules), is_piece, "tokenizer.ggml.merges");
  };
  expect_error(
      [&] {
        parse({"a b", "ab"});
      },
      "tokenizer.ggml.merges[1] \"ab\" is not two pieces separated by one space");
  expect_error([&] { parse({"a  b"}); }, "[0] \"a  b\" is not two pieces separated by one space");
  expect_error([&] { parse({" a"}); }, "is not two pieces");
  expect_error([&] { parse({"a "}); }, "is not two pieces");
  expect_error([&] { parse({"a b b"}); }, "is not two pieces");
  expect_error([&] { parse({""}); }, "is not two pieces");
  expect_error([&] { parse({"a c"}); }, "[0] \"a c\" merges \"c\", which is not in the vocabulary");
  expect_error([&] { parse({"c a"}); }, "merges \"c\", which is not in the vocabulary");
  expect_error([&] { parse({"b a"}); }, "[0] \"b a\" makes a piece that is not in the vocabulary");
  expect_error([&] { parse({"a\x1b b"}); }, "\"a\\x1b b\"");  // shown escaped
  EXPECT_NO_THROW(parse({"a b", "b b", "a b"}));
}

}  // namespace
}  // namespace tg::model
