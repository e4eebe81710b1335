#include "bpe_merges.h"

#include <optional>

#include "pair_merge.h"
#include "printable.h"
#include "tilegraph/core/error.h"

namespace tg::model {

BpeMerges::BpeMerges(std::vector<std::string> rules, const std::function<bool(std::string_view)>& is_piece,
                     std::string_view key)
    : rules_(std::move(rules)) {
  ranks_.reserve(rules_.size());
  for (size_t i = 0; i < rules_.size(); ++i) {
    const std::string_view rule = rules_[i];
    const auto fail = [&](const std::string& why) {
      throw Error(std::string(key) + "[" + std::to_string(i) + "] " + printable(rule, '"') + " " + why);
    };
    const size_t space = rule.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == rule.size() ||
        rule.find(' ', space + 1) != std::string_view::npos) {
      fail("is not two pieces separated by one space");
    }
    const std::string_view left = rule.substr(0, space), right = rule.substr(space + 1);
    if (!is_piece(left)) fail("merges " + printable(left, '"') + ", which is not in the vocabulary");
    if (!is_piece(right)) fail("merges " + printable(right, '"') + ", which is not in the vocabulary");
    if (!is_piece(std::string(left) + std::string(right))) fail("makes a piece that is not in the vocabulary");
    ranks_.emplace(rule, int32_t(i));
  }
}

int32_t BpeMerges::rank(std::string_view left, std::string_view right) const {
  std::string rule;
  rule.reserve(left.size() + 1 + right.size());
  rule.append(left).append(1, ' ').append(right);
  const auto it = ranks_.find(rule);
  return it == ranks_.end() ? -1 : it->second;
}

std::vector<std::string_view> BpeMerges::apply(std::string_view word) const {
  return merge_adjacent_pieces(word, [this](std::string_view left, std::string_view right) -> std::optional<double> {
    const int32_t found = rank(left, right);
    if (found < 0) return std::nullopt;
    return -double(found);  // the lowest rank merges first
  });
}

}  // namespace tg::model
