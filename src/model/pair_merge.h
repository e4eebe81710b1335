#pragma once
// The merge loop that SentencePiece and byte-level BPE share. `text` starts as one piece per
// UTF-8 character (a byte that is not part of a valid character is a piece of its own); then the
// adjacent pair with the highest priority merges, the leftmost among equals, until no adjacent
// pair has a priority. `priority(left, right)` gives a pair's priority, or nothing when the two
// do not merge: SentencePiece ranks by the merged piece's score, BPE by minus the rule's rank.
// Returns views into `text`.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

#include "tilegraph/core/utf8.h"

namespace tg::model {

template <class Priority>
std::vector<std::string_view> merge_adjacent_pieces(std::string_view text, Priority priority) {
  // Pieces form a linked list over `text`; a merge grows the left piece over the right one.
  struct Piece {
    size_t begin, length;
    int prev, next;
  };
  std::vector<Piece> pieces;
  for (size_t i = 0; i < text.size();) {
    const size_t length = std::max<size_t>(decode_utf8(text, i).length, 1);
    const int index = int(pieces.size());
    pieces.push_back({i, length, index - 1, i + length == text.size() ? -1 : index + 1});
    i += length;
  }
  const auto view = [&](const Piece& p) { return text.substr(p.begin, p.length); };
  struct Pair {
    int left, right;
    double priority;
    size_t length;  // both pieces' length when queued: a merge of either since makes the pair stale
    // std::priority_queue pops the greatest: the highest priority, then the leftmost.
    bool operator<(const Pair& o) const { return priority < o.priority || (priority == o.priority && left > o.left); }
  };
  std::priority_queue<Pair> queue;
  const auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Piece& l = pieces[size_t(left)];
    const Piece& r = pieces[size_t(right)];
    if (const std::optional<double> p = priority(view(l), view(r))) queue.push({left, right, *p, l.length + r.length});
  };
  for (int i = 1; i < int(pieces.size()); ++i) try_pair(i - 1, i);
  while (!queue.empty()) {
    const Pair pair = queue.top();
    queue.pop();
    Piece& left = pieces[size_t(pair.left)];
    Piece& right = pieces[size_t(pair.right)];
    if (left.length == 0 || right.length == 0 || left.length + right.length != pair.length) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) pieces[size_t(right.next)].prev = pair.left;
    try_pair(left.prev, pair.left);
    try_pair(pair.left, left.next);
  }

  std::vector<std::string_view> merged;
  for (int i = pieces.empty() ? -1 : 0; i >= 0; i = pieces[size_t(i)].next) merged.push_back(view(pieces[size_t(i)]));
  return merged;
}

}  // namespace tg::model
