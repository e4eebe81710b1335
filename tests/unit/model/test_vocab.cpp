// Vocab: SentencePiece encoding (merge order, ties, byte fallback), decoding of SentencePiece and
// GPT-2 byte-level pieces, the tokenizer keys' validation, and the text shown on a terminal.
#include "tilegraph/model/vocab.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/expect_error.h"

namespace tg::model {
namespace {

using test::expect_error;

constexpr int32_t kNormal = int32_t(TokenType::kNormal), kUnknown = int32_t(TokenType::kUnknown),
                  kControl = int32_t(TokenType::kControl), kByte = int32_t(TokenType::kByte);
const std::string kSpace = "\xe2\x96\x81";  // U+2581

struct Piece {
  std::string text;
  float score;
  int32_t type;
};

std::vector<Piece> specials() { return {{"<unk>", 0, kUnknown}, {"<s>", 0, kControl}, {"</s>", 0, kControl}}; }

// A file holding only tokenizer keys; `edit` may change or add keys before it is written.
template <class Edit>
GgufFile tokenizer_file(const std::string& model, const std::vector<Piece>& pieces, Edit&& edit) {
  std::vector<std::string> texts;
  std::vector<float> scores;
  std::vector<int32_t> types;
  for (const Piece& p : pieces) {
    texts.push_back(p.text);
    scores.push_back(p.score);
    types.push_back(p.type);
  }
  GgufWriter w;
  w.set("tokenizer.ggml.model", model);
  w.set("tokenizer.ggml.tokens", texts);
  edit(w, scores, types);
  return GgufFile::parse(w.to_bytes(), "vocab.gguf");
}

Vocab vocab_of(const std::string& model, const std::vector<Piece>& pieces) {
  const GgufFile file = tokenizer_file(model, pieces, [](GgufWriter& w, auto& scores, auto& types) {
    w.set("tokenizer.ggml.scores", scores);
    w.set("tokenizer.ggml.token_type", types);
  });
  std::optional<Vocab> v = Vocab::from_gguf(file);
  EXPECT_TRUE(v.has_value());
  return std::move(*v);
}

std::vector<std::string> pieces_of(const Vocab& v, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(v.piece(id));
  return out;
}

TEST(Vocab, SentencePieceMergesTheHighestScoringPairFirst) {
  std::vector<Piece> pieces = specials();
  for (const char* c : {"h", "e", "l", "o"}) pieces.push_back({c, -2, kNormal});
  pieces.push_back({kSpace, -1, kNormal});
  pieces.push_back({"ll", -0.5f, kNormal});
  pieces.push_back({"llo", -0.2f, kNormal});
  pieces.push_back({"he", -1, kNormal});
  pieces.push_back({"hello", -0.1f, kNormal});
  pieces.push_back({kSpace + "he", -2, kNormal});  // formed only if merged before "hello"
  pieces.push_back({kSpace + "h", -3, kNormal});
  pieces.push_back({"lo", -4, kNormal});
  const Vocab v = vocab_of("llama", pieces);
  // ll, then llo, then he, then hello; ▁he and ▁h are stale by then.
  EXPECT_EQ(pieces_of(v, v.encode("hello")), (std::vector<std::string>{"<s>", kSpace, "hello"}));
  EXPECT_EQ(pieces_of(v, v.encode("hello hell")),
            (std::vector<std::string>{"<s>", kSpace, "hello", kSpace + "he", "ll"}));
}

TEST(Vocab, SentencePieceTiesMergeLeftmostFirst) {
  std::vector<Piece> pieces = specials();
  pieces.push_back({"a", 0, kNormal});
  pieces.push_back({"aa", 0, kNormal});
  pieces.push_back({kSpace, 0, kNormal});
  const Vocab v = vocab_of("llama", pieces);
  EXPECT_EQ(pieces_of(v, v.encode("aaa")), (std::vector<std::string>{"<s>", kSpace, "aa", "a"}));
}

TEST(Vocab, SentencePieceFallsBackToBytesThenUnknown) {
  std::vector<Piece> pieces = specials();
  pieces.push_back({kSpace, 0, kNormal});
  pieces.push_back({"h", 0, kNormal});
  pieces.push_back({"<0x69>", 0, kByte});  // 'i'
  pieces.push_back({"<0xC3>", 0, kByte});  // é's first byte; its second, 0xA9, has no token
  const Vocab v = vocab_of("llama", pieces);
  EXPECT_EQ(pieces_of(v, v.encode("hi\xc3\xa9")), (std::vector<std::string>{"<s>", kSpace, "h", "<0x69>", "<0xC3>", "<unk>"}));
  EXPECT_EQ(v.decode(v.encode("hi")), " hi");
  EXPECT_EQ(v.decode(v.encode("h\xc3\xa9")), " h\xc3\xe2\x96\x85");  // <unk> shows as U+2585
}

TEST(Vocab, SentencePieceKeysChangeTheSpecialTokensAndThePrefix) {
  std::vector<Piece> pieces = specials();
  pieces.push_back({"a", 0, kNormal});
  pieces.push_back({kSpace, 0, kNormal});
  const GgufFile file = tokenizer_file("llama", pieces, [](GgufWriter& w, auto&, auto& types) {
    w.set("tokenizer.ggml.token_type", types);
    w.set("tokenizer.ggml.add_bos_token", false);
    w.set("tokenizer.ggml.add_space_prefix", false);
    w.set("tokenizer.ggml.eos_token_id", uint32_t(1));
  });
  const Vocab v = *Vocab::from_gguf(file);
  EXPECT_EQ(pieces_of(v, v.encode("a a")), (std::vector<std::string>{"a", kSpace, "a"}));
  EXPECT_TRUE(v.encode("").empty());
  EXPECT_EQ(v.eos(), 1);
  EXPECT_EQ(v.bos(), 1);  // llama's default
}

// Whatever the pieces and their scores, a vocabulary with every byte token encodes any bytes
// (valid UTF-8 or not) so that decoding gives them back after the space prefix.
TEST(Vocab, SentencePieceRoundTripsRandomTextWithRandomPieces) {
  std::mt19937 rng(7);
  const std::string alphabet[] = {"a", "b", " ", "\xc3\xa9", "\xe2\x82\xac", "\xff", "\n"};
  const auto random_text = [&](size_t max_chars) {
    std::string text;
    for (size_t n = rng() % (max_chars + 1); n > 0; --n) text += alphabet[rng() % std::size(alphabet)];
    return text;
  };
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<Piece> pieces = specials();
    for (int byte = 0; byte < 256; ++byte) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", byte);
      pieces.push_back({name, 0, kByte});
    }
    pieces.push_back({kSpace, 0, kNormal});  // as every SentencePiece vocabulary has
    for (int i = 0; i < 60; ++i) {  // pieces cut from escaped random text, with random scores
      std::string piece;
      for (char c : random_text(4)) piece += c == ' ' ? kSpace : std::string(1, c);
      if (!piece.empty()) pieces.push_back({piece, float(rng() % 100) / 10.0f - 5.0f, kNormal});
    }
    const Vocab v = vocab_of("llama", pieces);
    for (int k = 0; k < 25; ++k) {
      const std::string text = random_text(12);
      const std::vector<int32_t> ids = v.encode(text);
      ASSERT_FALSE(ids.empty());
      EXPECT_EQ(ids.front(), 1);
      EXPECT_EQ(v.decode(ids), text.empty() ? "" : " " + text) << "trial " << trial;
    }
  }
}

