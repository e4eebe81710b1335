// Vocab: SentencePiece encoding (merge order, ties, byte fallback), GPT-2 byte-level BPE
// encoding (merges, pre-tokenizers, BOS, missing bytes, round trips, a llama session driven by
// such a vocabulary), special tokens written in the text, decoding of both, the tokenizer keys' validation, and the
// text shown on a terminal, and a chat turn's markers. The byte-level pieces on their own are tested in test_bpe.cpp.
#include "tilegraph/model/vocab.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bpe_bytes.h"
#include "common/expect_error.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/utf8.h"
#include "tilegraph/model/chat_template.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"

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
  EXPECT_EQ(pieces_of(v, v.encode("hi\xc3\xa9")),
            (std::vector<std::string>{"<s>", kSpace, "h", "<0x69>", "<0xC3>", "<unk>"}));
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
    for (int i = 0; i < 60; ++i) {           // pieces cut from escaped random text, with random scores
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

TEST(Vocab, MinimalByteLevelVocabularyEncodesWithItsMerges) {
  const Vocab v = Vocab::minimal_byte_level(300);
  ASSERT_EQ(v.size(), 300);
  EXPECT_EQ(v.kind(), Vocab::Kind::kBytePairGpt2);
  EXPECT_EQ(v.pretokenizer_name(), "llama-bpe");
  EXPECT_EQ(v.piece(v.bos()), "<|begin_of_text|>");
  EXPECT_EQ(v.piece(v.eos()), "<|end_of_text|>");
  EXPECT_EQ(v.eos(), 299);
  const auto id = [&](std::string_view piece) {
    for (int32_t i = 0; i < v.size(); ++i) {
      if (v.piece(i) == piece) return i;
    }
    ADD_FAILURE() << "no piece " << piece;
    return -1;
  };
  const std::string g = "\xc4\xa0";  // the alphabet's space
  // "the": h+e first (rank 1), and no rule joins t with he. " the": Ġ+t (rank 0), h+e, then Ġt+he.
  EXPECT_EQ(v.encode("the the cat!"),
            (std::vector<int32_t>{v.bos(), 't', id("he"), id(g + "the"), id(g), 'c', id("at"), '!'}));
  const std::string text = "Where the river\nmeets 12345 stones, \xe2\x82\xac!";
  std::vector<int32_t> ids = v.encode(text);
  ids.erase(ids.begin());  // the BOS token
  EXPECT_EQ(v.decode(ids), text);

  GgufWriter w;
  v.write_to(w);
  const GgufFile file = GgufFile::parse(w.to_bytes());
  EXPECT_EQ(Vocab::from_gguf(file)->encode(text), v.encode(text));
  expect_error([] { Vocab::minimal_byte_level(299); }, "at least 300 tokens");
}

TEST(Vocab, MinimalQwen2VocabularyHasChatmlsTokens) {
  const Vocab v = Vocab::minimal_qwen2(300);
  ASSERT_EQ(v.size(), 300);
  EXPECT_EQ(v.pretokenizer_name(), "qwen2");
  EXPECT_EQ(v.piece(v.bos()), "<|endoftext|>");
  EXPECT_EQ(v.piece(v.eos()), "<|im_end|>");
  EXPECT_FALSE(v.adds_bos());
  const std::string nl = "\xc4\x8a";  // the alphabet's newline
  EXPECT_EQ(pieces_of(v, v.encode(format_chat(ChatTemplate::kChatml, "12"), true)),
            (std::vector<std::string>{"<|im_start|>",
                                      "u",
                                      "s",
                                      "er",
                                      nl,
                                      "1",
                                      "2",
                                      "<|im_end|>",
                                      nl,
                                      "<|im_start|>",
                                      "a",
                                      "s",
                                      "s",
                                      "i",
                                      "s",
                                      "t",
                                      "a",
                                      "n",
                                      "t",
                                      nl}));
  std::vector<int32_t> stops = v.end_of_generation();
  std::sort(stops.begin(), stops.end());
  EXPECT_EQ(stops, (std::vector<int32_t>{297, 299})) << "<|endoftext|> and <|im_end|>";
  GgufWriter w;
  v.write_to(w);
  const Vocab read = *Vocab::from_gguf(GgufFile::parse(w.to_bytes()));
  EXPECT_EQ(read.encode("Hi 2024"), v.encode("Hi 2024"));
  EXPECT_EQ(read.pretokenizer_name(), "qwen2");
  expect_error([] { Vocab::minimal_qwen2(299); }, "at least 300 tokens");
}

TEST(Vocab, AddEosTokenAppendsTheEndOfSequence) {
  std::vector<Piece> pieces = specials();
  for (const char* c : {"h", "i"}) pieces.push_back({c, -2, kNormal});
  pieces.push_back({kSpace, -1, kNormal});
  const auto with_flag = [&](bool add_eos) {
    return *Vocab::from_gguf(tokenizer_file("llama", pieces, [&](GgufWriter& w, auto& scores, auto& types) {
      w.set("tokenizer.ggml.scores", scores);
      w.set("tokenizer.ggml.token_type", types);
      w.set("tokenizer.ggml.add_eos_token", add_eos);
    }));
  };
  EXPECT_EQ(pieces_of(with_flag(true), with_flag(true).encode("hi")),
            (std::vector<std::string>{"<s>", kSpace, "h", "i", "</s>"}));
  EXPECT_EQ(pieces_of(with_flag(false), with_flag(false).encode("hi")),
            (std::vector<std::string>{"<s>", kSpace, "h", "i"}));
  EXPECT_EQ(with_flag(true).encode(""), (std::vector<int32_t>{1, 2}));
  GgufWriter w;
  with_flag(true).write_to(w);
  EXPECT_EQ(Vocab::from_gguf(GgufFile::parse(w.to_bytes()))->encode("hi"), with_flag(true).encode("hi"));
}

TEST(Vocab, EndOfGenerationHoldsTheKeysTokensAndTheKnownEndMarkers) {
  std::vector<Piece> pieces = specials();              // <unk> <s> </s>
  pieces.push_back({"<|eot_id|>", 0, kControl});       // 3: a known end marker
  pieces.push_back({"<|im_end|>", 0, kNormal});        // 4: ends generation whatever its type
  pieces.push_back({"<|end_of_role|>", 0, kControl});  // 5: not an end marker
  pieces.push_back({"<stop>", 0, kControl});           // 6: named by tokenizer.ggml.eom_token_id
  const GgufFile file = tokenizer_file("llama", pieces, [](GgufWriter& w, auto& scores, auto& types) {
    w.set("tokenizer.ggml.scores", scores);
    w.set("tokenizer.ggml.token_type", types);
    w.set("tokenizer.ggml.eot_token_id", uint32_t(3));
    w.set("tokenizer.ggml.eom_token_id", uint32_t(6));
  });
  const Vocab v = *Vocab::from_gguf(file);
  EXPECT_EQ(v.end_of_generation(), (std::vector<int32_t>{2, 3, 4, 6}));
  GgufWriter w;
  v.write_to(w);
  EXPECT_EQ(Vocab::from_gguf(GgufFile::parse(w.to_bytes()))->end_of_generation(), v.end_of_generation());
  EXPECT_EQ(Vocab::minimal_sentencepiece(300).end_of_generation(), (std::vector<int32_t>{2}));
  const Vocab byte_level = Vocab::minimal_byte_level(300);
  EXPECT_EQ(byte_level.end_of_generation(), (std::vector<int32_t>{byte_level.eos()}));
}

// ---- special tokens written in the text ----

// SentencePiece with <unk> <s> </s>, the pieces of "hi" and a user-defined <tool>; no byte tokens,
// so text the pieces do not cover is <unk>.
Vocab vocab_with_specials() {
  std::vector<Piece> pieces = specials();
  for (const char* c : {"h", "i", "x"}) pieces.push_back({c, -2, kNormal});
  pieces.push_back({kSpace, -1, kNormal});
  pieces.push_back({"hi", -0.5f, kNormal});
  pieces.push_back({kSpace + "hi", 0, kNormal});
  pieces.push_back({"<tool>", 0, int32_t(TokenType::kUserDefined)});
  pieces.push_back({"<a>", 0, kControl});
  pieces.push_back({"<a><b>", 0, kControl});
  return vocab_of("llama", pieces);
}

TEST(Vocab, ControlTokensInTheTextAreTheirIdsWhenParsed) {
  const Vocab v = vocab_with_specials();
  // Each fragment after a special token gets the space prefix of a text's start (llama.cpp).
  EXPECT_EQ(pieces_of(v, v.encode("hi</s>hi", true)),
            (std::vector<std::string>{"<s>", kSpace + "hi", "</s>", kSpace + "hi"}));
  EXPECT_EQ(pieces_of(v, v.encode("</s></s>", true)), (std::vector<std::string>{"<s>", "</s>", "</s>"}));
  EXPECT_EQ(pieces_of(v, v.encode("<unk>", true)), (std::vector<std::string>{"<s>", "<unk>"}));
  // Not parsed: the token's characters are text, none of them a piece here.
  EXPECT_EQ(pieces_of(v, v.encode("hi</s>", false)),
            (std::vector<std::string>{"<s>", kSpace + "hi", "<unk>", "<unk>", "<unk>", "<unk>"}));
  EXPECT_EQ(v.encode("hi</s>"), v.encode("hi</s>", false));
}

TEST(Vocab, UserDefinedTokensInTheTextAreAlwaysTheirIds) {
  const Vocab v = vocab_with_specials();
  for (bool parse : {false, true}) {
    EXPECT_EQ(pieces_of(v, v.encode("hi<tool>hi", parse)),
              (std::vector<std::string>{"<s>", kSpace + "hi", "<tool>", kSpace + "hi"}));
    EXPECT_EQ(pieces_of(v, v.encode("<tool>", parse)), (std::vector<std::string>{"<s>", "<tool>"}));
  }
}

TEST(Vocab, TheLongestSpecialTokenClaimsItsOccurrencesFirst) {
  const Vocab v = vocab_with_specials();
  // "<a><b>" before "<a>": the first three characters are not "<a>" then text "<b>".
  EXPECT_EQ(pieces_of(v, v.encode("<a><b><a>x<a><b>", true)),
            (std::vector<std::string>{"<s>", "<a><b>", "<a>", kSpace, "x", "<a><b>"}));
  EXPECT_EQ(pieces_of(v, v.encode("<a><a>", true)), (std::vector<std::string>{"<s>", "<a>", "<a>"}));
}

TEST(Vocab, ByteLevelControlTokensInTheText) {
  const Vocab v = Vocab::minimal_byte_level(300);
  const std::vector<int32_t> text_ids = v.encode("the");
  std::vector<int32_t> want = {v.bos(), v.bos()};
  want.insert(want.end(), text_ids.begin() + 1, text_ids.end());
  want.push_back(v.eos());
  EXPECT_EQ(v.encode("<|begin_of_text|>the<|end_of_text|>", true), want);
  // As text, the same characters are byte-level pieces that decode back to them.
  std::vector<int32_t> plain = v.encode("<|end_of_text|>");
  EXPECT_GT(plain.size(), 2u);
  plain.erase(plain.begin());
  EXPECT_EQ(v.decode(plain), "<|end_of_text|>");
}

// A copy outlives its original (a Vocab returned in an optional, stored in a session): its piece
// lookup must not point into the original's strings. ASan (make test SANITIZE=1) sees a dangling one.
TEST(Vocab, ACopyOutlivesItsOriginal) {
  std::optional<Vocab> original = Vocab::minimal_sentencepiece(300);
  const std::vector<int32_t> ids = original->encode("t260 x");
  Vocab copy = *original;
  original.reset();
  EXPECT_EQ(copy.encode("t260 x"), ids);
  Vocab assigned = Vocab::minimal_sentencepiece(3);
  {
    const Vocab other = Vocab::minimal_sentencepiece(300);
    assigned = other;
  }
  EXPECT_EQ(assigned.encode("t260 x"), ids);
}

TEST(Vocab, Gpt2DecodesByteLevelPieces) {
  std::vector<Piece> pieces = {{"<|begin_of_text|>", 0, kControl},
                               {"\xc4\xa0hello", 0, kNormal},     // Ġhello
                               {"\xc4\x8a", 0, kNormal},          // Ċ: newline
                               {"\xc3\x83\xc2\xa9", 0, kNormal},  // Ã©: é's bytes
                               {"<tool>", 0, int32_t(TokenType::kUserDefined)}};
  const Vocab v = vocab_of("gpt2", pieces);
  EXPECT_EQ(v.kind(), Vocab::Kind::kBytePairGpt2);
  EXPECT_EQ(v.decode(std::vector<int32_t>{0, 1, 2, 3, 4}), " hello\n\xc3\xa9<tool>");
  expect_error([&] { v.encode("hello"); },
               "this gpt2 vocabulary has no tokenizer.ggml.merges, so it cannot encode text");
}

// ---- byte-level BPE (gpt2) encoding ----

// A piece per byte, in GPT-2's byte alphabet, as byte-level vocabularies have.
std::vector<Piece> byte_level_pieces() {
  std::vector<Piece> pieces;
  for (int b = 0; b < 256; ++b) pieces.push_back({gpt2_byte_level(std::string(1, char(b))), 0, kNormal});
  return pieces;
}

// `pieces` plus one piece per rule (its concatenation, unless already there).
std::vector<Piece> with_merged_pieces(std::vector<Piece> pieces, const std::vector<std::string>& rules) {
  for (const std::string& rule : rules) {
    const std::string merged = rule.substr(0, rule.find(' ')) + rule.substr(rule.find(' ') + 1);
    if (std::none_of(pieces.begin(), pieces.end(), [&](const Piece& p) { return p.text == merged; }))
      pieces.push_back({merged, 0, kNormal});
  }
  return pieces;
}

// A gpt2 vocabulary: `pieces`, `rules` as tokenizer.ggml.merges, then `edit`'s keys.
template <class Edit>
GgufFile gpt2_file(const std::vector<Piece>& pieces, const std::vector<std::string>& rules, Edit&& edit) {
  return tokenizer_file("gpt2", pieces, [&](GgufWriter& w, auto&, auto& types) {
    w.set("tokenizer.ggml.token_type", types);
    w.set("tokenizer.ggml.merges", rules);
    edit(w);
  });
}

Vocab gpt2_vocab(const std::vector<Piece>& pieces, const std::vector<std::string>& rules, const std::string& pre) {
  return *Vocab::from_gguf(gpt2_file(pieces, rules, [&](GgufWriter& w) { w.set("tokenizer.ggml.pre", pre); }));
}

const std::string kG = "\xc4\xa0";  // Ġ, a space in GPT-2's alphabet

TEST(Vocab, Gpt2EncodesEachWordWithTheLowestRankedMergesFirst) {
  // "Ġw or" (4) needs "o r" (1) first, which leaves nothing for "Ġw o" (9); "l l" (2) before
  // "he ll" (6) before "hell o" (7).
  const std::vector<std::string> rules = {"h e",        "o r",   "l l",    kG + " w",     kG + "w or",
                                          kG + "wor l", "he ll", "hell o", kG + "worl d", kG + "w o"};
  const Vocab v = gpt2_vocab(with_merged_pieces(byte_level_pieces(), rules), rules, "default");
  EXPECT_EQ(v.pretokenizer_name(), "default");
  EXPECT_EQ(pieces_of(v, v.encode("hello world")), (std::vector<std::string>{"hello", kG + "world"}));
  // Merges stop at word boundaries: "world" without its space, and the digits' own word.
  EXPECT_EQ(pieces_of(v, v.encode("hello,world42")),
            (std::vector<std::string>{"hello", ",", "w", "or", "l", "d", "4", "2"}));
  EXPECT_EQ(v.decode(v.encode("hello,world42")), "hello,world42");
  EXPECT_TRUE(v.encode("").empty());
}

// llama 3's names: its regex (digits in threes) and the whole-word look-up; GPT-2's: neither.
TEST(Vocab, Gpt2PretokenizerNameChoosesTheRegexAndTheWholeWordLookUp) {
  const std::vector<std::string> rules = {"a b", "3 4"};
  std::vector<Piece> pieces = with_merged_pieces(byte_level_pieces(), rules);
  pieces.push_back({"abc", 0, kNormal});  // no rule makes it: only a whole-word look-up finds it
  for (const char* pre : {"llama-bpe", "llama3", "llama-v3", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"}) {
    const Vocab v = gpt2_vocab(pieces, rules, pre);
    EXPECT_EQ(pieces_of(v, v.encode("abc abc")), (std::vector<std::string>{"abc", kG, "ab", "c"})) << pre;
    EXPECT_EQ(pieces_of(v, v.encode("12345")), (std::vector<std::string>{"1", "2", "3", "4", "5"})) << pre;  // 123|45
  }
  for (const char* pre : {"default", "gpt2", "gpt-2"}) {
    const Vocab v = gpt2_vocab(pieces, rules, pre);
    EXPECT_EQ(pieces_of(v, v.encode("abc")), (std::vector<std::string>{"ab", "c"})) << pre;
    EXPECT_EQ(pieces_of(v, v.encode("12345")), (std::vector<std::string>{"1", "2", "34", "5"})) << pre;
  }
  for (const char* pre : {"smaug-bpe", "dbrx"}) {  // llama 3's regex without the whole-word look-up
    const Vocab v = gpt2_vocab(pieces, rules, pre);
    EXPECT_EQ(pieces_of(v, v.encode("abc abc")), (std::vector<std::string>{"ab", "c", kG, "ab", "c"})) << pre;
    EXPECT_EQ(pieces_of(v, v.encode("12345")), (std::vector<std::string>{"1", "2", "3", "4", "5"})) << pre;
  }
}

// Qwen2's names: llama 3's regex with every digit on its own, and no whole-word look-up.
TEST(Vocab, Qwen2PretokenizerSplitsEveryDigit) {
  const std::vector<std::string> rules = {"a b", "1 2"};
  std::vector<Piece> pieces = with_merged_pieces(byte_level_pieces(), rules);
  pieces.push_back({"abc", 0, kNormal});
  for (const char* pre : {"qwen2", "deepseek-r1-qwen", "stablelm2"}) {
    const Vocab v = gpt2_vocab(pieces, rules, pre);
    EXPECT_EQ(pieces_of(v, v.encode("abc abc")), (std::vector<std::string>{"ab", "c", kG, "ab", "c"})) << pre;
    EXPECT_EQ(pieces_of(v, v.encode("123")), (std::vector<std::string>{"1", "2", "3"})) << pre;
  }
  const Vocab llama3 = gpt2_vocab(pieces, rules, "llama3");
  EXPECT_EQ(pieces_of(llama3, llama3.encode("123")), (std::vector<std::string>{"12", "3"}))
      << "llama 3 groups digits in threes";
}

TEST(Vocab, Gpt2AddsTheBeginningOfSequenceTokenAsTheKeysSay) {
  std::vector<Piece> pieces = byte_level_pieces();
  pieces.push_back({"<|begin_of_text|>", 0, kControl});
  const int32_t bos = int32_t(pieces.size()) - 1;
  const auto encode = [&](const std::string& pre, std::optional<bool> add_bos) {
    const Vocab v = *Vocab::from_gguf(gpt2_file(pieces, {}, [&](GgufWriter& w) {
      w.set("tokenizer.ggml.pre", pre);
      w.set("tokenizer.ggml.bos_token_id", uint32_t(bos));
      if (add_bos) w.set("tokenizer.ggml.add_bos_token", *add_bos);
    }));
    return v.encode("a");
  };
  EXPECT_EQ(encode("llama-bpe", std::nullopt), (std::vector<int32_t>{bos, 'a'}));  // llama 3 adds it unless told not to
  EXPECT_EQ(encode("llama-bpe", false), (std::vector<int32_t>{'a'}));
  EXPECT_EQ(encode("default", std::nullopt), (std::vector<int32_t>{'a'}));
  EXPECT_EQ(encode("default", true), (std::vector<int32_t>{bos, 'a'}));
  // Control tokens written in the text are plain text.
  const Vocab v =
      *Vocab::from_gguf(gpt2_file(pieces, {}, [&](GgufWriter& w) { w.set("tokenizer.ggml.pre", "llama-bpe"); }));
  EXPECT_EQ(v.encode("<|begin_of_text|>").size(), std::string("<|begin_of_text|>").size());
}

TEST(Vocab, Gpt2ByteWithoutAPieceBecomesTheUnknownTokenOrAnError) {
  std::vector<Piece> pieces;
  for (const char* c : {"a", "b"}) pieces.push_back({c, 0, kNormal});
  pieces.push_back({"ab", 0, kNormal});
  pieces.push_back({"<unk>", 0, kUnknown});
  const Vocab without_unknown = gpt2_vocab(pieces, {"a b"}, "default");
  expect_error([&] { without_unknown.encode("abz"); }, "neither a piece for byte 0x7A (\"z\") nor an unknown token");
  expect_error([&] { without_unknown.encode("a b"); }, "byte 0x20 (\"\\xc4\\xa0\")");  // Ġ, shown escaped
  const Vocab v = *Vocab::from_gguf(
      gpt2_file(pieces, {"a b"}, [](GgufWriter& w) { w.set("tokenizer.ggml.unknown_token_id", uint32_t(3)); }));
  EXPECT_EQ(pieces_of(v, v.encode("abz\xc3\xa9")),
            (std::vector<std::string>{"ab", "<unk>", "<unk>", "<unk>"}));  // z, then é's two bytes
}

// Whatever the merges, a vocabulary with every byte's piece encodes any text so that decoding
// gives it back: random bytes made valid UTF-8, random ASCII, and raw random bytes (not UTF-8:
// kept, not replaced).
TEST(Vocab, Gpt2RoundTripsRandomTextWithRandomMerges) {
  std::mt19937 rng(3);
  const std::string alphabet = " \n'ab1\xc3\xa9";  // é's two bytes, apart too
  const auto random_bytes = [&](size_t max_bytes, int kind) {
    std::string text(rng() % (max_bytes + 1), '\0');
    for (char& c : text)
      c = kind == 0 ? char(rng() % 256) : kind == 1 ? char(rng() % 128) : alphabet[rng() % alphabet.size()];
    return text;
  };
  const auto made_valid = [](std::string_view bytes) {
    std::string text;
    for (size_t i = 0; i < bytes.size();) {
      const size_t length = decode_utf8(bytes, i).length;
      text += length ? bytes.substr(i, length) : "\xef\xbf\xbd";
      i += std::max<size_t>(length, 1);
    }
    return text;
  };
  for (int trial = 0; trial < 20; ++trial) {
    // Rules over pieces of the alphabet's bytes and of earlier rules, so that they apply, and now
    // and then over any byte.
    std::vector<std::string> mergeable, rules;
    for (char c : alphabet) mergeable.push_back(gpt2_byte_level(std::string(1, c)));
    for (int i = 0; i < 80; ++i) {
      const auto pick = [&] {
        return rng() % 4 ? mergeable[rng() % mergeable.size()] : gpt2_byte_level(std::string(1, char(rng() % 256)));
      };
      const std::string left = pick(), right = pick();
      rules.push_back(left + " " + right);
      mergeable.push_back(left + right);
    }
    const Vocab v =
        gpt2_vocab(with_merged_pieces(byte_level_pieces(), rules), rules, trial % 2 ? "llama-bpe" : "default");
    for (int k = 0; k < 60; ++k) {
      const std::string raw = random_bytes(24, k % 3);
      for (const std::string& text : {raw, made_valid(raw)}) {
        const std::vector<int32_t> ids = v.encode(text);
        EXPECT_LE(ids.size(), text.size());
        EXPECT_EQ(v.decode(ids), text) << "trial " << trial << ", " << v.pretokenizer_name();
      }
    }
  }
}

TEST(Vocab, Gpt2MalformedKeysAreRefusedByName) {
  const std::vector<Piece> pieces = with_merged_pieces(byte_level_pieces(), {"a b"});
  const auto load = [&](const std::vector<std::string>& rules, auto&& edit) {
    Vocab::from_gguf(gpt2_file(pieces, rules, edit));
  };
  const auto no_keys = [](GgufWriter&) {};
  expect_error(
      [&] {
        load({"a b", "ab"}, no_keys);
      },
      "vocab.gguf: tokenizer.ggml.merges[1] \"ab\" is not two pieces separated by one space");
  expect_error([&] { load({"a  b"}, no_keys); }, "tokenizer.ggml.merges[0] \"a  b\" is not two pieces");
  expect_error([&] { load({"a " + kG + "x"}, no_keys); }, "merges \"\\xc4\\xa0x\", which is not in the vocabulary");
  expect_error([&] { load({"b a"}, no_keys); },
               "tokenizer.ggml.merges[0] \"b a\" makes a piece that is not in the vocabulary");
  expect_error([&] { load({}, [](GgufWriter& w) { w.set("tokenizer.ggml.pre", uint32_t(3)); }); },
               "vocab.gguf: tokenizer.ggml.pre must be a string, got u32 3");
  expect_error(
      [&] {
        Vocab::from_gguf(
            tokenizer_file("gpt2", pieces, [](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.merges", "a b"); }));
      },
      "vocab.gguf: tokenizer.ggml.merges must be an array of strings, got string \"a b\"");
  expect_error(
      [&] {
        Vocab::from_gguf(tokenizer_file("gpt2", pieces, [](GgufWriter& w, auto&, auto&) {
          w.set("tokenizer.ggml.merges", std::vector<uint32_t>{1});
        }));
      },
      "tokenizer.ggml.merges must be an array of strings, got array of 1 u32");
}

// A vocabulary this build cannot encode with still loads and decodes; encode() names the key.
TEST(Vocab, Gpt2EncodeNamesAnUnsupportedPretokenizerOrMissingMerges) {
  const std::vector<Piece> pieces = byte_level_pieces();
  const Vocab deepseek = gpt2_vocab(pieces, {}, "deepseek-llm");
  EXPECT_EQ(deepseek.decode(std::vector<int32_t>{'h', 'i'}), "hi");
  expect_error(
      [&] { deepseek.encode("hi"); },
      "the pre-tokenizer \"deepseek-llm\" (tokenizer.ggml.pre) is not supported; supported: default, gpt2, gpt-2 "
      "(GPT-2's regex); llama3, llama-v3, llama-bpe, falcon3, falcon-h1, pixtral, midm-2.0, lfm2 (llama 3's regex "
      "and whole-word look-up); smaug-bpe, dbrx (llama 3's regex alone); qwen2, deepseek-r1-qwen, stablelm2 "
      "(Qwen2's regex)");
  expect_error([&] { deepseek.encode(""); }, "\"deepseek-llm\" (tokenizer.ggml.pre) is not supported");
  const Vocab no_merges = *Vocab::from_gguf(tokenizer_file("gpt2", pieces, [](GgufWriter&, auto&, auto&) {}));
  EXPECT_EQ(no_merges.pretokenizer_name(), "default");
  expect_error([&] { no_merges.encode("hi"); }, "has no tokenizer.ggml.merges");
  // An empty list is zero merges: every byte its own piece.
  EXPECT_EQ(gpt2_vocab(pieces, {}, "default").encode("hi"), (std::vector<int32_t>{'h', 'i'}));
}

TEST(Vocab, Gpt2VocabularyWrittenAndReadBackEncodesTheSame) {
  const std::vector<std::string> rules = {"h i", kG + " hi"};
  std::vector<Piece> pieces = with_merged_pieces(byte_level_pieces(), rules);
  pieces.push_back({"<|begin_of_text|>", 0, kControl});
  const Vocab v = *Vocab::from_gguf(gpt2_file(pieces, rules, [&](GgufWriter& w) {
    w.set("tokenizer.ggml.pre", "llama-bpe");
    w.set("tokenizer.ggml.bos_token_id", uint32_t(pieces.size() - 1));
    w.set("tokenizer.ggml.add_bos_token", false);
  }));
  GgufWriter w;
  v.write_to(w);
  const Vocab read = *Vocab::from_gguf(GgufFile::parse(w.to_bytes()));
  EXPECT_EQ(read.kind(), Vocab::Kind::kBytePairGpt2);
  EXPECT_EQ(read.pretokenizer_name(), "llama-bpe");
  EXPECT_EQ(read.encode("hi hi"), v.encode("hi hi"));
  EXPECT_EQ(pieces_of(read, read.encode("hi hi")), (std::vector<std::string>{"hi", kG + "hi"}));
}

// What `tilegraph run --model F.gguf --prompt TEXT` does with a llama 3 style file: the
// vocabulary and the model from one GGUF, the prompt encoded, generated, decoded.
TEST(Vocab, Gpt2VocabularyDrivesALlamaSession) {
  const std::vector<std::string> rules = {"H e", "l l",       "He ll",      "Hell o",     kG + " w",
                                          "o r", kG + "w or", kG + "wor l", kG + "worl d"};
  std::vector<Piece> pieces = with_merged_pieces(byte_level_pieces(), rules);
  pieces.push_back({"<|begin_of_text|>", 0, kControl});
  pieces.push_back({"<|end_of_text|>", 0, kControl});
  const int32_t bos = int32_t(pieces.size()) - 2, eos = bos + 1;

  LlamaConfig c = llama_preset("tiny");
  c.n_vocab = int64_t(pieces.size());
  c.n_embd = 64;
  c.n_ff = 160;
  c.n_ctx_train = 64;
  const LlamaModel generated = LlamaModel::generate(c, DType::F16, 42);
  // gguf-gen's file with its SentencePiece vocabulary swapped for this one.
  const GgufFile spm_file = GgufFile::parse(generated.to_gguf("llama 3 style").to_bytes());
  const GgufFile bpe_file = tokenizer_file("gpt2", pieces, [&](GgufWriter& w, auto&, auto& types) {
    w.set("tokenizer.ggml.token_type", types);
    w.set("tokenizer.ggml.merges", rules);
    w.set("tokenizer.ggml.pre", "llama-bpe");
    w.set("tokenizer.ggml.bos_token_id", uint32_t(bos));
    w.set("tokenizer.ggml.eos_token_id", uint32_t(eos));
    for (const auto& [key, value] : spm_file.metadata()) {
      if (!key.starts_with("tokenizer.")) w.set(key, value);
    }
    for (const GgufTensorInfo& t : spm_file.tensors()) {
      w.add_tensor(t.name, t.type, std::span(t.ne.data(), size_t(t.n_dims)), spm_file.tensor_data(t));
    }
  });

  EXPECT_EQ(llama_config_from_gguf(bpe_file).n_vocab, c.n_vocab);
  const Vocab vocab = *Vocab::from_gguf(bpe_file);
  const LlamaModel model = LlamaModel::from_gguf(bpe_file);
  const std::vector<int32_t> prompt = vocab.encode("Hello world!");
  EXPECT_EQ(pieces_of(vocab, prompt), (std::vector<std::string>{"<|begin_of_text|>", "Hello", kG + "world", "!"}));
  EXPECT_EQ(vocab.decode(prompt), "Hello world!");

  std::unique_ptr<Backend> cpu = make_backend("cpu", {.num_threads = 2});
  LlamaSession session(model, *cpu, 32);
  const GenerationResult result = session.generate(prompt, 6, {}, vocab.end_of_generation());
  EXPECT_EQ(result.prefill_tokens, int64_t(prompt.size()));
  ASSERT_FALSE(result.tokens.empty());
  for (int32_t id : result.tokens) EXPECT_LT(id, vocab.size());
  EXPECT_NO_THROW(vocab.decode(result.tokens));
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
  expect_error(
      [&] {
        Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) {
          w.set("tokenizer.ggml.scores", std::vector<float>{0, 1});
        }));
      },
      "tokenizer.ggml.scores must be an array of 3 f32, got array of 2 f32");
  expect_error(
      [&] {
        Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) {
          w.set("tokenizer.ggml.token_type", std::vector<int32_t>{1, 9, 1});
        }));
      },
      "tokenizer.ggml.token_type[1] is 9, not a token type");
  expect_error(
      [&] {
        Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.eos_token_id", uint32_t(3)); }));
      },
      "tokenizer.ggml.eos_token_id is 3, outside the vocabulary of 3 tokens");
  expect_error(
      [&] { Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.bos_token_id", "1"); })); },
      "tokenizer.ggml.bos_token_id must be an integer, got string \"1\"");
  expect_error(
      [&] {
        Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.add_bos_token", uint32_t(1)); }));
      },
      "tokenizer.ggml.add_bos_token must be a bool");
  const GgufFile empty = tokenizer_file("llama", {}, [](GgufWriter&, auto&, auto&) {});
  expect_error([&] { Vocab::from_gguf(empty); }, "tokenizer.ggml.tokens is empty");
  // -1 is llama.cpp's "no such token".
  const Vocab v =
      *Vocab::from_gguf(with([](GgufWriter& w, auto&, auto&) { w.set("tokenizer.ggml.bos_token_id", int32_t(-1)); }));
  EXPECT_EQ(v.bos(), -1);
  EXPECT_EQ(v.encode(""), std::vector<int32_t>{});
}

