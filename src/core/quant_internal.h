#pragma once
// What the quantized-row functions of src/core (quant_*.cpp) share.
#include <cstdint>
#include <string>

#include "tilegraph/core/error.h"

namespace tg::detail {

// Throws tg::Error unless n is whole blocks of `block` elements; `what` names the function.
inline void check_whole_blocks(const char* what, int64_t n, int block) {
  if (n % block != 0) {
    throw Error(std::string(what) + ": n=" + std::to_string(n) + " is not a multiple of " + std::to_string(block));
  }
}

}  // namespace tg::detail
