#include "tilegraph/tx8/graph_split.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "tilegraph/core/error.h"

namespace tg::tx8 {

namespace {

bool is_view_op(Op op) { return op == Op::VIEW || op == Op::RESHAPE || op == Op::PERMUTE || op == Op::TRANSPOSE; }

// The tensor a chain of view ops starting at `t` reads.
const Tensor* producer_of(const Tensor* t) {
  while (t && is_view_op(t->op)) t = t->src[0];
  return t;
}

}  // namespace

std::vector<Run> split_runs(const Graph& graph, const std::function<bool(const Tensor&)>& on_chip) {
  std::vector<Run> runs;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Tensor& node = *graph.nodes()[i];
    if (node.is_noop()) continue;
    const bool chip = on_chip(node);
    if (runs.empty() || runs.back().chip != chip) runs.push_back(Run{chip, {}});
    runs.back().nodes.push_back(i);
  }
  return runs;
}

std::vector<int64_t> last_readers(const Graph& graph) {
  std::vector<int64_t> last(graph.nodes().size(), -1);
  auto note = [&](const Tensor* t, int64_t reader) {
    const SourceRef ref = graph.ref_of(producer_of(t));
    if (ref >= 0) last[size_t(ref)] = std::max(last[size_t(ref)], reader);
  };
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Tensor* node = graph.nodes()[i];
    if (node->is_noop()) continue;
    for (const Tensor* src : node->src) {
      if (src) note(src, int64_t(i));
    }
  }
  for (const Tensor* out : graph.outputs()) note(out, std::numeric_limits<int64_t>::max());
  return last;
}

RunGraph extract_run(const Graph& graph, const Run& run, const std::vector<int64_t>& last_reader) {
  RunGraph r;
  r.ctx = std::make_unique<Context>(ContextOptions{.no_alloc = true});
  std::unordered_set<const Tensor*> in_run;
  for (size_t i : run.nodes) in_run.insert(graph.nodes()[i]);
  std::unordered_map<const Tensor*, Tensor*> clones;

  auto fresh = [&](const Tensor& t) {
    Tensor* c = r.ctx->new_tensor(t.type, std::span<const int64_t>(t.ne, kMaxDims));
    r.original[c] = &t;
    return c;
  };
  std::function<Tensor*(const Tensor*)> clone = [&](const Tensor* t) -> Tensor* {
    if (auto it = clones.find(t); it != clones.end()) return it->second;
    Tensor* c = fresh(*t);
    if (in_run.count(t) || is_view_op(t->op)) {
      *c = *t;
      c->flags &= ~uint32_t(kFlagOutput | kFlagPlaced);
      for (Tensor*& src : c->src) {
        if (src) src = clone(src);
      }
      if (is_view_op(t->op)) {
        // A view starts from what it reads: the storage of its base if the base is cloned as a
        // node of the run, else the base itself, which becomes a leaf.
        const Tensor* base = producer_of(t->src[0]);
        if (in_run.count(base)) {
          c->view_src = clone(t->view_src);
        } else {
          c->view_src = clone(base);
          c->view_offs = t->view_offs - (base->view_src ? base->view_offs : 0);
        }
      } else if (t->view_src) {
        c->view_src = clone(t->view_src);
      }
    } else {
      c->nb[0] = t->nb[0], c->nb[1] = t->nb[1], c->nb[2] = t->nb[2], c->nb[3] = t->nb[3];
      c->data = t->data;
      c->flags = t->flags & (kFlagParam | kFlagInput);
      std::copy(std::begin(t->name), std::end(t->name), std::begin(c->name));
    }
    clones[t] = c;
    return c;
  };

  const int64_t end = int64_t(run.nodes.back());
  std::vector<Tensor*> outputs;
  for (size_t i : run.nodes) {
    const Tensor* node = graph.nodes()[i];
    Tensor* c = clone(node);
    if (last_reader[i] > end || node->view_src) {
      outputs.push_back(c);
      r.written.push_back(node);
    }
  }
  if (outputs.empty()) throw Error("tx8: a run of nodes whose results nothing reads");
  r.graph = Graph::build(outputs);
  return r;
}

}  // namespace tg::tx8
