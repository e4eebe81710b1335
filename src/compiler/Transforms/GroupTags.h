#pragma once
// The values of tx8be.group's `group_tag` (Tx8beOps.td): 0, the group loads and stores through SPM
// and the search splits it; 2, its ops work in DDR and it is not split.
#include <cstdint>

namespace tg::compiler::tx8be {

inline constexpr int32_t kGroupTagSplit = 0;
inline constexpr int32_t kGroupTagInDdr = 2;

}  // namespace tg::compiler::tx8be
