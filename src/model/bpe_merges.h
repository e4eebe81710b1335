#pragma once
// The merge rules of a byte-level BPE vocabulary (`tokenizer.ggml.merges`), and the merge loop
// that turns one pre-token into pieces with them.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tg::model {

class BpeMerges {
 public:
  // `rules[i]` is "left right", of rank i (lower merges first). A rule that is not two non-empty
  // pieces separated by one space, or whose pieces or whose concatenation `is_piece` rejects,
  // throws tg::Error naming `key`, the rule's index and its text. A pair listed again keeps its
  // first rank (llama.cpp's choice).
  BpeMerges(std::vector<std::string> rules, const std::function<bool(std::string_view)>& is_piece,
            std::string_view key);
  BpeMerges(const BpeMerges&) = delete;  // ranks_ views rules_
  BpeMerges& operator=(const BpeMerges&) = delete;

  const std::vector<std::string>& rules() const { return rules_; }
  // The rank of merging `left` and `right`, or -1 when no rule merges them.
  int32_t rank(std::string_view left, std::string_view right) const;

  // `word` (UTF-8) as pieces: it starts as one piece per character, and the adjacent pair of
  // the lowest rank merges (the leftmost of equal ranks) until no pair has a rule. Views into
  // `word`; a word without characters gives no pieces.
  std::vector<std::string_view> apply(std::string_view word) const;

 private:
  std::vector<std::string> rules_;
  std::unordered_map<std::string_view, int32_t> ranks_;  // "left right", views into rules_
};

}  // namespace tg::model
