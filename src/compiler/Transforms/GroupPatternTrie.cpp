#include "GroupPatternTrie.h"

#include <sstream>

#include <mlir/IR/OperationSupport.h>

namespace tg::compiler::tx8be {

// Convolution blocks, a gemm with its bias and activation, a norm with its weight, and runs of
// elementwise ops.
const char* const kBuiltinGroupPatterns = R"(# tilegraph's built-in group patterns
4: conv2d batchnorm_inference relu | conv2d batchnorm_inference silu | conv2d batchnorm_inference
3: conv2d relu | batchnorm_inference relu | conv2d add relu
3: matmul add relu | matmul add gelu | matmul add silu | matmul add
2: rmsnorm mul | layernorm mul add | layernorm mul
2: softmax matmul
1: mul * | add * | silu mul
)";

namespace {

// The concrete sequences of one alternative with wildcards: each `op *` 1..5 times.
void expand(const std::vector<std::string>& tokens, size_t at, std::vector<std::string>& prefix,
            std::vector<std::vector<std::string>>& out) {
  if (at == tokens.size()) {
    out.push_back(prefix);
    return;
  }
  const bool repeated = at + 1 < tokens.size() && tokens[at + 1] == "*";
  const int most = repeated ? kMaxWildcardRepeats : 1;
  for (int n = 1; n <= most; ++n) {
    for (int i = 0; i < n; ++i) prefix.push_back(tokens[at]);
    expand(tokens, at + (repeated ? 2 : 1), prefix, out);
    prefix.resize(prefix.size() - size_t(n));
  }
}

}  // namespace

void PatternTrie::insert(const std::vector<std::string>& ops, int priority) {
  PatternTrieNode* node = &root_;
  for (const std::string& op : ops) {
    std::unique_ptr<PatternTrieNode>& child = node->children[op];
    if (!child) child = std::make_unique<PatternTrieNode>();
    node = child.get();
  }
  if (!node->terminal()) ++patterns_;
  node->priority = std::max(node->priority, priority);
}

mlir::LogicalResult PatternTrie::add(const std::string& text, const std::string& source, mlir::MLIRContext& context,
                                     std::string& error) {
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    auto fail = [&](const std::string& why) {
      error = source + ":" + std::to_string(number) + ": " + why;
      return mlir::failure();
    };
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return fail("expected '<priority>: <op> <op>...'");
    int priority = -1;
    try {
      size_t used = 0;
      priority = std::stoi(line.substr(0, colon), &used);
      if (line.substr(0, colon).find_first_not_of(" \t", used) != std::string::npos) priority = -1;
    } catch (const std::exception&) {
      priority = -1;
    }
    if (priority < 0) return fail("the priority must be a number of at least 0, got '" + line.substr(0, colon) + "'");
    std::vector<std::vector<std::string>> alternatives(1);
    std::istringstream words(line.substr(colon + 1));
    for (std::string word; words >> word;) {
      if (word == "|") {
        alternatives.emplace_back();
      } else if (word == "*") {
        if (alternatives.back().empty() || alternatives.back().back() == "*") {
          return fail("'*' must follow an op name");
        }
        alternatives.back().push_back(word);
      } else if (!mlir::RegisteredOperationName::lookup("tx8be." + word, &context)) {
        return fail("'" + word + "' is not a tx8be op");
      } else {
        alternatives.back().push_back(word);
      }
    }
    for (const std::vector<std::string>& tokens : alternatives) {
      if (tokens.empty()) return fail("an alternative has no ops");
      std::vector<std::vector<std::string>> sequences;
      std::vector<std::string> prefix;
      expand(tokens, 0, prefix, sequences);
      for (const std::vector<std::string>& sequence : sequences) insert(sequence, priority);
    }
  }
  return mlir::success();
}

}  // namespace tg::compiler::tx8be
