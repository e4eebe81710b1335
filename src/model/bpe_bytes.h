#pragma once
// GPT-2's byte-level alphabet: byte-level BPE vocabularies ("gpt2", llama 3) spell every byte as
// one printable code point, so that pieces are valid text whatever bytes they stand for and a
// space or a newline inside a piece stays visible (Ġ, Ċ).
#include <cstdint>
#include <string>
#include <string_view>

namespace tg::model {

// The code point that stands for `byte`: the printable Latin-1 bytes stand for themselves, the
// other 68 for U+0100 onwards in byte order.
uint32_t gpt2_code_point_of_byte(uint8_t byte);
// The byte `code_point` stands for, or -1 when it is not in the alphabet.
int gpt2_byte_of_code_point(uint32_t code_point);
// `bytes` spelled in the alphabet (UTF-8): one character per byte, whatever the bytes are.
std::string gpt2_byte_level(std::string_view bytes);

}  // namespace tg::model
