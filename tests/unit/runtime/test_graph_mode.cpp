// Graph mode's decisions: capture, match, a miss for each property that changes,
// the VIEW address exemption, LRU order and eviction, configuration, prefill detection, the
// consecutive-update guard. The backend here only counts calls; replay correctness on a real
// backend is tested with the CPU backend (tests/unit/cpu/test_graph_replay.cpp).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tilegraph/backends.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/runtime/graph_allocator.h"
#include "tilegraph/runtime/graph_mode.h"

namespace tg {
namespace {

struct CountingCapture final : CapturedGraph {
  explicit CountingCapture(int id) : id(id) { ++alive; }
  ~CountingCapture() override { --alive; }
  size_t bytes() const override { return 1000; }
  int id;
  static inline int alive = 0;  // captures not yet released
};

class CountingBackend final : public Backend {
 public:
  explicit CountingBackend(GraphModeConfig config = {}) : mode(config) {}
  std::string_view name() const override { return "counting"; }
  bool supports_op(const Tensor&, std::string*) const override { return true; }
  void compute(const Graph& graph) override {
    mode.compute(*this, graph, [this] {
      if (fail_eager) throw Error("counting: eager failed");
      ++eager;
    });
  }
  bool can_capture(const Graph& graph, std::string* why) const override {
    for (const Tensor* n : graph.nodes()) {
      if (n->op == Op::ARGMAX) {  // stands in for a node this backend cannot capture
        if (why) *why = "argmax";
        return false;
      }
    }
    return true;
  }
  std::unique_ptr<CapturedGraph> capture(const Graph&) override {
    if (fail_capture) throw CaptureError("counting: capture failed");
    if (fail_while_executing) {
      ++executed_in_capture;  // as a capture that stopped part-way through the nodes
      throw Error("counting: a node failed");
    }
    return std::make_unique<CountingCapture>(++captures);
  }
  void launch(CapturedGraph& g) override {
    last_launched = static_cast<CountingCapture&>(g).id;
    ++launches;
    if (during_launch) during_launch();
  }
  bool rebind(CapturedGraph&, const Graph&) override {
    ++rebinds;
    return allow_rebind;
  }

  GraphMode mode;
  int eager = 0, captures = 0, launches = 0, rebinds = 0, last_launched = 0, executed_in_capture = 0;
  bool allow_rebind = true, fail_capture = false, fail_eager = false, fail_while_executing = false;
  std::function<void()> during_launch;  // e.g. to hold a replay in progress
};

size_t cached_graphs(const CountingBackend& backend) {
  return backend.mode.with_cache([](const GraphCache& c) { return c.size(); });
}
size_t cached_bytes(const CountingBackend& backend) {
  return backend.mode.with_cache([](const GraphCache& c) { return c.bytes(); });
}

// out = scale(unary(a (+|-) b)) over 4-D tensors; every field is a property the match must see.
struct Variant {
  int64_t ne[4] = {8, 4, 3, 2};
  int64_t pad[4] = {0, 0, 0, 0};  // extra elements per row / matrix / batch of b's storage: changes nb1..3
  bool transpose_b = false;       // changes nb0 (and nb1) of b
  bool subtract = false;          // op
  UnaryOp unary = UnaryOp::RELU;  // op_params of the UNARY node
  float s = 2.0f;                 // op_params of SCALE
  bool extra_node = false;        // node count
  int flash_q = 0;                // > 0: add a flash attention node with this many queries
};

// Leafs live in `leafs` (so their addresses stay put across builds unless a test swaps one);
// nodes are placed by a GraphAllocator, deterministic for equal structures.
struct Step {
  Context ctx{{.no_alloc = true}};
  Graph graph;
  Tensor* b_view = nullptr;
};

struct Leafs {
  Context ctx;
  Tensor* a;
  Tensor* b_storage;
  explicit Leafs(const Variant& v) {
    a = ctx.new_tensor(DType::F32, {v.ne[0], v.ne[1], v.ne[2], v.ne[3]});
    b_storage = ctx.new_tensor(DType::F32, {4096});
  }
};

std::unique_ptr<Step> build(const Variant& v, Leafs& leafs) {
  auto step = std::make_unique<Step>();
  Context& c = step->ctx;
  Tensor* b;
  if (v.transpose_b) {
    b = transpose(c, view_4d(c, leafs.b_storage, v.ne[1], v.ne[0], v.ne[2], v.ne[3], 4 * v.ne[1], 4 * v.ne[1] * v.ne[0],
                             4 * v.ne[1] * v.ne[0] * v.ne[2], 0));
  } else {
    const size_t nb1 = 4 * size_t(v.ne[0] + v.pad[0]);
    const size_t nb2 = nb1 * size_t(v.ne[1] + v.pad[1]);
    const size_t nb3 = nb2 * size_t(v.ne[2] + v.pad[2]);
    b = view_4d(c, leafs.b_storage, v.ne[0], v.ne[1], v.ne[2], v.ne[3], nb1, nb2, nb3, 0);
  }
  step->b_view = b;
  Tensor* x = v.subtract ? sub(c, leafs.a, b) : add(c, leafs.a, b);
  x = scale(c, unary(c, x, v.unary), v.s);
  if (v.extra_node) x = neg(c, x);
  if (v.flash_q > 0) {
    Tensor* q = c.new_tensor(DType::F32, {8, v.flash_q, 2});
    Tensor* kv = c.new_tensor(DType::F32, {8, 16, 2});
    x = add(c, x, sum_rows(c, reshape(c, flash_attn_ext(c, q, kv, kv, nullptr, 1.0f), {8 * 2 * v.flash_q})));
  }
  step->graph = Graph::build(x);
  return step;
}

class GraphModeTest : public ::testing::Test {
 protected:
  void run(const Variant& v) {
    steps_.push_back(build(v, leafs_));
    allocator_.allocate(steps_.back()->graph, backend_);
    backend_.compute(steps_.back()->graph);
  }
  GraphModeStats stats() const { return backend_.mode.stats(); }

