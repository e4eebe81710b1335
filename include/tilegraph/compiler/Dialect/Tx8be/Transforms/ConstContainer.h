#pragma once
// The constants of a module as the TX8 back end keeps them for code generation: move-constant
// registers each tx8be.constant here and replaces it by load_const ops naming its id.
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include <mlir/IR/Attributes.h>

namespace tg::compiler::tx8be {

// One copy of a constant's data and the chips that hold it.
struct ParamInfo {
  mlir::Attribute data;            // the constant's value: dense elements or #tx8be.external
  std::set<int32_t> chip_ids{-1};  // the chips holding this data; -1: every chip
  uint32_t label = 0;              // 1 when the data was split between chips (one ParamInfo each)
};

class ConstContainer {
 public:
  static constexpr int32_t kAllChips = -1;

  // Registers a constant (its copies, usually one for every chip) of `bytes` bytes on each chip
  // holding it; returns its id, the number of constants registered before it.
  uint32_t add(std::vector<ParamInfo> params, uint64_t bytes);
  // Renumbers the ids as the constants are laid out in DDR: those above `threshold_bytes` first,
  // then the rest, each in id order. Returns the new id of each old id.
  std::map<uint32_t, uint32_t> renumber(uint64_t threshold_bytes);

  size_t size() const { return data_.size(); }
  const std::vector<ParamInfo>& params(uint32_t id) const { return data_.at(id); }
  // The bytes of constant `id` on `chip` (kAllChips: on every chip), 0 for a chip without it.
  uint64_t bytes(uint32_t id, int32_t chip = kAllChips) const;
  // The new id of each old id after the last renumber() (identity before).
  const std::map<uint32_t, uint32_t>& renumbered() const { return old_to_new_; }

 private:
  std::map<uint32_t, std::vector<ParamInfo>> data_;
  std::map<uint32_t, std::map<int32_t, uint64_t>> bytes_per_chip_;
  std::map<uint32_t, uint32_t> old_to_new_;
};

}  // namespace tg::compiler::tx8be
