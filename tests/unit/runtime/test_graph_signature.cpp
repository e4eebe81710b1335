// GraphSignature's compact records against a plain reference: a snapshot of every property the
// match covers (the ACL graph's node properties), compared field by field. The records leave out what follows
// from other fields (default strides, zero op_params, absent sources, a zero view offset) and
// pack small shapes, so every shortcut gets a case where it must not hide a difference.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tilegraph/core/context.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/runtime/graph_signature.h"

namespace tg {
namespace {

// What the ACL graph compares, kept the obvious way.
struct Snapshot {
  struct Props {
    DType type;
    Op op;
    int64_t ne[kMaxDims];
    size_t nb[kMaxDims];
    int32_t op_params[kMaxOpParams];
    size_t view_offs;
    bool is_view;
    const void* data;
    uint32_t io_flags;  // kFlagInput and kFlagOutput: a captured graph may depend on them
    std::array<SourceRef, kMaxSrc> refs;
  };
  std::vector<Props> nodes, leafs;

  static Props props(const Tensor& t, const std::array<SourceRef, kMaxSrc>& refs) {
    Props p{t.type, t.op, {}, {}, {}, t.view_offs, t.view_src != nullptr, t.data, t.flags & (kFlagInput | kFlagOutput),
            refs};
    std::memcpy(p.ne, t.ne, sizeof p.ne);
    std::memcpy(p.nb, t.nb, sizeof p.nb);
    std::memcpy(p.op_params, t.op_params, sizeof p.op_params);
    return p;
  }
  explicit Snapshot(const Graph& g) {
    for (size_t i = 0; i < g.size(); ++i) {
      std::array<SourceRef, kMaxSrc> refs;
      for (int j = 0; j < kMaxSrc; ++j) refs[size_t(j)] = g.source(i, j);
      nodes.push_back(props(*g.nodes()[i], refs));
    }
    std::array<SourceRef, kMaxSrc> none;
    none.fill(kNoSource);
    for (const Tensor* leaf : g.leafs()) leafs.push_back(props(*leaf, none));
  }

  static bool same_structure(const Props& a, const Props& b, bool leaf) {
    bool same = a.type == b.type && a.io_flags == b.io_flags && std::memcmp(a.ne, b.ne, sizeof a.ne) == 0 &&
                std::memcmp(a.nb, b.nb, sizeof a.nb) == 0;
    if (!leaf) {
      same = same && a.op == b.op && std::memcmp(a.op_params, b.op_params, sizeof a.op_params) == 0 &&
             a.view_offs == b.view_offs && a.is_view == b.is_view && a.refs == b.refs;
    }
    return same;
  }
  SignatureMatch match(const Snapshot& now) const {
    if (now.nodes.size() != nodes.size() || now.leafs.size() != leafs.size()) return SignatureMatch::kDifferent;
    bool moved = false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!same_structure(nodes[i], now.nodes[i], false)) return SignatureMatch::kDifferent;
      moved |= !nodes[i].is_view && nodes[i].data != now.nodes[i].data;
    }
    for (size_t i = 0; i < leafs.size(); ++i) {
      if (!same_structure(leafs[i], now.leafs[i], true)) return SignatureMatch::kDifferent;
      moved |= leafs[i].data != now.leafs[i].data;
    }
    return moved ? SignatureMatch::kAddressesOnly : SignatureMatch::kExact;
  }
};

// A hand-made graph: `n_leafs` leaves and a chain of nodes, node i reading node i-1 and leaf
// i % n_leafs; node 1 is a view of leaf 0. Fields are then set directly, as a test needs them.
struct Fixture {
  Context ctx;
  std::vector<Tensor*> leafs, nodes;
  Graph graph;

  explicit Fixture(int n_nodes = 6, int n_leafs = 3) {
    for (int i = 0; i < n_leafs; ++i) leafs.push_back(ctx.new_tensor(DType::F32, {8, 4}));
    Tensor* prev = nullptr;
    for (int i = 0; i < n_nodes; ++i) {
      Tensor* t = ctx.new_tensor(DType::F32, {8, 4});
      t->op = Op::ADD;
      t->src[0] = prev ? prev : leafs[0];
      t->src[1] = leafs[size_t(i % n_leafs)];
      if (i == 1) {
        t->op = Op::VIEW;
        t->view_src = leafs[0];
        t->view_offs = 0;
        t->data = leafs[0]->data;
      }
      nodes.push_back(t);
      prev = t;
    }
    rebuild();
  }
  void rebuild() { graph = Graph::build(nodes.back()); }
};

