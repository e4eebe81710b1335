#pragma once
// The shardings the search tries for a group (the TX8 toolchain's ShardingLevel::getShardings and
// its factor order): every way to cut the primary result's dimensions into integer parts whose
// product is the group's tile count, and, for a tensor too small or an op that cannot follow a
// cut, the same for every smaller tile count down to one tile. No part may be empty.
//
// Order (best first): the effective tile count, the product of each dimension's parts with the
// innermost dimension's capped at one part per DDR burst of elements (cutting a row finer than a
// burst only adds transfers); then the balanced cut (the least padding ceil division leaves);
// then the outer dimensions cut first. (The TX8 toolchain ranks by ceil(log2) of the effective
// count, which ties 5 tiles with 8; the exact count does not.)
#include <cstdint>
#include <vector>

#include <llvm/ADT/ArrayRef.h>

namespace tg::compiler::tx8be {

// `elementBytes`: bytes of one element (a block-quantized type: its block's bytes per element,
// rounded up); `burstBytes`: the DDR burst.
std::vector<std::vector<int32_t>> shardingCandidates(llvm::ArrayRef<int64_t> shape, int32_t tiles,
                                                     uint64_t elementBytes, uint64_t burstBytes);

}  // namespace tg::compiler::tx8be