TEST(Vocab, TerminalTextKeepsUtf8AndEscapesTheRest) {
  EXPECT_EQ(terminal_text("plain \xc3\xa9\xe2\x82\xac\n\ttab"), "plain \xc3\xa9\xe2\x82\xac\n\ttab");
  EXPECT_EQ(terminal_text("a\x1b[2Jb\x7f"), "a\\x1b[2Jb\\x7f");
  EXPECT_EQ(terminal_text("\xc2\x85"), "\\x85");  // a C1 control
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(terminal_text("\xff"), fffd);
  EXPECT_EQ(terminal_text("\xc0\xaf"), fffd + fffd);             // overlong
  EXPECT_EQ(terminal_text("\xed\xa0\x80"), fffd + fffd + fffd);  // a surrogate
  EXPECT_EQ(terminal_text("\xe2\x82"), fffd + fffd);             // cut short
}

// `tilegraph run --chat`: the template's markers, written as text, encode to their control tokens.
TEST(Vocab, AChatTurnsMarkersAreTheirControlTokens) {
  std::vector<Piece> pieces = byte_level_pieces();
  pieces.push_back({"<|im_start|>", 0, kControl});
  pieces.push_back({"<|im_end|>", 0, kControl});
  const int32_t start = int32_t(pieces.size()) - 2, end = start + 1;
  const Vocab v = gpt2_vocab(pieces, {}, "qwen2");
  const std::vector<int32_t> ids = v.encode(format_chat(ChatTemplate::kChatml, "hi"), true);
  EXPECT_EQ(ids.front(), start);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), start), 2);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), end), 1);
  EXPECT_EQ(pieces_of(v, ids).back(), "\xc4\x8a") << "the assistant's turn starts after its newline (Ċ)";
}

}  // namespace
}  // namespace tg::model