SignatureMatch record_then_match(SignatureIsa isa, Fixture& f, const std::function<void()>& change) {
  GraphSignature s;
  s.record(f.graph);
  EXPECT_EQ(s.matches(f.graph, nullptr, isa), SignatureMatch::kExact);
  change();
  return s.matches(f.graph, nullptr, isa);
}

// Every test runs the portable verification and the AVX-512 one (where the CPU has it) on the
// same records.
class GraphSignatureIsa : public testing::TestWithParam<SignatureIsa> {
 protected:
  void SetUp() override {
    if (!GraphSignature::supports(GetParam())) GTEST_SKIP() << "this CPU cannot run the AVX-512 verification";
  }
  SignatureIsa isa() const { return GetParam(); }
};

// Contiguous strides are left out of the records for every type, the block-quantized ones (a
// q6_K block is 210 bytes for 256 elements) included.
TEST(GraphSignature, ContiguousStridesOfEveryTypeTakeTheShortForm) {
  const auto signature_bytes = [](DType type) {
    Context ctx({.no_alloc = true});
    const int64_t row = int64_t(dtype_traits(type).block_size) * 3;
    Tensor* a = ctx.new_tensor(type, {row, 5, 2});
    Tensor* b = ctx.new_tensor(type, {row, 5, 2});
    GraphSignature s;
    s.record(Graph::build(cpy(ctx, a, b)));
    return s.bytes();
  };
  const size_t f32_bytes = signature_bytes(DType::F32);
  for (int t = 0; t < kDTypeCount; ++t) {
    EXPECT_EQ(signature_bytes(DType(t)), f32_bytes) << dtype_name(DType(t));
  }
}

TEST_P(GraphSignatureIsa, NonContiguousStrides) {
  Fixture f;
  Tensor* t = f.nodes[3];
  t->nb[1] = 64;  // rows padded: not the contiguous layout, so stored in full
  t->nb[2] = t->nb[3] = 256;
  EXPECT_EQ(record_then_match(isa(), f, [&] { t->nb[3] = 512; }), SignatureMatch::kDifferent);
  Fixture g;  // contiguous when recorded: every stride is checked against the default
  for (int d = 0; d < kMaxDims; ++d) {
    EXPECT_EQ(record_then_match(isa(), g, [&] { g.nodes[2]->nb[d] += 4; }), SignatureMatch::kDifferent) << d;
    g.nodes[2]->nb[d] -= 4;
  }
  // A q8_0 tensor's default rows are whole blocks.
  Fixture q;
  q.nodes[4]->type = DType::Q8_0;
  q.nodes[4]->ne[0] = 64;
  q.nodes[4]->nb[0] = 34;
  q.nodes[4]->nb[1] = 68;
  q.nodes[4]->nb[2] = q.nodes[4]->nb[3] = 68 * 4;
  EXPECT_EQ(record_then_match(isa(), q, [&] { q.nodes[4]->nb[1] = 72; }), SignatureMatch::kDifferent);
}

TEST_P(GraphSignatureIsa, OpParamsUpToTheLastWord) {
  Fixture f;
  f.nodes[2]->op_params[kMaxOpParams - 1] = 7;
  EXPECT_EQ(record_then_match(isa(), f, [&] { f.nodes[2]->op_params[kMaxOpParams - 1] = 8; }),
            SignatureMatch::kDifferent);
  EXPECT_EQ(record_then_match(isa(), f, [&] { f.nodes[2]->op_params[kMaxOpParams - 1] = 0; }),
            SignatureMatch::kDifferent);
  // Recorded with no parameters: any non-zero word, the last pair included, is a difference.
  for (int i : {0, 1, kMaxOpParams - 2, kMaxOpParams - 1}) {
    Fixture g;
    EXPECT_EQ(record_then_match(isa(), g, [&] { g.nodes[2]->op_params[i] = 1; }), SignatureMatch::kDifferent) << i;
  }
}

TEST_P(GraphSignatureIsa, NoSourcesAndAllSources) {
  Fixture f(3, kMaxSrc);
  Tensor* all = f.nodes.back();
  for (int j = 0; j < kMaxSrc; ++j) all->src[j] = f.leafs[size_t(j)];
  Tensor* none = f.ctx.new_tensor(DType::F32, {8, 4});
  none->op = Op::SCALE;  // a node with no sources at all
  all->src[kMaxSrc - 1] = none;
  f.rebuild();
  GraphSignature s;
  s.record(f.graph);
  EXPECT_EQ(s.matches(f.graph, nullptr, isa()), SignatureMatch::kExact);
  all->src[kMaxSrc - 1] = f.leafs[0];  // the last source comes from elsewhere
  f.rebuild();
  EXPECT_EQ(s.matches(f.graph, nullptr, isa()), SignatureMatch::kDifferent);
  all->src[kMaxSrc - 1] = nullptr;  // one source fewer
  f.rebuild();
  EXPECT_EQ(s.matches(f.graph, nullptr, isa()), SignatureMatch::kDifferent);
  all->src[kMaxSrc - 1] = none;
  none->src[0] = f.leafs[1];  // the source-less node gets one
  f.rebuild();
  EXPECT_EQ(s.matches(f.graph, nullptr, isa()), SignatureMatch::kDifferent);
  none->src[0] = nullptr;
  f.rebuild();
  EXPECT_EQ(s.matches(f.graph, nullptr, isa()), SignatureMatch::kExact);
}

