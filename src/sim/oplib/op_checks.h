#pragma once
// The argument checks every op shares: errors name the op and the offending operand.
#include <initializer_list>
#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib::detail {

inline void require(bool ok, const char* op, const std::string& what) {
  if (!ok) throw Error(std::string(op) + ": " + what);
}

inline void require_format(const char* op, const char* operand, const Tsr& t, std::initializer_list<Format> allowed) {
  for (Format f : allowed) {
    if (t.format == f) return;
  }
  std::string names;
  for (Format f : allowed) names += (names.empty() ? "" : ", ") + std::string(format_name(f));
  require(false, op, std::string(operand) + " is " + std::string(format_name(t.format)) + " (takes " + names + ")");
}

inline void require_layout(const char* op, const char* operand, const Tsr& t,
                           std::initializer_list<MemLayout> allowed) {
  for (MemLayout l : allowed) {
    if (t.layout == l) return;
  }
  require(false, op,
          std::string(operand) + " has layout " + std::string(mem_layout_name(t.layout)) + ", not accepted here");
}

inline void require_same_shape(const char* op, const char* a_name, const Tsr& a, const char* b_name, const Tsr& b) {
  require(a.shape.shape_real == b.shape.shape_real, op,
          std::string(a_name) + " " + dims_string(a.shape.shape_real) + " and " + b_name + " " +
              dims_string(b.shape.shape_real) + " differ");
}

inline void require_imm(const char* op, const Tsr& imm, uint64_t needed) {
  require(needed == 0 || imm.allocated_bytes() >= needed, op,
          "imm holds " + std::to_string(imm.allocated_bytes()) + " bytes, the op needs " + std::to_string(needed));
}

}  // namespace tg::sim::oplib::detail
