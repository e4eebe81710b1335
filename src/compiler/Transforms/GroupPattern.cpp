// group-pattern (Passes.td): finds chains of ops that match the group patterns (built in, and a
// file's) with the pattern trie, and makes each chosen chain a tx8be.group, as the TX8 back
// end's pattern grouping does.
#include <fstream>
#include <sstream>

#include <mlir/Pass/Pass.h>
#include <mlir/Transforms/TopologicalSortUtils.h>

#include "GraphBlocks.h"
#include "GroupBuilder.h"
#include "GroupPatternTrie.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

struct Match {
  llvm::SmallVector<mlir::Operation*> ops;  // the chain, producer first
  int priority = -1;
  bool found() const { return priority >= 0; }
  // Longer wins, then the higher priority.
  bool better_than(const Match& other) const {
    if (!found()) return false;
    if (!other.found()) return true;
    if (ops.size() != other.ops.size()) return ops.size() > other.ops.size();
    return priority > other.priority;
  }
};

// The best pattern match of a chain through `op` below `parent`, with `path` the ops matched
// above. A user is followed when it is in the same block, may be grouped, and does not load a
// value the op does not store.
Match search(const PatternTrieNode& parent, mlir::Operation* op, llvm::SmallVector<mlir::Operation*>& path) {
  Match best;
  auto child = parent.children.find(op->getName().stripDialect().str());
  if (child == parent.children.end()) return best;
  const PatternTrieNode& node = *child->second;
  path.push_back(op);
  if (node.terminal()) best = Match{path, node.priority};
  const bool stores = mlir::cast<OpLibInterface>(op).queryOpAttr().needStore != 0;
  llvm::SmallVector<mlir::Operation*> users;
  for (mlir::Operation* user : op->getUsers()) {
    if (user->getBlock() == op->getBlock() && is_groupable(user) && !llvm::is_contained(users, user)) {
      users.push_back(user);
    }
  }
  llvm::sort(users, [](mlir::Operation* a, mlir::Operation* b) { return a->isBeforeInBlock(b); });
  for (mlir::Operation* user : users) {
    if (!stores && mlir::cast<OpLibInterface>(user).queryOpAttr().needLoad != 0) continue;
    Match candidate = search(node, user, path);
    if (candidate.better_than(best)) best = std::move(candidate);
  }
  path.pop_back();
  return best;
}

struct GroupPatternPass : public GroupPatternBase<GroupPatternPass> {
  mlir::LogicalResult initialize(mlir::MLIRContext* context) override {
    trie_ = std::make_shared<PatternTrie>();
    std::string error;
    if (!noBuiltin && mlir::failed(trie_->add(kBuiltinGroupPatterns, "<built-in patterns>", *context, error))) {
      return mlir::emitError(mlir::UnknownLoc::get(context)) << error;
    }
    if (!patternFile.empty()) {
      std::ifstream file(patternFile);
      if (!file)
        return mlir::emitError(mlir::UnknownLoc::get(context))
               << "cannot read the pattern file '" << patternFile << "'";
      std::stringstream text;
      text << file.rdbuf();
      if (mlir::failed(trie_->add(text.str(), patternFile, *context, error))) {
        return mlir::emitError(mlir::UnknownLoc::get(context)) << error;
      }
    }
    return mlir::success();
  }

  void runOnOperation() override {
    for (mlir::Block* block : graph_blocks(getOperation())) {
      if (mlir::failed(group_block(*block))) return signalPassFailure();
    }
  }

  mlir::LogicalResult group_block(mlir::Block& block) {
    std::vector<Match> matches;
    llvm::SmallVector<mlir::Operation*> path;
    for (mlir::Operation& op : block) {
      if (!is_groupable(&op)) continue;
      Match match = search(trie_->root(), &op, path);
      if (match.found()) matches.push_back(std::move(match));
    }
    // Longest first (then priority, then program order); each op joins one group.
    std::stable_sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) { return a.better_than(b); });
    llvm::SmallPtrSet<mlir::Operation*, 32> claimed;
    bool grouped = false;
    for (const Match& match : matches) {
      if (llvm::any_of(match.ops, [&](mlir::Operation* op) { return claimed.count(op) != 0; })) continue;
      if (!is_convex(match.ops)) continue;
      claimed.insert(match.ops.begin(), match.ops.end());
      create_group(match.ops);
      grouped = true;
    }
    if (grouped && !mlir::sortTopologically(&block)) {
      return block.getParentOp()->emitError("group-pattern: the groups formed a cycle");
    }
    return mlir::success();
  }

  std::shared_ptr<PatternTrie> trie_;
};

}  // namespace

std::unique_ptr<mlir::Pass> createGroupPatternPass() { return std::make_unique<GroupPatternPass>(); }

}  // namespace tg::compiler::tx8be
