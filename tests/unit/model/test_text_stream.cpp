// Streaming generated text (text_stream.h): what each token adds is handed out up to the last
// complete UTF-8 character, and all of it adds up to Vocab::decode of the whole sequence.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tilegraph/model/text_stream.h"
#include "tilegraph/model/vocab.h"

namespace tg::model {
namespace {

// The minimal SentencePiece vocabulary's byte token for `byte` (<unk>, <s>, </s>, then <0x00>..).
int32_t byte_token(unsigned char byte) { return 3 + int32_t(byte); }

TEST(TextStream, HoldsBackACharacterUntilItsLastByte) {
  const Vocab vocab = Vocab::minimal_sentencepiece(300);
  TextStream stream(vocab);
  EXPECT_EQ(stream.push(byte_token('a')), "a");
  EXPECT_EQ(stream.push(byte_token(0xc3)), "") << "the first byte of é";
  EXPECT_EQ(stream.push(byte_token(0xa9)), "\xc3\xa9");
  // U+1F600, four bytes.
  EXPECT_EQ(stream.push(byte_token(0xf0)), "");
  EXPECT_EQ(stream.push(byte_token(0x9f)), "");
  EXPECT_EQ(stream.push(byte_token(0x98)), "");
  EXPECT_EQ(stream.push(byte_token(0x80)), "\xf0\x9f\x98\x80");
  EXPECT_EQ(stream.push(259), " ") << "SentencePiece's space piece";
  EXPECT_EQ(stream.finish(), "");
  // A character cut short by the end is handed out by finish().
  EXPECT_EQ(stream.push(byte_token(0xe2)), "");
  EXPECT_EQ(stream.finish(), "\xe2");
  EXPECT_EQ(stream.finish(), "");
}

TEST(TextStream, AddsUpToTheDecodedSequence) {
  const Vocab vocab = Vocab::minimal_sentencepiece(400);
  const std::vector<int32_t> ids = {1, byte_token(0xe4), byte_token(0xbd), 300, byte_token(0xa0), 259,
                                    2, byte_token(0xff), byte_token('x'),  350};
  TextStream stream(vocab);
  std::string streamed;
  for (int32_t id : ids) streamed += stream.push(id);
  streamed += stream.finish();
  EXPECT_EQ(streamed, vocab.decode(ids));
}

TEST(TextStream, CompleteUtf8Prefix) {
  EXPECT_EQ(complete_utf8_prefix(""), 0u);
  EXPECT_EQ(complete_utf8_prefix("ab"), 2u);
  EXPECT_EQ(complete_utf8_prefix("a\xc3"), 1u);
  EXPECT_EQ(complete_utf8_prefix("a\xe2\x96"), 1u);
  EXPECT_EQ(complete_utf8_prefix("a\xe2\x96\x81"), 4u);
  EXPECT_EQ(complete_utf8_prefix("\xf0\x9f\x98"), 0u);
  EXPECT_EQ(complete_utf8_prefix("\xf0\x9f\x98\x80"), 4u);
  // Bytes that can never become valid are complete: nothing is held back for them.
  EXPECT_EQ(complete_utf8_prefix("a\x80"), 2u);
  EXPECT_EQ(complete_utf8_prefix("a\xff"), 2u);
  EXPECT_EQ(complete_utf8_prefix("\x80\x80\x80\x80"), 4u);
}

}  // namespace
}  // namespace tg::model
