#pragma once
// The spellings a vocabulary's pieces share between loading, encoding and decoding: SentencePiece's
// space, byte tokens ("<0x41>") and what an unknown token shows as.
#include <string>
#include <string_view>

namespace tg::model {

inline constexpr std::string_view kWordStart = "\xe2\x96\x81";     // U+2581, SentencePiece's space
inline constexpr std::string_view kUnknownPiece = "\xe2\x96\x85";  // U+2585, what llama.cpp shows for <unk>

// The byte token of `byte`: "<0xNN>".
std::string byte_piece(unsigned char byte);
// A byte token's value, or -1 when `piece` is not "<0xNN>".
int byte_of_piece(std::string_view piece);

}  // namespace tg::model
