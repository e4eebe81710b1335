// TreeVisitor and TopologicalVisitor: nesting, DAGs whose shared nodes run once, several sinks,
// consumers of pass-through stores; and the scratch plan (liveness reuse, in-place, anchors).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include "evg/evg_test_utils.h"
#include "tilegraph/evg/evg.h"

namespace tg::evg::test {
namespace {

using Acc = VisitorAccLoad;
using LoadF = VisitorAuxLoad<float>;
using StoreF = VisitorAuxStore<float>;
template <class Fn>
using Compute = VisitorCompute<Fn>;

// a + b, counting how many vectors it was applied to.
struct CountingPlus {
  static constexpr int kArity = 2;
  static constexpr const char* kName = "counting_add";
  using Arguments = fn::NoArguments;
  CountingPlus() = default;
  explicit CountingPlus(const Arguments&) {}
  static inline std::atomic<int64_t> calls{0};
  template <class V>
  V operator()(V a, V b) const {
    calls.fetch_add(1, std::memory_order_relaxed);
    return a + b;
  }
};

// How many W-lane vectors one tile-extent node processes over the whole output: each block is
// cut into sub-tiles of up to L elements (whole rows, cols rounded up to W).
int64_t vectors_per_node(int64_t m, int64_t n, const BlockGrid& g, int lanes, int length) {
  const auto round_up = [&](int64_t x) { return (x + lanes - 1) / lanes * lanes; };
  int64_t total = 0;
  for (int64_t r0 = 0; r0 < m; r0 += g.block_rows) {
    for (int64_t c0 = 0; c0 < n; c0 += g.block_cols) {
      const int64_t rows = std::min(g.block_rows, m - r0), cols = std::min(g.block_cols, n - c0);
      const int64_t tile_cols = std::min<int64_t>(cols, length);
      const int64_t tile_rows = length / round_up(tile_cols);
      for (int64_t c = 0; c < cols; c += tile_cols) {
        for (int64_t r = 0; r < rows; r += tile_rows) {
          total += std::min(tile_rows, rows - r) * round_up(std::min(tile_cols, cols - c)) / lanes;
        }
      }
    }
  }
  return total;
}

// Catlass EVG's example (C+X)+(C+X).
using SharedDag = TopologicalVisitor<std::tuple<Seq<>, Seq<>, Seq<0, 1>, Seq<2, 2>, Seq<3>>, LoadF, LoadF,
                                     Compute<CountingPlus>, Compute<fn::Plus>, StoreF>;
using DuplicatedTree =
    TreeVisitor<StoreF, TreeVisitor<Compute<fn::Plus>, TreeVisitor<Compute<CountingPlus>, LoadF, LoadF>,
                                    TreeVisitor<Compute<CountingPlus>, LoadF, LoadF>>>;

template <class E>
int64_t count_calls(const typename E::Arguments& args, const std::vector<float>& acc, int64_t m, int64_t n,
                    const BlockGrid& g) {
  CountingPlus::calls = 0;
  run_epilogue<E>(args, acc, m, n, g, Schedule::kThreads, 3);
  return CountingPlus::calls.load();
}

TEST(EvgOrganisers, SharedDagNodeRunsOncePerVector) {
  for (const Shape& s : {Shape{13, 31}, Shape{64, 37}, Shape{1, 1}, Shape{0, 3}}) {
    const BlockGrid g{7, 13};
    Rng rng(3);
    const std::vector<float> acc = naive_accumulator(s.m, s.n, 1, rng);
    const std::vector<float> c = random_vector(size_t(s.m * s.n), rng), x = random_vector(size_t(s.m * s.n), rng);
    std::vector<double> ref(size_t(s.m * s.n));
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = (c[i] + x[i]) + (c[i] + x[i]);
    const auto check = [&]<class Dag, class Tree, int Lanes, int Length>(const char* name) {
      std::vector<float> d_dag(ref.size()), d_tree(ref.size());
      const int64_t dag_calls = count_calls<Dag>({{c.data()}, {x.data()}, {}, {}, {d_dag.data()}}, acc, s.m, s.n, g);
      const int64_t tree_calls = count_calls<Tree>(
          {{{{c.data()}, {x.data()}, {}}, {{c.data()}, {x.data()}, {}}, {}}, {d_tree.data()}}, acc, s.m, s.n, g);
      EXPECT_EQ(dag_calls, vectors_per_node(s.m, s.n, g, Lanes, Length)) << name << " " << describe(s, g);
      EXPECT_EQ(tree_calls, 2 * dag_calls) << name << " " << describe(s, g);
      EXPECT_EQ(compare(d_dag, ref, 0, 0), "") << name << " " << describe(s, g);
      EXPECT_EQ(compare(d_tree, ref, 0, 0), "") << name << " " << describe(s, g);
    };
    check.template operator()<BlockEpilogue<arch::Cpu<4>, 64, SharedDag>,
                              BlockEpilogue<arch::Cpu<4>, 64, DuplicatedTree>, 4, 64>("fused");
    check.template operator()<BlockEpilogue<arch::CpuStaged<8>, 32, SharedDag>,
                              BlockEpilogue<arch::CpuStaged<8>, 32, DuplicatedTree>, 8, 32>("staged");
  }
}

// t = acc + C; D = t; E = relu(t); r = column sums of t (a row vector); s = row maxima of E.
using ManySinks = TopologicalVisitor<std::tuple<Seq<>, Seq<>, Seq<0, 1>, Seq<2>, Seq<2>, Seq<4>, Seq<2>, Seq<5>>, Acc,
                                     LoadF, Compute<fn::Plus>, StoreF, Compute<fn::ReLU>, StoreF,
                                     VisitorRowReduce<reduce::Sum>, VisitorColReduce<reduce::Max>>;

TEST(EvgOrganisers, DagWithSeveralSinks) {
  for (const Shape& s : test_shapes()) {
    for (const BlockGrid& g : test_grids()) {
      Rng rng(uint32_t(s.m * 31 + s.n + g.block_cols));
      const std::vector<float> acc = naive_accumulator(s.m, s.n, 4, rng);
      const std::vector<float> c = random_vector(size_t(s.m * s.n), rng);
      std::vector<double> ref_d(acc.size()), ref_e(acc.size()), ref_r(size_t(s.n), 0.0), ref_s(size_t(s.m), -INFINITY);
      for (int64_t r = 0; r < s.m; ++r) {
        for (int64_t col = 0; col < s.n; ++col) {
          const size_t i = size_t(r * s.n + col);
          const float t = acc[i] + c[i];
          ref_d[i] = t;
          ref_e[i] = t > 0 ? t : 0.0f;
          ref_r[size_t(col)] += t;
          ref_s[size_t(r)] = std::max(ref_s[size_t(r)], ref_e[i]);
        }
      }
      for_each_policy<ManySinks>([&]<class E>(const char* policy) {
        std::vector<float> d(acc.size()), e(acc.size()), rsum(size_t(s.n)), smax(size_t(s.m));
        run_epilogue<E>({{}, {c.data()}, {}, {d.data()}, {}, {e.data()}, {rsum.data()}, {smax.data()}}, acc, s.m, s.n,
                        g, Schedule::kShuffled, 2);
        EXPECT_EQ(compare(d, ref_d, 0, 0), "") << describe(s, g) << " " << policy;
        EXPECT_EQ(compare(e, ref_e, 0, 0), "") << describe(s, g) << " " << policy;
        EXPECT_EQ(compare(rsum, ref_r, 1e-5, 1e-5), "") << describe(s, g) << " " << policy;
        EXPECT_EQ(compare(smax, ref_s, 0, 0), "") << describe(s, g) << " " << policy;
      });
    }
  }
}

// Organisers inside organisers: a DAG as a tree's child, a tree as a DAG's op, and a compute
// node reading a store's pass-through.
using SquareDag = TopologicalVisitor<std::tuple<Seq<>, Seq<0, 0>>, Acc, Compute<fn::Multiplies>>;
using TreeOfDag =
    TreeVisitor<StoreF, TreeVisitor<Compute<fn::Plus>, SquareDag, TreeVisitor<Compute<fn::Scale>, LoadF>>>;
using DagOfTree = TopologicalVisitor<std::tuple<Seq<>, Seq<>, Seq<0, 1>, Seq<2>>, TreeVisitor<Compute<fn::Exp>, Acc>,
                                     LoadF, Compute<fn::Minus>, StoreF>;
using AfterStore =
    TreeVisitor<StoreF,
                TreeVisitor<Compute<fn::ReLU>, TreeVisitor<StoreF, TreeVisitor<Compute<fn::Plus>, Acc, LoadF>>>>;

TEST(EvgOrganisers, NestedOrganisersAndPassThrough) {
  const Shape s{23, 45};
  const BlockGrid g{6, 10};
  Rng rng(9);
  const std::vector<float> acc = naive_accumulator(s.m, s.n, 3, rng);
  const std::vector<float> c = random_vector(acc.size(), rng);
  std::vector<double> ref1(acc.size()), ref2(acc.size()), ref3d(acc.size()), ref3e(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    ref1[i] = acc[i] * acc[i] + c[i] * 3.0f;
    ref2[i] = double(std::exp(double(acc[i]))) - c[i];
    const float t = acc[i] + c[i];
    ref3d[i] = t;
    ref3e[i] = t > 0 ? t : 0.0f;
  }
  for_each_policy<TreeOfDag>([&]<class E>(const char* policy) {
    std::vector<float> d(acc.size());
    run_epilogue<E>({{{{}, {}}, {{c.data()}, {3.0f}}, {}}, {d.data()}}, acc, s.m, s.n, g);
    EXPECT_EQ(compare(d, ref1, 0, 0), "") << policy;
  });
  for_each_policy<DagOfTree>([&]<class E>(const char* policy) {
    std::vector<float> d(acc.size());
    run_epilogue<E>({{{}, {}}, {c.data()}, {}, {d.data()}}, acc, s.m, s.n, g);
    EXPECT_EQ(compare(d, ref2, 1e-6, 1e-6), "") << policy;
  });
  for_each_policy<AfterStore>([&]<class E>(const char* policy) {
    std::vector<float> d(acc.size()), e(acc.size());
    run_epilogue<E>({{{{{}, {c.data()}, {}}, {d.data()}}, {}}, {e.data()}}, acc, s.m, s.n, g);
    EXPECT_EQ(compare(d, ref3d, 0, 0), "") << policy;
    EXPECT_EQ(compare(e, ref3e, 0, 0), "") << policy;
  });
}

// ---- the scratch plan ----

template <class EVG, class Arch, int L = 64>
using PlanOf = GraphExecutor<FlatOf<EVG>, Arch, L>;

// No two values share a slot while both are live, except an elementwise node writing over an
// input that dies at it; anchors (loads, reductions) share with nothing.
template <class Executor>
std::string check_plan(const char* name) {
  using Info = typename Executor::Info;
  constexpr auto plan = Executor::kPlan;
  for (int i = 0; i < Info::kSize; ++i) {
    if (plan.slot[size_t(i)] < 0) continue;
    const bool anchor_i = Info::kRole[size_t(i)] != NodeRole::kCompute;
    if (anchor_i != (plan.slot[size_t(i)] < plan.anchor_slots)) return std::string(name) + ": anchor slots misassigned";
    for (int j = i + 1; j < Info::kSize; ++j) {
      if (plan.slot[size_t(j)] < 0) continue;
      const int si = plan.slot[size_t(i)], sj = plan.slot[size_t(j)];
      if (anchor_i || Info::kRole[size_t(j)] != NodeRole::kCompute) {
        const int span_i = Info::kRole[size_t(i)] == NodeRole::kLoad ? 2 : 1;
        const int span_j = Info::kRole[size_t(j)] == NodeRole::kLoad ? 2 : 1;
        if (si < sj + span_j && sj < si + span_i) return std::string(name) + ": an anchor shares a slot";
        continue;
      }
      if (si != sj) continue;
      const int ti = plan.time[size_t(i)], tj = plan.time[size_t(j)];
      const int ui = plan.last_use[size_t(i)], uj = plan.last_use[size_t(j)];
      const bool disjoint = ui < tj || uj < ti;
      const bool in_place = ui == tj || uj == ti;
      if (!disjoint && !in_place) {
        return std::string(name) + ": nodes " + std::to_string(i) + " and " + std::to_string(j) +
               " share a slot while both live";
      }
    }
  }
  return "";
}

using GeluChain = TreeVisitor<
    StoreF,
    TreeVisitor<Compute<fn::GELU>,
                TreeVisitor<Compute<fn::Plus>, TreeVisitor<Compute<fn::Multiplies>, Acc, VisitorScalarBroadcast<float>>,
                            VisitorRowBroadcast<float>>>>;
// x = relu(acc); y = exp(acc); z = x + y; w = tanh(z); v = w * bias[col] and a row-extent value
// defined after x and y die; store v.
using Reuse =
    TopologicalVisitor<std::tuple<Seq<>, Seq<0>, Seq<0>, Seq<1, 2>, Seq<3>, Seq<>, Seq<5, 5>, Seq<4, 6>, Seq<7>>, Acc,
                       Compute<fn::ReLU>, Compute<fn::Exp>, Compute<fn::Plus>, Compute<fn::Tanh>,
                       VisitorRowBroadcast<float>, Compute<fn::Multiplies>, Compute<fn::Multiplies>, StoreF>;

TEST(EvgOrganisers, ScratchPlanReusesDeadBuffersAndKeepsAnchors) {
  // Node at a time: the chain mul -> add -> gelu runs in place in one slot.
  using StagedChain = PlanOf<GeluChain, arch::CpuStaged<4>>;
  constexpr auto chain = StagedChain::kPlan;
  EXPECT_EQ(chain.slots - chain.anchor_slots, 1);
  EXPECT_EQ(chain.anchor_slots, 3 * 2);  // acc, alpha, bias: double-buffered
  EXPECT_EQ(check_plan<StagedChain>("staged chain"), "");

  // Fused: only the stored value is materialised; mul and add live in registers.
  using FusedChain = PlanOf<GeluChain, arch::Cpu<4>>;
  constexpr auto fused = FusedChain::kPlan;
  EXPECT_EQ(fused.slots - fused.anchor_slots, 1);
  EXPECT_FALSE(fused.materialized[2]);  // acc * alpha
  EXPECT_FALSE(fused.materialized[4]);  // + bias
  EXPECT_TRUE(fused.materialized[5]);   // gelu, read by the store
  EXPECT_EQ(check_plan<FusedChain>("fused chain"), "");

  // x and y live together (two slots); z overwrites x in place; w overwrites z; the row value
  // (a different extent) takes y's slot once y is dead; v overwrites w.
  using StagedReuse = PlanOf<Reuse, arch::CpuStaged<4>>;
  constexpr auto reuse = StagedReuse::kPlan;
  EXPECT_EQ(reuse.slots - reuse.anchor_slots, 2);
  EXPECT_EQ(reuse.slot[3], reuse.slot[1]);
  EXPECT_EQ(reuse.slot[4], reuse.slot[3]);
  EXPECT_EQ(reuse.slot[6], reuse.slot[2]);
  EXPECT_EQ(reuse.slot[7], reuse.slot[4]);
  EXPECT_EQ(check_plan<StagedReuse>("staged reuse"), "");
  using FusedReuse = PlanOf<Reuse, arch::Cpu<4>>;
  using StagedSinks = PlanOf<ManySinks, arch::CpuStaged<4>>;
  using FusedSinks = PlanOf<ManySinks, arch::Cpu<16>>;
  using StagedDag = PlanOf<SharedDag, arch::CpuStaged<1>>;
  EXPECT_EQ(check_plan<FusedReuse>("fused reuse"), "");
  EXPECT_EQ(check_plan<StagedSinks>("staged sinks"), "");
  EXPECT_EQ(check_plan<FusedSinks>("fused sinks"), "");
  EXPECT_EQ(check_plan<StagedDag>("staged dag"), "");

  // Slot sizes follow element type and compute length; the arena is their sum.
  EXPECT_EQ(chain.slot_bytes[0], 64u * sizeof(float));
  EXPECT_EQ(chain.slot_bytes[2], 64u);  // a scalar: one vector, rounded up to 64 bytes
  size_t total = 0;
  for (int slot = 0; slot < chain.slots; ++slot) total += chain.slot_bytes[size_t(slot)];
  EXPECT_EQ(chain.arena_bytes, total);
  EXPECT_EQ((BlockEpilogue<arch::CpuStaged<4>, 64, GeluChain>::scratch_bytes_per_thread()), total);

  // The reuse graph gives the same results under both schedules.
  const Shape s{9, 70};
  Rng rng(4);
  const std::vector<float> acc = naive_accumulator(s.m, s.n, 2, rng);
  const std::vector<float> bias = random_vector(size_t(s.n), rng);
  std::vector<double> ref(acc.size());
  for (int64_t r = 0; r < s.m; ++r) {
    for (int64_t c = 0; c < s.n; ++c) {
      const double a = acc[size_t(r * s.n + c)];
      const double b = bias[size_t(c)];
      ref[size_t(r * s.n + c)] = std::tanh((a > 0 ? a : 0) + std::exp(a)) * (b * b);
    }
  }
  for_each_policy<Reuse>([&]<class E>(const char* policy) {
    std::vector<float> d(acc.size());
    run_epilogue<E>({{}, {}, {}, {}, {}, {bias.data()}, {}, {}, {d.data()}}, acc, s.m, s.n, BlockGrid{4, 33});
    EXPECT_EQ(compare(d, ref, 1e-5, 1e-6), "") << policy;
  });
}

}  // namespace
}  // namespace tg::evg::test
