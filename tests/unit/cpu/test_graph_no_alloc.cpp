// A graph-mode hit on the CPU backend — key, cache lookup and verification, re-binding a capture
// whose addresses moved, replay of the captured plan, all through Backend::compute — allocates no
// heap memory.
//
// The counter replaces the global operator new/delete of the whole test_cpu program. It forwards
// to malloc/free (posix_memalign for the aligned forms) and counts only on a thread that has
// switched counting on, so every other test is unaffected. With one backend thread every kernel
// runs on the calling thread, so its allocations are all seen; with two, the worker's share of a
// parallel region is not counted (the code it runs is the same).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "tilegraph/backends.h"
#include "tilegraph/core/context.h"
#include "tilegraph/model/random_weights.h"
#include "tilegraph/model/transformer_block.h"
#include "tilegraph/runtime/graph_allocator.h"
#include "tilegraph/runtime/graph_mode.h"

// The replacement operators below are implemented with malloc/free on purpose; once inlined, GCC
// sees free() of a pointer from operator new and flags a mismatch that is not one.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {

thread_local bool t_counting = false;
thread_local size_t t_allocations = 0;
thread_local size_t t_deallocations = 0;

void* counted_malloc(std::size_t size) noexcept {
  if (t_counting) ++t_allocations;
  return std::malloc(size ? size : 1);
}

void* counted_aligned(std::size_t size, std::align_val_t alignment) noexcept {
  if (t_counting) ++t_allocations;
  std::size_t align = static_cast<std::size_t>(alignment);
  if (align < sizeof(void*)) align = sizeof(void*);
  void* p = nullptr;
  return posix_memalign(&p, align, size ? size : 1) == 0 ? p : nullptr;
}

void counted_free(void* p) noexcept {
  if (!p) return;
  if (t_counting) ++t_deallocations;
  std::free(p);
}

void* or_throw(void* p) {
  if (!p) throw std::bad_alloc();
  return p;
}

// Counts the allocations and deallocations of this thread while alive.
class CountAllocations {
 public:
  CountAllocations() {
    t_allocations = t_deallocations = 0;
    t_counting = true;
  }
  ~CountAllocations() { t_counting = false; }
  size_t allocations() const { return t_allocations; }
  size_t deallocations() const { return t_deallocations; }
  void stop() { t_counting = false; }
};

}  // namespace