TEST_P(GraphSignatureIsa, InputAndOutputFlags) {
  // A backend may capture differently for a graph input or output (the CPU never fuses one
  // away), so either flag changing on a node or a leaf is another graph; kFlagParam is not.
  for (const uint32_t flag : {kFlagInput, kFlagOutput}) {
    Fixture f;
    EXPECT_EQ(record_then_match(isa(), f, [&] { f.nodes[3]->flags |= flag; }), SignatureMatch::kDifferent);
    Fixture g;
    EXPECT_EQ(record_then_match(isa(), g, [&] { g.leafs[1]->flags |= flag; }), SignatureMatch::kDifferent);
  }
  Fixture f;
  f.nodes[2]->flags |= kFlagOutput;
  EXPECT_EQ(record_then_match(isa(), f, [&] { f.nodes[2]->flags &= ~uint32_t(kFlagOutput); }),
            SignatureMatch::kDifferent);
  Fixture g;
  EXPECT_EQ(record_then_match(isa(), g, [&] { g.nodes[3]->flags |= kFlagParam; }), SignatureMatch::kExact);
}

TEST_P(GraphSignatureIsa, Leaves) {
  Fixture f;
  Tensor* leaf = f.leafs[2];
  EXPECT_EQ(record_then_match(isa(), f, [&] { leaf->type = DType::I32; }), SignatureMatch::kDifferent);  // same size
  leaf->type = DType::F32;
  EXPECT_EQ(record_then_match(isa(), f, [&] { leaf->ne[1] = 5; }), SignatureMatch::kDifferent);
  leaf->ne[1] = 4;
  EXPECT_EQ(record_then_match(isa(), f, [&] { leaf->nb[1] = 64; }), SignatureMatch::kDifferent);
  leaf->nb[1] = 32;
  void* data = leaf->data;
  EXPECT_EQ(record_then_match(isa(), f, [&] { leaf->data = f.leafs[1]->data; }), SignatureMatch::kAddressesOnly);
  leaf->data = data;
}

TEST_P(GraphSignatureIsa, ViewTurnedOwnerAndBack) {
  Fixture f;
  Tensor* view = f.nodes[1];
  // Same data pointer either way: only the view flag tells them apart.
  EXPECT_EQ(record_then_match(isa(), f, [&] { view->view_src = nullptr; }), SignatureMatch::kDifferent);
  EXPECT_EQ(record_then_match(isa(), f, [&] { view->view_src = f.leafs[0]; }), SignatureMatch::kDifferent);
  EXPECT_EQ(record_then_match(isa(), f, [&] { view->data = f.leafs[1]->data; }), SignatureMatch::kExact)
      << "a view's address is exempt";
  EXPECT_EQ(record_then_match(isa(), f, [&] { view->view_offs = 32; }), SignatureMatch::kDifferent);
  EXPECT_EQ(record_then_match(isa(), f, [&] { view->view_offs = 0; }), SignatureMatch::kDifferent);
}

TEST_P(GraphSignatureIsa, LargeShapesAndOutOfRangeValues) {
  Fixture f;
  Tensor* t = f.nodes[3];
  // Recorded with small shapes (packed in 16 bits): 65536 and more must not wrap onto them.
  EXPECT_EQ(record_then_match(isa(), f, [&] { t->ne[0] += 65536; }), SignatureMatch::kDifferent);
  t->ne[0] -= 65536;
  EXPECT_EQ(record_then_match(isa(), f, [&] { t->ne[3] = -1; }), SignatureMatch::kDifferent);
  t->ne[3] = 1;
  t->ne[2] = 70000;  // recorded in full
  EXPECT_EQ(record_then_match(isa(), f, [&] { t->ne[2] = 70001; }), SignatureMatch::kDifferent);
  t->ne[2] = 1;
  EXPECT_EQ(record_then_match(isa(), f, [&] { t->op = Op(int32_t(Op::ADD) + 256); }), SignatureMatch::kDifferent);
  EXPECT_EQ(record_then_match(isa(), f, [&] { t->op = Op::ADD; }), SignatureMatch::kDifferent);
  EXPECT_EQ(record_then_match(isa(), f, [&] { t->type = DType(int32_t(DType::F32) + 65536); }),
            SignatureMatch::kDifferent);
  t->type = DType::F32;
}

