#pragma once
// The bytes a tensor's elements span in memory, views included, for overlap tests (a fused
// chain's output against its operands, independent replay steps against each other).
#include "tilegraph/core/tensor.h"

namespace tg::cpu {

struct Extent {
  const char* begin;
  const char* end;
  bool overlaps(const Extent& o) const { return begin < o.end && o.begin < end; }
};

inline Extent extent_of(const Tensor& t) {
  const char* p = static_cast<const char*>(t.data);
  return {p, p + t.nbytes()};
}

}  // namespace tg::cpu
