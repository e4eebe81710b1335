#include "model/bpe_merges.h"

#include <algorithm>
#include <queue>

#include "model/printable.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/utf8.h"

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
    if (space == std::string_view::npos || space == 0 || space + 1 == rule.size() || rule.find(' ', space + 1) != std::string_view::npos) {
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
  // Symbols form a linked list over `word`; a merge grows the left symbol over the right one.
  struct Symbol {
    size_t begin, length;
    int prev, next;
  };
  std::vector<Symbol> symbols;
  for (size_t i = 0; i < word.size();) {
    const size_t length = std::max<size_t>(decode_utf8(word, i).length, 1);
    const int index = int(symbols.size());
    symbols.push_back({i, length, index - 1, i + length == word.size() ? -1 : index + 1});
    i += length;
  }
  const auto text = [&](const Symbol& s) { return word.substr(s.begin, s.length); };
  struct Pair {
    int left, right;
    int32_t rank;
    size_t length;  // both symbols' length when queued: a merge of either since makes the pair stale
    // std::priority_queue pops the greatest: the lowest rank, then the leftmost.
    bool operator<(const Pair& o) const { return rank > o.rank || (rank == o.rank && left > o.left); }
  };
  std::priority_queue<Pair> queue;
  const auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[size_t(left)];
    const Symbol& r = symbols[size_t(right)];
    if (const int32_t found = rank(text(l), text(r)); found >= 0) queue.push({left, right, found, l.length + r.length});
  };
  for (int i = 1; i < int(symbols.size()); ++i) try_pair(i - 1, i);
  while (!queue.empty()) {
    const Pair pair = queue.top();
    queue.pop();
    Symbol& left = symbols[size_t(pair.left)];
    Symbol& right = symbols[size_t(pair.right)];
    if (left.length == 0 || right.length == 0 || left.length + right.length != pair.length) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[size_t(right.next)].prev = pair.left;
    try_pair(left.prev, pair.left);
    try_pair(pair.left, left.next);
  }

  std::vector<std::string_view> pieces;
  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[size_t(i)].next) pieces.push_back(text(symbols[size_t(i)]));
  return pieces;
}

}  // namespace tg::model
