// `tilegraph-bench graph`, lookup section: finding a captured graph on an exact hit, per node:
// GraphSignature::key + GraphCache::find against the ACL graph cache's method, a linear scan that
// memcmp-s full per-node property arrays.
#include <cstdio>
#include <cstring>
#include <list>
#include <stdexcept>

#include "graph_workloads.h"
#include "measure.h"
#include "tilegraph/runtime/graph_cache.h"
#include "tilegraph/runtime/graph_signature.h"

namespace tg::bench::graph_suite {

namespace {

// ggml_graph_node_properties, as llama.cpp's CANN backend records it for its ACL graph cache:
// every property of a node and its sources.
struct NodeProperties {
  const void* node_address;
  int64_t ne[kMaxDims];
  size_t nb[kMaxDims];
  const void* src_address[kMaxSrc];
  int64_t src_ne[kMaxSrc][kMaxDims];
  size_t src_nb[kMaxSrc][kMaxDims];
  int32_t node_op;
  int32_t op_params[kMaxOpParams];
};

// The ACL graph cache's matching: per executed node (no-op nodes skipped) the properties above, a VIEW's
// address not compared; a lookup records the graph's properties and scans the cache from the
// front, memcmp-ing the arrays of every graph with the same node count.
class LinearScanCache {
 public:
  static void record(const Graph& graph, std::vector<NodeProperties>& out) {
    out.resize(graph.size());  // capacity kept: no allocation once warm
    size_t n = 0;
    for (const Tensor* node : graph.nodes()) {
      if (node->is_noop()) continue;
      NodeProperties& p = out[n++];
      std::memset(&p, 0, sizeof p);  // padding too, for memcmp
      p.node_address = node->op == Op::VIEW ? nullptr : node->data;
      std::memcpy(p.ne, node->ne, sizeof p.ne);
      std::memcpy(p.nb, node->nb, sizeof p.nb);
      for (int j = 0; j < kMaxSrc; ++j) {
        const Tensor* src = node->src[j];
        if (!src) continue;
        p.src_address[j] = src->data;
        std::memcpy(p.src_ne[j], src->ne, sizeof p.src_ne[j]);
        std::memcpy(p.src_nb[j], src->nb, sizeof p.src_nb[j]);
      }
      p.node_op = int32_t(node->op);
      std::memcpy(p.op_params, node->op_params, sizeof p.op_params);
    }
    out.resize(n);
  }

  void push_back(const Graph& graph) {
    entries_.emplace_back();
    record(graph, entries_.back());
  }

  // The index of the matching entry or -1. The hit stays where it is, so every lookup scans the
  // same entries (the worst case puts it last).
  int find(const Graph& graph) {
    record(graph, scratch_);
    int index = 0;
    for (const std::vector<NodeProperties>& entry : entries_) {
      if (entry.size() == scratch_.size() &&
          std::memcmp(entry.data(), scratch_.data(), entry.size() * sizeof(NodeProperties)) == 0) {
        return index;
      }
      ++index;
    }
    return -1;
  }

 private:
  std::list<std::vector<NodeProperties>> entries_;
  std::vector<NodeProperties> scratch_;
};

volatile float sink;  // keeps the lookup loop's result alive

}  // namespace

std::vector<LookupRow> run_lookup(bool quiet) {
  constexpr int kCached = 12;
  std::vector<LookupRow> rows;
  for (int n : {1000, 10000}) {
    // distinct: 12 graphs of different widths (different keys), the target last in the scans.
    // same-shape: 12 identical chains built in different contexts (same key and structure,
    // different data addresses: the cache verifies every one of them), the target last.
    for (const bool same_shape : {false, true}) {
      std::vector<std::unique_ptr<Context>> contexts;
      std::vector<Graph> graphs;
      for (int g = 0; g < kCached; ++g) {
        contexts.push_back(std::make_unique<Context>());
        const int64_t width = same_shape ? 1 : kCached - g;  // the target (last) has width 1
        graphs.push_back(Graph::build(build_chain(*contexts.back(), n, ChainKind::kUnfusable, width)));
      }
      const Graph& target = graphs.back();
      GraphCache cache(kCached);
      LinearScanCache scan;
      // Inserted so the target ends up least recently used, and scanned last by the linear scan.
      for (int g = kCached - 1; g >= 0; --g) {
        auto entry = std::make_unique<CachedGraph>();
        entry->signature.record(graphs[size_t(g)]);
        cache.insert(std::move(entry));
      }
      for (const Graph& g : graphs) scan.push_back(g);
      if (cache.find(target, GraphSignature::key(target)).match != SignatureMatch::kExact ||
          scan.find(target) != kCached - 1) {
        throw std::runtime_error("graph bench: lookup baseline does not find its graph");
      }
      const std::string tag = "lookup/" + std::to_string(n) + (same_shape ? "/same-shape" : "/distinct");
      LookupRow row{same_shape ? "12 same-shape graphs, other addresses" : "12 distinct graphs",
                    size_t(n),
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0};
      const double per = 1e9 / double(n);
      uint64_t key = 0;
      const GraphKey target_key = GraphSignature::key(target);
      std::vector<std::vector<double>> cpu;
      const auto t = measure_rounds(
          tag,
          {[&] { key += GraphSignature::key(target).structure; },
           [&] { key += uint64_t(cache.find(target, target_key).match); },
           [&] { key += uint64_t(cache.find(target, GraphSignature::key(target)).match); },
           [&] { key += uint64_t(scan.find(target)); }, [&] { key += uint64_t(cache.find_recent(target).match); }},
          7, 0.01, {}, &cpu);
      row.ours_cpu_ns = median_of(cpu[2]) * per;
      row.scan_cpu_ns = median_of(cpu[3]) * per;
      row.key_ns = median_of(t[0]) * per;
      row.find_ns = median_of(t[1]) * per;
      row.ours_ns = median_of(t[2]) * per;
      row.scan_ns = median_of(t[3]) * per;
      row.recent_ns = median_of(t[4]) * per;
      row.ratio = median_ratio(t[3], t[2]);
      sink = float(key);
      rows.push_back(row);
      if (!quiet) {
        std::printf("%-38s %6zu %9.2f %9.2f %9.2f %9.2f %9.2f %8.1fx %9.2f %9.2f\n", row.scenario.c_str(), row.nodes,
                    row.key_ns, row.find_ns, row.ours_ns, row.recent_ns, row.scan_ns, row.ratio, row.ours_cpu_ns,
                    row.scan_cpu_ns);
        std::fflush(stdout);
      }
    }
  }
  return rows;
}

}  // namespace tg::bench::graph_suite