  Variant base_;
  Leafs leafs_{base_};
  CountingBackend backend_;
  GraphAllocator allocator_;
  std::vector<std::unique_ptr<Step>> steps_;
};

TEST_F(GraphModeTest, CapturesOnceThenReplays) {
  run(base_);
  EXPECT_EQ(backend_.captures, 1);
  EXPECT_EQ(backend_.launches, 0);
  run(base_);
  run(base_);
  EXPECT_EQ(backend_.captures, 1);
  EXPECT_EQ(backend_.launches, 2);
  EXPECT_EQ(stats().hits, 2u);
  EXPECT_EQ(stats().misses, 1u);
  EXPECT_EQ(stats().rebinds, 0u);
  EXPECT_EQ(backend_.eager, 0);
}

// One property changed at a time must never replay the capture of another graph.
TEST_F(GraphModeTest, EachChangedPropertyIsAMiss) {
  GraphModeConfig config;
  config.max_consecutive_updates = 100;  // every step here is a miss on purpose
  backend_.mode.set_config(config);
  run(base_);
  std::vector<std::pair<std::string, Variant>> variants;
  for (int i = 0; i < 4; ++i) {
    Variant v = base_;
    v.ne[i] += 1;
    variants.emplace_back("ne" + std::to_string(i), v);
  }
  for (int i = 0; i < 3; ++i) {
    Variant v = base_;
    v.pad[i] = 1;
    variants.emplace_back("nb" + std::to_string(i + 1), v);
  }
  Variant transposed = base_;
  transposed.transpose_b = true;
  variants.emplace_back("nb0", transposed);
  Variant op = base_;
  op.subtract = true;
  variants.emplace_back("op", op);
  Variant unary_param = base_;
  unary_param.unary = UnaryOp::ABS;
  variants.emplace_back("unary op_params", unary_param);
  Variant scale_param = base_;
  scale_param.s = 3.0f;
  variants.emplace_back("scale op_params", scale_param);
  Variant more_nodes = base_;
  more_nodes.extra_node = true;
  variants.emplace_back("node count", more_nodes);

  int expected_captures = 1;
  for (const auto& [what, v] : variants) {
    Leafs leafs(v);  // a shape change needs leafs of that shape
    auto step = build(v, leafs);
    allocator_.allocate(step->graph, backend_);
    const int launches = backend_.launches;
    backend_.compute(step->graph);
    EXPECT_EQ(backend_.captures, ++expected_captures) << what;
    EXPECT_EQ(backend_.launches, launches) << what << " replayed a stale graph";
    steps_.push_back(std::move(step));
  }
}

TEST_F(GraphModeTest, MovedSourceAddressRebindsOrRecaptures) {
  run(base_);
  Tensor* old_a = leafs_.a;
  leafs_.a = leafs_.ctx.new_tensor(DType::F32, {base_.ne[0], base_.ne[1], base_.ne[2], base_.ne[3]});
  run(base_);
  EXPECT_EQ(backend_.captures, 1);
  EXPECT_EQ(backend_.rebinds, 1);
  EXPECT_EQ(stats().rebinds, 1u);
  EXPECT_EQ(backend_.launches, 1);
  run(base_);  // the capture now holds the new address: an exact match
  EXPECT_EQ(backend_.rebinds, 1);
  EXPECT_EQ(backend_.launches, 2);

  backend_.allow_rebind = false;  // a backend that cannot re-bind captures again
  leafs_.a = old_a;
  run(base_);
  EXPECT_EQ(backend_.captures, 2);
  EXPECT_EQ(backend_.launches, 2);
  EXPECT_EQ(cached_graphs(backend_), 1u) << "the stale entry must have been dropped";
}

TEST_F(GraphModeTest, ViewAddressIsExempt) {
  // A view whose base moves with it is a derived address: only its base's address is compared.
  run(base_);
  const void* before = steps_.back()->b_view->data;
  Tensor* moved_storage = leafs_.ctx.new_tensor(DType::F32, {4096});
  leafs_.b_storage = moved_storage;
  run(base_);
  EXPECT_NE(steps_.back()->b_view->data, before);
  EXPECT_EQ(backend_.rebinds, 1) << "the base (a leaf) moved, so one re-bind";
  // Same storage, same view offset: exact, although the view tensor is a new object.
  run(base_);
  EXPECT_EQ(backend_.rebinds, 1);
  EXPECT_EQ(backend_.launches, 2);
}

// Runs the base variant with a chosen ne[0] on its own leafs; equal widths reuse the same leafs,
// so a repeated width is the same graph at the same addresses.
struct WidthRunner {
  explicit WidthRunner(CountingBackend& backend) : backend(backend) {}
  void run(int64_t ne0) {
    Variant v;
    v.ne[0] = ne0;
    std::unique_ptr<Leafs>& owner = leafs[ne0];
    if (!owner) owner = std::make_unique<Leafs>(v);
    steps.push_back(build(v, *owner));
    allocator.allocate(steps.back()->graph, backend);
    backend.compute(steps.back()->graph);
  }
  CountingBackend& backend;
  GraphAllocator allocator;
  std::map<int64_t, std::unique_ptr<Leafs>> leafs;
  std::vector<std::unique_ptr<Step>> steps;
};

TEST(GraphMode, LruOrderAndEvictionAtCapacity) {
  GraphModeConfig config;
  config.capacity = 3;
  config.max_consecutive_updates = 100;
  CountingBackend backend(config);
  WidthRunner r(backend);
  r.run(1);
  r.run(2);
  r.run(3);
  EXPECT_EQ(cached_graphs(backend), 3u);
  EXPECT_EQ(backend.mode.stats().evictions, 0u);
  r.run(1);  // a hit moves 1 to the front, so 2 is now the least recently used
  EXPECT_EQ(backend.last_launched, 1);
  r.run(4);
  EXPECT_EQ(cached_graphs(backend), 3u);
  EXPECT_EQ(backend.mode.stats().evictions, 1u);
  const int captures = backend.captures;
  r.run(3);
  r.run(1);
  EXPECT_EQ(backend.captures, captures) << "1 and 3 survived";
  r.run(2);
  EXPECT_EQ(backend.captures, captures + 1) << "2 was evicted";
  // Lowering the capacity evicts from the least recently used end, and counts it.
  const uint64_t evictions = backend.mode.stats().evictions;
  config.capacity = 1;
  backend.mode.set_config(config);
  EXPECT_EQ(cached_graphs(backend), 1u);
  EXPECT_EQ(backend.mode.stats().evictions, evictions + 2);
  r.run(2);
  EXPECT_EQ(backend.captures, captures + 1) << "2, the most recent, stayed";
  EXPECT_EQ(CountingCapture::alive, 1) << "every evicted capture was released";
}

TEST(GraphMode, DestroyingTheBackendReleasesItsCaptures) {
  const int alive_before = CountingCapture::alive;
  {
    GraphModeConfig config;
    config.capacity = 4;
    CountingBackend backend(config);
    WidthRunner r(backend);
    for (int i = 1; i <= 3; ++i) r.run(i);
    EXPECT_EQ(CountingCapture::alive, alive_before + 3);
  }
  EXPECT_EQ(CountingCapture::alive, alive_before);
}

TEST(GraphMode, ConfigurationFromTheEnvironment) {
  const char* const names[] = {"TG_GRAPH_MODE",
                               "TG_PREFILL_USE_GRAPH",
                               "TG_GRAPH_CACHE_CAPACITY",
                               "TG_GRAPH_CACHE_MAX_BYTES",
                               "TG_GRAPH_MAX_CONSECUTIVE_UPDATES",
                               "TG_GRAPH_ADMIT_AFTER"};
  const auto clear = [&] {
    for (const char* name : names) unsetenv(name);
  };
  clear();
  GraphModeConfig c = GraphModeConfig::from_env();
  EXPECT_EQ(c.capacity, 12u);
  EXPECT_TRUE(c.enabled);
  EXPECT_FALSE(c.prefill_use_graph);
  EXPECT_EQ(c.max_consecutive_updates, 4);
  EXPECT_EQ(c.admit_after, 1);
  EXPECT_EQ(c.max_bytes, 0u);

  setenv("TG_GRAPH_CACHE_CAPACITY", "5", 1);
  setenv("TG_GRAPH_MODE", "off", 1);
  setenv("TG_PREFILL_USE_GRAPH", "yes", 1);
  setenv("TG_GRAPH_MAX_CONSECUTIVE_UPDATES", "7", 1);
  setenv("TG_GRAPH_ADMIT_AFTER", "3", 1);
  setenv("TG_GRAPH_CACHE_MAX_BYTES", "1048576", 1);
  c = GraphModeConfig::from_env();
  EXPECT_EQ(c.capacity, 5u);
  EXPECT_FALSE(c.enabled);
  EXPECT_TRUE(c.prefill_use_graph);
  EXPECT_EQ(c.max_consecutive_updates, 7);
  EXPECT_EQ(c.admit_after, 3);
  EXPECT_EQ(c.max_bytes, 1048576u);
  // A backend made now takes them.
  EXPECT_EQ(make_backend("cpu", {.num_threads = 1})->graph_mode()->config().capacity, 5u);
  // The byte bound's default, 0 (none), can be restored from the environment too.
  setenv("TG_GRAPH_CACHE_MAX_BYTES", "0", 1);
  EXPECT_EQ(GraphModeConfig::from_env().max_bytes, 0u);

  // Each malformed value alone is refused, naming its variable.
  const std::pair<const char*, const char*> malformed[] = {
      {"TG_GRAPH_CACHE_CAPACITY", "0"},
      {"TG_GRAPH_CACHE_CAPACITY", "twelve"},
      {"TG_GRAPH_CACHE_CAPACITY", " 3"},
      {"TG_GRAPH_CACHE_CAPACITY", "+3"},
      {"TG_GRAPH_CACHE_CAPACITY", "3 "},
      {"TG_GRAPH_MAX_CONSECUTIVE_UPDATES", "4294967297"},
      {"TG_GRAPH_MAX_CONSECUTIVE_UPDATES", "-1"},
      {"TG_GRAPH_ADMIT_AFTER", "2x"},
      {"TG_GRAPH_CACHE_MAX_BYTES", "-1"},
      {"TG_GRAPH_CACHE_MAX_BYTES", "99999999999999999999"},
      {"TG_GRAPH_MODE", "maybe"},
      {"TG_PREFILL_USE_GRAPH", "2"},
  };
  for (const auto& [name, value] : malformed) {
    clear();
    setenv(name, value, 1);
    try {
      GraphModeConfig::from_env();
      ADD_FAILURE() << name << "='" << value << "' was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  clear();
}

TEST_F(GraphModeTest, SwitchingBetweenEagerAndGraph) {
  run(base_);
  GraphModeConfig off = backend_.mode.config();
  off.enabled = false;
  backend_.mode.set_config(off);
  run(base_);
  EXPECT_EQ(backend_.eager, 1);
  EXPECT_EQ(stats().eager_by_reason[int(EagerReason::kDisabled)], 1u);
  GraphModeConfig on = off;
  on.enabled = true;
  backend_.mode.set_config(on);
  run(base_);
  EXPECT_EQ(backend_.launches, 1) << "the capture made before switching off is still valid";
}

TEST_F(GraphModeTest, PrefillRunsEagerlyUnlessEnabled) {
  Variant prefill = base_;
  prefill.flash_q = 5;
  Variant decode = base_;
  decode.flash_q = 1;
  run(prefill);
  EXPECT_EQ(backend_.eager, 1);
  EXPECT_EQ(stats().eager_by_reason[int(EagerReason::kPrefill)], 1u);
  EXPECT_TRUE(is_prefill_graph(steps_.back()->graph));
  run(decode);
  EXPECT_FALSE(is_prefill_graph(steps_.back()->graph));
  EXPECT_EQ(backend_.captures, 1);
  backend_.mode.set_phase(Phase::kDecode);  // the caller's hint wins over detection
  run(prefill);
  EXPECT_EQ(backend_.captures, 2);
  backend_.mode.set_phase(Phase::kPrefill);
  run(decode);
  EXPECT_EQ(backend_.eager, 2);
  backend_.mode.set_phase(Phase::kAuto);
  GraphModeConfig c = backend_.mode.config();
  c.prefill_use_graph = true;
  backend_.mode.set_config(c);
  run(prefill);
  EXPECT_EQ(backend_.launches, 1);
  // The entry captured under the decode hint is prefill-shaped: without the setting it runs eagerly.
  c.prefill_use_graph = false;
  backend_.mode.set_config(c);
  run(prefill);
  EXPECT_EQ(backend_.launches, 1);
  EXPECT_EQ(backend_.eager, 3);
}

TEST(GraphCache, SameStructureEntriesFindTheExactOne) {
  // Entries that differ only in addresses share one structural key; the lookup must still return
  // the exact one, and a new address set matches one of them for re-binding.
  Variant v;
  std::vector<std::unique_ptr<Leafs>> leafs;
  std::vector<std::unique_ptr<Step>> steps;
  GraphCache cache(8);
  for (int i = 0; i < 6; ++i) {
    leafs.push_back(std::make_unique<Leafs>(v));
    steps.push_back(build(v, *leafs.back()));
    GraphAllocator allocator;
    CountingBackend backend;
    allocator.allocate(steps.back()->graph, backend);
    if (i == 5) break;  // the last address set stays out of the cache
    auto entry = std::make_unique<CachedGraph>();
    entry->signature.record(steps.back()->graph);
    entry->captured = std::make_unique<CountingCapture>(i);
    cache.insert(std::move(entry));
  }
  for (int i = 0; i < 5; ++i) {
    const Graph& g = steps[size_t(i)]->graph;
    const GraphCache::Lookup found = cache.find(g, GraphSignature::key(g));
    ASSERT_NE(found.entry, nullptr);
    EXPECT_EQ(found.match, SignatureMatch::kExact);
    EXPECT_EQ(static_cast<CountingCapture&>(*found.entry->captured).id, i);
    EXPECT_EQ(cache.entries().front().get(), found.entry) << "a hit moves to the front";
  }
  const Graph& fresh = steps.back()->graph;
  const GraphCache::Lookup found = cache.find(fresh, GraphSignature::key(fresh));
  ASSERT_NE(found.entry, nullptr);
  EXPECT_EQ(found.match, SignatureMatch::kAddressesOnly);
}

TEST(GraphMode, EmptyGraphAndSoftMaxPrefillPattern) {
  CountingBackend backend;
  Graph empty;
  backend.compute(empty);
  EXPECT_EQ(backend.eager, 1);
  EXPECT_EQ(backend.captures, 0);
  EXPECT_EQ(backend.mode.stats().eager_runs, 1u);
  EXPECT_EQ(backend.mode.stats().eager_by_reason[int(EagerReason::kEmpty)], 1u);
  // A hand-made FLASH_ATTN_EXT without sources is refused later, not dereferenced here.
  Context bare_ctx({.no_alloc = true});
  Tensor* bare = bare_ctx.new_tensor(DType::F32, {8, 4});
  bare->op = Op::FLASH_ATTN_EXT;
  EXPECT_FALSE(is_prefill_graph(Graph::build(bare)));
  Context ctx({.no_alloc = true});
  Tensor* scores = ctx.new_tensor(DType::F32, {16, 3, 2});
  Tensor* mask = ctx.new_tensor(DType::F32, {16, 3});
  EXPECT_TRUE(is_prefill_graph(Graph::build(soft_max(ctx, scores, mask))));
  EXPECT_FALSE(is_prefill_graph(Graph::build(soft_max(ctx, scores))));
  EXPECT_FALSE(is_prefill_graph(Graph::build(soft_max(ctx, ctx.new_tensor(DType::F32, {16, 1, 2}), mask))));
}

TEST(GraphMode, IncompatibleGraphRunsEagerly) {
  CountingBackend backend;
  Context ctx;
  Graph g = Graph::build(argmax(ctx, ctx.new_tensor(DType::F32, {8, 2})));
  backend.compute(g);
  backend.compute(g);
  EXPECT_EQ(backend.eager, 2);
  EXPECT_EQ(backend.mode.stats().eager_by_reason[int(EagerReason::kIncompatible)], 2u);
  EXPECT_EQ(cached_graphs(backend), 0u);
}

TEST(GraphMode, FailedCaptureLeavesNothingCached) {
  CountingBackend backend;
  Context ctx;
  Graph g = Graph::build(relu(ctx, ctx.new_tensor(DType::F32, {8})));
  backend.fail_capture = true;
  backend.compute(g);
  EXPECT_EQ(backend.eager, 1) << "the result still comes from an eager run";
  EXPECT_EQ(cached_graphs(backend), 0u);
  backend.fail_eager = true;
  EXPECT_THROW(backend.compute(g), Error) << "a graph that fails eagerly too raises its error";
  EXPECT_EQ(cached_graphs(backend), 0u);
  backend.fail_capture = backend.fail_eager = false;
  backend.compute(g);
  EXPECT_EQ(backend.captures, 1);
}

TEST(GraphMode, AnErrorWhileCapturingExecutesNothingTwice) {
  // A capture that fails while executing may already have updated state in place (a KV cache
  // row, a copy into an input): the error is the step's, and the step is not run again.
  CountingBackend backend;
  Context ctx;
  Graph g = Graph::build(relu(ctx, ctx.new_tensor(DType::F32, {8})));
  backend.fail_while_executing = true;
  EXPECT_THROW(backend.compute(g), Error);
  EXPECT_EQ(backend.executed_in_capture, 1);
  EXPECT_EQ(backend.eager, 0);
  EXPECT_EQ(cached_graphs(backend), 0u);
  EXPECT_EQ(backend.mode.stats().eager_by_reason[int(EagerReason::kCaptureFailed)], 0u);
}

TEST(GraphMode, TooManyConsecutiveUpdatesSwitchOffThenBackOn) {
  GraphModeConfig config;  // max_consecutive_updates = 4
  config.capacity = 2;
  CountingBackend backend(config);
  WidthRunner r(backend);
  r.run(1);  // filling free slots is warm-up, not churn
  r.run(2);
  r.run(1);
  r.run(2);
  EXPECT_EQ(backend.launches, 2) << "a workload cycling through graphs the cache holds replays";
  for (int i = 3; i <= 5; ++i) r.run(i);  // three captures that each evict a graph
  EXPECT_FALSE(backend.mode.suspended());
  r.run(6);  // the fourth in a row
  EXPECT_EQ(backend.captures, 6);
  EXPECT_TRUE(backend.mode.suspended());
  EXPECT_EQ(backend.mode.stats().disables, 1u);
  for (int i = 7; i <= 10; ++i) r.run(i);  // still changing: eager, no capture
  EXPECT_EQ(backend.captures, 6);
  EXPECT_EQ(backend.mode.stats().eager_by_reason[int(EagerReason::kTooManyUpdates)], 4u);
  r.run(11);  // stable from here on: seen once, then repeated
  r.run(11);
  r.run(11);
  r.run(11);
  EXPECT_TRUE(backend.mode.suspended());
  r.run(11);  // the fourth repeat in a row re-enables and captures
  EXPECT_FALSE(backend.mode.suspended());
  EXPECT_EQ(backend.mode.stats().reenables, 1u);
  EXPECT_NE(format_stats(backend.mode.stats()).find("switched off 1, back on 1"), std::string::npos)
      << format_stats(backend.mode.stats());
  EXPECT_EQ(backend.captures, 7);
  r.run(11);
  EXPECT_EQ(backend.launches, 3);
}

// A cache of 3 whose guard switches capturing off after 2 evicting captures, brought there by
// graphs 1..5 (4 and 5 each evict): it holds 3, 4 and 5.
struct SuspendedGuard : ::testing::Test {
  static GraphModeConfig config() {
    GraphModeConfig c;
    c.capacity = 3;
    c.max_consecutive_updates = 2;
    return c;
  }
  void SetUp() override {
    for (int i = 1; i <= 5; ++i) r.run(i);
    ASSERT_TRUE(backend.mode.suspended());
  }
  CountingBackend backend{config()};
  WidthRunner r{backend};
};

// The guard stops captures, not replays: graphs the cache holds keep replaying while it is off,
// and a workload cycling through as many graphs as the cache holds turns capturing back on.
TEST_F(SuspendedGuard, ReplaysHitsAndComesBackForACycle) {
  const int launches = backend.launches;
  r.run(5);  // cached: replays although capturing is off
  EXPECT_EQ(backend.launches, launches + 1);
  EXPECT_EQ(backend.captures, 5);
  for (int i = 6; i <= 8; ++i) r.run(i);  // misses: eager, nothing captured
  EXPECT_EQ(backend.captures, 5);
  EXPECT_TRUE(backend.mode.suspended());
  // A cycle of 3 (the capacity) graphs not in the cache: the first round misses, the second
  // repeats them, and after max_consecutive_updates repeats capturing comes back.
  for (int round = 0; round < 2; ++round) {
    for (int i = 10; i <= 12 && backend.mode.suspended(); ++i) r.run(i);
  }
  EXPECT_FALSE(backend.mode.suspended());
  EXPECT_EQ(backend.mode.stats().reenables, 1u);
  EXPECT_EQ(backend.captures, 6) << "the step that re-enabled is captured";
}

// A cycle of more graphs than the cache holds would only churn it if captured: it keeps capturing
// off, whether or not some of its graphs are cached (those replay).
TEST_F(SuspendedGuard, ACycleLongerThanTheCapacityStaysSuspended) {
  const int launches = backend.launches;
  for (int round = 0; round < 20; ++round) {
    for (int i = 2; i <= 5; ++i) r.run(i);
  }
  EXPECT_EQ(backend.launches, launches + 60) << "3 of every 4 steps replay";
  for (int round = 0; round < 20; ++round) {
    for (int i = 10; i <= 13; ++i) r.run(i);
  }
  EXPECT_TRUE(backend.mode.suspended());
  EXPECT_EQ(backend.mode.stats().reenables, 0u);
  EXPECT_EQ(backend.captures, 5);
}

TEST(GraphMode, HitsResetTheUpdateCount) {
  GraphModeConfig config;
  config.capacity = 1;
  config.max_consecutive_updates = 2;
  CountingBackend backend(config);
  WidthRunner r(backend);
  r.run(1);
  r.run(2);  // evicts 1: one update
  r.run(2);  // a hit: the count starts over
  r.run(3);  // evicts 2: one update
  EXPECT_FALSE(backend.mode.suspended());
  r.run(4);  // evicts 3: two in a row
  EXPECT_TRUE(backend.mode.suspended());
}

TEST(GraphMode, WarmupAdmitsOnTheNthSighting) {
  GraphModeConfig config;
  config.admit_after = 3;
  CountingBackend backend(config);
  Context ctx;
  Graph g = Graph::build(relu(ctx, ctx.new_tensor(DType::F32, {8})));
  backend.compute(g);
  backend.compute(g);
  EXPECT_EQ(backend.captures, 0);
  EXPECT_EQ(backend.mode.stats().eager_by_reason[int(EagerReason::kWarmup)], 2u);
  backend.compute(g);
  EXPECT_EQ(backend.captures, 1);
  backend.compute(g);
  EXPECT_EQ(backend.launches, 1);
}

TEST(GraphMode, ByteBoundEvictsOldest) {
  GraphModeConfig config;
  config.max_consecutive_updates = 100;
  CountingBackend backend(config);
  Context ctx;
  std::vector<Graph> graphs;
  for (int i = 1; i <= 4; ++i) graphs.push_back(Graph::build(relu(ctx, ctx.new_tensor(DType::F32, {i}))));
  for (const Graph& g : graphs) backend.compute(g);
  const size_t per_entry = cached_bytes(backend) / 4;
  config.max_bytes = per_entry * 2 + per_entry / 2;
  backend.mode.set_config(config);
  EXPECT_EQ(cached_graphs(backend), 2u);
  EXPECT_LE(cached_bytes(backend), config.max_bytes);
}

TEST(GraphMode, TenThousandNodeGraph) {
  CountingBackend backend;
  Context ctx;
  Tensor* t = ctx.new_tensor(DType::F32, {4});
  for (int i = 0; i < 10000; ++i) t = scale(ctx, t, 1.0f + float(i % 7));
  Graph g = Graph::build(t);
  backend.compute(g);
  backend.compute(g);
  EXPECT_EQ(backend.captures, 1);
  EXPECT_EQ(backend.launches, 1);
}

// A server reads the statistics while another thread decodes: stats() must not wait for the
// step in progress, and what changes the mode (set_config) must wait for it to end.
TEST(GraphModeThreads, StatisticsDoNotWaitForAStepInProgress) {
  CountingBackend backend;
  Context ctx;
  const Graph g = Graph::build(relu(ctx, ctx.new_tensor(DType::F32, {4})));
  backend.compute(g);  // capture
  std::promise<void> launched, release;
  std::shared_future<void> released = release.get_future().share();
  backend.during_launch = [&] {
    launched.set_value();
    released.wait();
  };
  std::thread decoder([&] { backend.compute(g); });  // a replay, held in launch
  launched.get_future().wait();

  auto reading = std::async(std::launch::async, [&] { return backend.mode.stats(); });
  const bool read_during_step = reading.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(read_during_step) << "stats() waited for the step";
  if (read_during_step) {
    const GraphModeStats during = reading.get();
    EXPECT_EQ(during.computes, 2u);
    EXPECT_EQ(during.replays, 0u) << "the replay in progress is not finished";
  }

  GraphModeConfig smaller;
  smaller.capacity = 1;
  auto configured = std::async(std::launch::async, [&] { backend.mode.set_config(smaller); });
  EXPECT_EQ(configured.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout)
      << "set_config changed the mode during a step";
  release.set_value();
  decoder.join();
  configured.get();
  EXPECT_EQ(backend.mode.config().capacity, 1u);
  EXPECT_EQ(backend.mode.stats().replays, 1u);
}

// Everything a monitoring thread may call, against a thread that computes changing graphs; run
// under ThreadSanitizer (make test SANITIZE=1 is ASan; see docs/runtime.md "Threads") this
// finds any access outside the locks. The counters must stay consistent in every snapshot.
TEST(GraphModeThreads, AccessorsRaceWithComputeSafely) {
  GraphModeConfig config;
  config.capacity = 4;
  CountingBackend backend(config);
  Context ctx;
  std::vector<Graph> graphs;
  for (int i = 1; i <= 6; ++i) graphs.push_back(Graph::build(relu(ctx, ctx.new_tensor(DType::F32, {i}))));
  std::atomic<bool> done{false};
  std::atomic<int> rounds{0};
  // The decoder keeps computing until the monitor below has overlapped it for 200 rounds.
  std::thread decoder([&] {
    for (int step = 0; step < 3000 || rounds < 200; ++step) backend.compute(graphs[size_t(step * 7 % 11 % 6)]);
    done = true;
  });
  uint64_t last_computes = 0;
  int round = 0;
  uint64_t straddle = 0;  // after a reset_stats, the step it fell into counts only its second half
  while (!done) {
    const GraphModeStats s = backend.mode.stats();
    EXPECT_LE(s.hits + s.misses, s.computes + straddle);
    EXPECT_LE(s.replays, s.hits + straddle);
    EXPECT_LE(s.captures, s.misses + straddle);
    EXPECT_GE(s.computes, last_computes);
    last_computes = s.computes;
    GraphModeConfig c = backend.mode.config();
    c.capacity = size_t(1 + round % 4);
    backend.mode.set_config(c);
    EXPECT_LE(cached_graphs(backend), 4u);
    (void)backend.mode.suspended();
    if (round % 16 == 15) backend.mode.clear();
    if (round % 64 == 63) {
      backend.mode.reset_stats();
      last_computes = 0;
      straddle = 1;
    }
    backend.mode.set_phase(round % 2 ? Phase::kDecode : Phase::kAuto);
    rounds = ++round;
  }
  decoder.join();
  EXPECT_GE(round, 200);
}

}  // namespace
}  // namespace tg