TEST(Vocab, MinimalVocabularyIsWhatGgufGenWrites) {
  const Vocab v = Vocab::minimal_sentencepiece(300);
  ASSERT_EQ(v.size(), 300);
  EXPECT_EQ(v.piece(3), "<0x00>");
  EXPECT_EQ(v.piece(259), kSpace);
  EXPECT_EQ(v.piece(260), kSpace + "t260");
  EXPECT_EQ(v.bos(), 1);
  EXPECT_EQ(v.eos(), 2);
  // Only the space and byte tokens cover text.
  EXPECT_EQ(v.encode("hi"), (std::vector<int32_t>{1, 259, 3 + 'h', 3 + 'i'}));
  EXPECT_EQ(v.decode(std::vector<int32_t>{1, 260, 2, 3 + 'x'}), " t260x");

  GgufWriter w;
  v.write_to(w);
  const GgufFile file = GgufFile::parse(w.to_bytes());
  const Vocab read = *Vocab::from_gguf(file);
  ASSERT_EQ(read.size(), v.size());
  for (int32_t id = 0; id < v.size(); ++id) {
    EXPECT_EQ(read.piece(id), v.piece(id));
    EXPECT_EQ(read.type(id), v.type(id));
  }
  EXPECT_EQ(read.encode("t260 x"), v.encode("t260 x"));

  expect_error([] { Vocab::minimal_sentencepiece(2); }, "at least 3 tokens");
}