void* operator new(std::size_t size) { return or_throw(counted_malloc(size)); }
void* operator new[](std::size_t size) { return or_throw(counted_malloc(size)); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void* operator new(std::size_t size, std::align_val_t a) { return or_throw(counted_aligned(size, a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return or_throw(counted_aligned(size, a)); }
void* operator new(std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_aligned(size, a);
}
void* operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_aligned(size, a);
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }

namespace tg {
namespace {

// Keeps the compiler from eliding the allocations of the counter's self-test.
template <class T>
T* escape(T* p) {
  asm volatile("" : : "g"(p) : "memory");
  return p;
}

TEST(GraphNoAlloc, CounterSeesEveryFormOfNewAndDelete) {
  struct alignas(128) Wide {
    char bytes[256];
  };
  size_t allocations, deallocations;
  {
    CountAllocations count;
    delete escape(new int(1));
    delete[] escape(new char[40]);
    delete escape(new Wide);  // aligned new, sized aligned delete
    delete[] escape(new Wide[2]);
    ::operator delete(escape(::operator new(24, std::nothrow)), std::nothrow);
    std::vector<double> v(100);
    escape(v.data());
    count.stop();
    allocations = count.allocations();
    deallocations = count.deallocations();
  }
  EXPECT_EQ(allocations, 5u + 1u);
  EXPECT_EQ(deallocations, 5u);  // the vector is freed after counting stopped
  {
    CountAllocations count;
    count.stop();
    delete escape(new int(2));
    EXPECT_EQ(count.allocations(), 0u);
  }
}

// A decode step of one llama-style block, the way a decode loop builds it.
struct Step {
  Context ctx{{.no_alloc = true}};
  model::StepInputs inputs;
  Graph graph;
};

class GraphNoAllocOnHit : public ::testing::TestWithParam<int> {};

TEST_P(GraphNoAllocOnHit, TransformerBlockHitAllocatesNothing) {
  model::BlockConfig config;
  config.n_embd = 64;
  config.n_head = 4;
  config.n_head_kv = 2;
  config.n_ff = 192;
  config.n_ctx = 64;
  constexpr int64_t kKv = 32;  // padded: the mask hides the rows past n_past
  Context weights_ctx;
  const model::BlockWeights weights = model::make_block_weights(weights_ctx, config, 7);
  const model::KvCache cache = model::make_kv_cache(weights_ctx, config);
  auto backend = make_backend("cpu", {.num_threads = GetParam()});
  GraphModeConfig mode;  // defaults: enabled, capacity 12
  mode.enabled = true;
  backend->graph_mode()->set_config(mode);
  GraphAllocator allocator;

  auto build = [&](int64_t n_past, GraphAllocator* placed_by = nullptr) {
    auto s = std::make_unique<Step>();
    s->inputs = model::make_step_inputs(s->ctx, config, 1, kKv);
    s->graph = Graph::build(model::build_block(s->ctx, config, weights, cache, s->inputs, kKv));
    (placed_by ? *placed_by : allocator).allocate(s->graph, *backend);
    model::fill_uniform(*s->inputs.x, 100 + uint64_t(n_past), 1.0f);
    model::fill_step_inputs(s->inputs, n_past);
    return s;
  };

  // Step 0 captures (and must be seen allocating: the counter is wired into compute's path);
  // step 1 is the first replay, which may still grow per-thread scratch to its size.
  {
    auto s = build(0);
    CountAllocations count;
    backend->compute(s->graph);
    count.stop();
    EXPECT_GT(count.allocations(), 0u) << "the capture should allocate its plan";
  }
  backend->compute(build(1)->graph);
  ASSERT_EQ(backend->graph_mode()->stats().captures, 1u);
  ASSERT_EQ(backend->graph_mode()->stats().hits, 1u);

  // The same graph object computed again, and graphs rebuilt every step (new Tensor objects at
  // the same addresses): exact hits, no allocation or deallocation.
  auto same = build(2);
  for (int64_t n_past = 2; n_past < 8; ++n_past) {
    auto fresh = build(n_past);
    const Graph& graph = n_past % 2 ? same->graph : fresh->graph;
    if (n_past % 2) {
      allocator.allocate(same->graph, *backend);
      model::fill_step_inputs(same->inputs, n_past);
    }
    CountAllocations count;
    backend->compute(graph);
    count.stop();
    EXPECT_EQ(count.allocations(), 0u) << "step " << n_past;
    EXPECT_EQ(count.deallocations(), 0u) << "step " << n_past;
  }
  GraphModeStats stats = backend->graph_mode()->stats();
  EXPECT_EQ(stats.captures, 1u);
  EXPECT_EQ(stats.rebinds, 0u);
  EXPECT_EQ(stats.hits, 7u);

  // Steps placed alternately in another allocator's buffer and back: the same graph with other
  // addresses, so every one re-binds the capture — without allocating either.
  GraphAllocator elsewhere;
  for (int64_t n_past = 8; n_past < 14; ++n_past) {
    auto moved = build(n_past, n_past % 2 ? &allocator : &elsewhere);
    CountAllocations count;
    backend->compute(moved->graph);
    count.stop();
    EXPECT_EQ(count.allocations(), 0u) << "step " << n_past;
    EXPECT_EQ(count.deallocations(), 0u) << "step " << n_past;
  }
  stats = backend->graph_mode()->stats();
  EXPECT_EQ(stats.captures, 1u);
  EXPECT_EQ(stats.rebinds, 6u);
}

INSTANTIATE_TEST_SUITE_P(Threads, GraphNoAllocOnHit, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& info) { return std::to_string(info.param) + "t"; });

}  // namespace
}  // namespace tg
