#include "tilegraph/compiler/Dialect/Tx8be/Transforms/ConstContainer.h"

#include "tilegraph/core/error.h"

namespace tg::compiler::tx8be {

uint32_t ConstContainer::add(std::vector<ParamInfo> params, uint64_t bytes) {
  if (params.empty()) throw Error("ConstContainer::add: a constant needs at least one copy of its data");
  const auto id = uint32_t(data_.size());
  for (const ParamInfo& param : params) {
    for (int32_t chip : param.chip_ids) bytes_per_chip_[id][chip] = bytes;
  }
  data_[id] = std::move(params);
  old_to_new_[id] = id;
  return id;
}

uint64_t ConstContainer::bytes(uint32_t id, int32_t chip) const {
  auto sizes = bytes_per_chip_.find(id);
  if (sizes == bytes_per_chip_.end()) return 0;
  auto it = sizes->second.find(chip);
  if (it == sizes->second.end()) it = sizes->second.find(kAllChips);
  return it == sizes->second.end() ? 0 : it->second;
}

std::map<uint32_t, uint32_t> ConstContainer::renumber(uint64_t threshold_bytes) {
  std::vector<uint32_t> order;
  for (bool large : {true, false}) {
    for (const auto& [id, params] : data_) {
      uint64_t largest = 0;
      for (const auto& [chip, size] : bytes_per_chip_[id]) largest = std::max(largest, size);
      if ((largest > threshold_bytes) == large) order.push_back(id);
    }
  }
  std::map<uint32_t, uint32_t> old_to_new;
  std::map<uint32_t, std::vector<ParamInfo>> data;
  std::map<uint32_t, std::map<int32_t, uint64_t>> sizes;
  for (uint32_t new_id = 0; new_id < order.size(); ++new_id) {
    old_to_new[order[new_id]] = new_id;
    data[new_id] = std::move(data_[order[new_id]]);
    sizes[new_id] = std::move(bytes_per_chip_[order[new_id]]);
  }
  data_ = std::move(data);
  bytes_per_chip_ = std::move(sizes);
  old_to_new_ = old_to_new;
  return old_to_new;
}

}  // namespace tg::compiler::tx8be