TEST_P(GraphSignatureIsa, MatchGivesTheKeyOfAMovedGraph) {
  Fixture f;
  GraphSignature s;
  s.record(f.graph);
  GraphKey key;
  ASSERT_EQ(s.matches(f.graph, &key, isa()), SignatureMatch::kExact);
  EXPECT_EQ(key, GraphSignature::key(f.graph));
  // One moved address always changes the sum (its term is a bijection of the address); two can
  // cancel for some layouts (equal distances, as ThreadSanitizer's heap gave), so only the key's
  // agreement with key() is checked after the second.
  f.nodes[2]->data = f.leafs[1]->data;
  ASSERT_EQ(s.matches(f.graph, &key, isa()), SignatureMatch::kAddressesOnly);
  EXPECT_EQ(key, GraphSignature::key(f.graph));
  EXPECT_NE(key.addresses, s.recorded_key().addresses);
  f.leafs[0]->data = f.leafs[2]->data;
  ASSERT_EQ(s.matches(f.graph, &key, isa()), SignatureMatch::kAddressesOnly);
  EXPECT_EQ(key, GraphSignature::key(f.graph));
}

// Random single-field changes (and no change, and a change back) agree with the reference.
TEST_P(GraphSignatureIsa, AgreesWithTheReferenceOnRandomChanges) {
  std::mt19937_64 rng(20261122);
  const auto pick = [&](uint64_t n) { return size_t(rng() % n); };
  const int64_t sizes[] = {0, 1, 2, 7, 65535, 65536, 1 << 20, -1};
  for (int round = 0; round < 3000; ++round) {
    Fixture f(int(1 + pick(8)), int(1 + pick(4)));
    // Random starting values, so records of every shape get tested.
    for (Tensor* t : f.nodes) {
      if (pick(3) == 0) t->ne[pick(4)] = sizes[pick(8)];
      if (pick(3) == 0) t->nb[pick(4)] = pick(1000);
      if (pick(2) == 0) t->op_params[pick(kMaxOpParams)] = int32_t(rng());
      if (pick(4) == 0) t->view_offs = pick(3) * 16;
      if (pick(8) == 0) t->type = DType(pick(kDTypeCount + 2));
    }
    f.rebuild();
    GraphSignature s;
    s.record(f.graph);
    const Snapshot before(f.graph);
    ASSERT_EQ(s.matches(f.graph, nullptr, isa()), SignatureMatch::kExact);

    std::vector<Tensor*> all = f.nodes;
    all.insert(all.end(), f.leafs.begin(), f.leafs.end());
    Tensor* t = all[pick(all.size())];
    switch (pick(10)) {
      case 0: t->ne[pick(4)] = sizes[pick(8)]; break;
      case 1: t->nb[pick(4)] ^= size_t(1) << pick(40); break;
      case 2: t->op_params[pick(kMaxOpParams)] ^= int32_t(1u << pick(32)); break;
      case 3: t->view_offs = pick(2) * 32; break;
      case 4: t->view_src = t->view_src ? nullptr : f.leafs[0]; break;
      case 5: t->data = static_cast<char*>(t->data) + 64 * pick(2); break;
      case 6: t->type = DType(pick(kDTypeCount)); break;
      case 7:
        if (t->op != Op::NONE) t->op = Op(pick(kOpCount - 1) + 1);
        break;
      case 8: t->flags ^= std::array{kFlagInput, kFlagOutput, kFlagParam}[pick(3)]; break;
      default:
        if (t->op != Op::NONE) t->src[pick(kMaxSrc)] = pick(2) ? nullptr : f.leafs[pick(f.leafs.size())];
        break;
    }
    f.rebuild();
    const Snapshot after(f.graph);
    GraphKey key;
    const SignatureMatch expected = before.match(after);
    ASSERT_EQ(s.matches(f.graph, &key, isa()), expected) << "round " << round;
    if (expected != SignatureMatch::kDifferent) {
      ASSERT_EQ(key, GraphSignature::key(f.graph)) << "round " << round;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GraphSignature, GraphSignatureIsa,
                         testing::Values(SignatureIsa::kPortable, SignatureIsa::kAvx512),
                         [](const testing::TestParamInfo<SignatureIsa>& info) {
                           return info.param == SignatureIsa::kAvx512 ? std::string("Avx512") : std::string("Portable");
                         });

}  // namespace
}  // namespace tg
