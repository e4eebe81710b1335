#include "ShardingCandidates.h"

#include <algorithm>
#include <tuple>

namespace tg::compiler::tx8be {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Every `parts` with product `target`, each part at most its dimension and leaving no part empty.
void cuts(llvm::ArrayRef<int64_t> shape, size_t dim, int64_t left, std::vector<int32_t>& parts,
          std::vector<std::vector<int32_t>>& out) {
  if (dim == shape.size()) {
    if (left == 1) out.push_back(parts);
    return;
  }
  for (int64_t p = 1; p <= left; ++p) {
    if (left % p != 0 || p > shape[dim]) continue;
    // The last part starts inside the dimension.
    if (ceil_div(shape[dim], p) * (p - 1) >= shape[dim]) continue;
    parts[dim] = int32_t(p);
    cuts(shape, dim + 1, left / p, parts, out);
  }
  parts[dim] = 1;
}

}  // namespace

std::vector<std::vector<int32_t>> shardingCandidates(llvm::ArrayRef<int64_t> shape, int32_t tiles,
                                                     uint64_t elementBytes, uint64_t burstBytes) {
  std::vector<std::vector<int32_t>> all;
  std::vector<int32_t> parts(shape.size(), 1);
  for (int32_t target = tiles; target >= 1; --target) cuts(shape, 0, target, parts, all);
  const int64_t burst_elements = std::max<int64_t>(1, int64_t(burstBytes / std::max<uint64_t>(1, elementBytes)));
  auto key = [&](const std::vector<int32_t>& s) {
    int64_t effective = 1;
    double waste = 0;
    for (size_t d = 0; d < s.size(); ++d) {
      const int64_t cap = d + 1 == s.size() ? ceil_div(shape[d], burst_elements) : shape[d];
      effective *= std::min<int64_t>(s[d], cap);
      waste += double(ceil_div(shape[d], s[d]) * s[d] - shape[d]) / double(shape[d]);
    }
    return std::make_tuple(-effective, waste);
  };
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    const auto ka = key(a), kb = key(b);
    if (ka != kb) return ka < kb;
    return a > b;  // more parts in the outer dimensions first
  });
  return all;
}

}  // namespace tg::compiler::tx8be
