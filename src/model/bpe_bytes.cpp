#include "bpe_bytes.h"

#include <array>

namespace tg::model {

namespace {

constexpr int kAlphabetEnd = 256 + 68;  // the highest code point of the alphabet is U+0143

struct Alphabet {
  std::array<uint16_t, 256> code_point_of_byte;
  std::array<int16_t, kAlphabetEnd> byte_of_code_point;
};

constexpr Alphabet make_alphabet() {
  Alphabet a{};
  a.byte_of_code_point.fill(-1);
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    const int code_point = printable ? b : next++;
    a.code_point_of_byte[size_t(b)] = uint16_t(code_point);
    a.byte_of_code_point[size_t(code_point)] = int16_t(b);
  }
  return a;
}

constexpr Alphabet kAlphabet = make_alphabet();

}  // namespace

uint32_t gpt2_code_point_of_byte(uint8_t byte) { return kAlphabet.code_point_of_byte[byte]; }

int gpt2_byte_of_code_point(uint32_t code_point) {
  return code_point < kAlphabetEnd ? kAlphabet.byte_of_code_point[code_point] : -1;
}

std::string gpt2_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const uint32_t code_point = gpt2_code_point_of_byte(static_cast<uint8_t>(c));
    if (code_point < 0x80) {
      out += char(code_point);
    } else {  // at most U+0143: two bytes
      out += char(0xc0 | (code_point >> 6));
      out += char(0x80 | (code_point & 0x3f));
    }
  }
  return out;
}

}  // namespace tg::model