TEST(Vocab, Gpt2DecodesByteLevelPieces) {
  std::vector<Piece> pieces = {{"<|begin_of_text|>", 0, kControl}, {"\xc4\xa0hello", 0, kNormal},  // Ġhello
                               {"\xc4\x8a", 0, kNormal},                                           // Ċ: newline
                               {"\xc3\x83\xc2\xa9", 0, kNormal},                                   // Ã©: é's bytes
                               {"<tool>", 0, int32_t(TokenType::kUserDefined)}};
  const Vocab v = vocab_of("gpt2", pieces);
  EXPECT_EQ(v.kind(), Vocab::Kind::kBytePairGpt2);
  EXPECT_EQ(v.decode(std::vector<int32_t>{0, 1, 2, 3, 4}), " hello\n\xc3\xa9<tool>");
  expect_error([&] { v.encode("hello"); }, "only SentencePiece");
}

TEST(Vocab, DecodeRefusesIdsOutsideTheVocabulary) {
  const Vocab v = Vocab::minimal_sentencepiece(300);
  expect_error([&] { v.decode(std::vector<int32_t>{300}); }, "token id 300 is outside the vocabulary of 300 tokens");
  expect_error([&] { v.decode(std::vector<int32_t>{-1}); }, "token id -1");
}

TEST(Vocab, MissingOrUnsupportedTokenizersGiveNoVocabulary) {
  std::string unsupported;
  GgufWriter none;
  none.set("general.architecture", "llama");
  EXPECT_FALSE(Vocab::from_gguf(GgufFile::parse(none.to_bytes()), &unsupported));
  EXPECT_EQ(unsupported, "");
  const GgufFile bert = tokenizer_file("bert", specials(), [](GgufWriter&, auto&, auto&) {});
  EXPECT_FALSE(Vocab::from_gguf(bert, &unsupported));
  EXPECT_EQ(unsupported, "\"bert\"");
}

TEST(Vocab, MalformedKeysAreRefusedByName) {
  const auto with = [](auto&& edit) { return tokenizer_file("llama", specials(), edit); };
  expect_error([&] { Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.scores", std::vector<float>{0, 1}); })); },
               "tokenizer.ggml.scores must be an array of 3 f32, got array of 2 f32");
  expect_error([&] { Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.token_type", std::vector<int32_t>{1, 9, 1}); })); },
               "tokenizer.ggml.token_type[1] is 9, not a token type");
  expect_error([&] { Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.eos_token_id", uint32_t(3)); })); },
               "tokenizer.ggml.eos_token_id is 3, outside the vocabulary of 3 tokens");
  expect_error([&] { Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.bos_token_id", "1"); })); },
               "tokenizer.ggml.bos_token_id must be an integer, got string \"1\"");
  expect_error([&] { Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.add_bos_token", uint32_t(1)); })); },
               "tokenizer.ggml.add_bos_token must be a bool");
  const GgufFile empty = tokenizer_file("llama", {}, [](GgufWriter&, auto&, auto&) {});
  expect_error([&] { Vocab::from_gguf(empty); }, "tokenizer.ggml.tokens is empty");
  // -1 is llama.cpp's "no such token".
  const Vocab v = *Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.bos_token_id", int32_t(-1)); }));
  EXPECT_EQ(v.bos(), -1);
  EXPECT_EQ(v.encode(""), std::vector<int32_t>{});
}

TEST(Vocab, TerminalTextKeepsUtf8AndEscapesTheRest) {
  EXPECT_EQ(terminal_text("plain \xc3\xa9\xe2\x82\xac\n\ttab"), "plain \xc3\xa9\xe2\x82\xac\n\ttab");
  EXPECT_EQ(terminal_text("a\x1b[2Jb\x7f"), "a\\x1b[2Jb\\x7f");
  EXPECT_EQ(terminal_text("\xc2\x85"), "\\x85");  // a C1 control
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(terminal_text("\xff"), fffd);
  EXPECT_EQ(terminal_text("\xc0\xaf"), fffd + fffd);          // overlong
  EXPECT_EQ(terminal_text("\xed\xa0\x80"), fffd + fffd + fffd);  // a surrogate
  EXPECT_EQ(terminal_text("\xe2\x82"), fffd + fffd);          // cut short
}

}  // namespace
}  // namespace tg::model
