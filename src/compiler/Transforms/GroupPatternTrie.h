#pragma once
// The op-name patterns of group-pattern and the trie they are compiled into (the TX8 back end's
// pattern automaton). A pattern file holds one pattern a line:
//
//   # a comment; blank lines are ignored
//   <priority>: <op> <op> ...
//
// <op> is a tx8be op name without the dialect prefix (conv2d, batchnorm_inference, relu...);
// `|` separates alternatives (`a b | c d` is the two patterns `a b` and `c d`); `<op> *` is the op
// repeated 1 to 5 times. A higher priority wins between matches of the same length.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <mlir/IR/MLIRContext.h>
#include <mlir/Support/LogicalResult.h>

namespace tg::compiler::tx8be {

// The most times a wildcard repeats its op.
constexpr int kMaxWildcardRepeats = 5;

// The built-in patterns, in the file format.
extern const char* const kBuiltinGroupPatterns;

struct PatternTrieNode {
  std::map<std::string, std::unique_ptr<PatternTrieNode>> children;
  int priority = -1;  // >= 0: a pattern ends here
  bool terminal() const { return priority >= 0; }
};

class PatternTrie {
 public:
  // Adds the patterns of `text` (named `source` in errors); on a malformed line or an op name
  // the dialect does not have, sets `error` ("source:line: why") and fails.
  mlir::LogicalResult add(const std::string& text, const std::string& source, mlir::MLIRContext& context,
                          std::string& error);
  // Adds one concrete pattern (no `|` or `*`); the higher priority stays when it is already there.
  void insert(const std::vector<std::string>& ops, int priority);

  const PatternTrieNode& root() const { return root_; }
  size_t patterns() const { return patterns_; }

 private:
  PatternTrieNode root_;
  size_t patterns_ = 0;
};

}  // namespace tg::compiler::tx8be
