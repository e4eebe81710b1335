#pragma once
// The CPU backend's kernel interface. A kernel runs one node: it reads the node's parameters and
// sources, splits the work over the backend's threads with ExecContext::parallel*, and uses the
// ISA-selected row primitives (vec.h) for its inner loops. Kernels index every tensor through
// its nb strides, so views (padded, permuted, transposed) need no copies first.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "launcher.h"
#include "rope_cache.h"
#include "thread_pool.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/tensor.h"
#include "vec.h"

namespace tg::cpu {

// Growable, 64-byte aligned memory owned by one thread (or by the caller between regions). It
// keeps its largest size, so steady-state execution allocates nothing.
class Scratch {
 public:
  // At least `count` floats; invalidates what an earlier call returned.
  float* floats(size_t count) { return static_cast<float*>(bytes(count * sizeof(float))); }
  void* bytes(size_t size);

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
  size_t capacity_ = 0;
};

// What one task of a parallel region gets: its index, the task count and its thread's scratch.
struct ThreadContext {
  int ith;
  int nth;
  Scratch& scratch;
};

// The task count worth using for n items of `cost` elements each on `max_threads` threads:
// regions too small to be worth waking workers for run on fewer threads.
int task_count(int64_t n, int64_t cost, int max_threads);

// The items of the next chunk that `tasks` tasks claim when `left` (> 0) items of `cost` elements
// each are left: a share of what is left (guided self-scheduling), so that the first chunks are
// long and the last short, never less than a task's minimum work, at most `left`.
int64_t chunk_items(int64_t left, int64_t cost, int tasks);

class ExecContext {
 public:
  ExecContext(ThreadPool& pool, const VecKernels& vec);

  const VecKernels& vec() const { return vec_; }
  int max_threads() const { return pool_.size(); }
  // The pool as the GEMM kernel layer takes it (one region at a time, like parallel()).
  evg::Launcher launcher() { return make_launcher(pool_); }
  // Memory the kernel shares with all its tasks (e.g. a converted operand), set up by the
  // calling thread before a region; invalidates what an earlier call returned.
  void* shared_scratch(size_t size) { return shared_.bytes(size); }
  // ROPE's frequencies and tables, kept from one ROPE node to the next (rope_cache.h).
  RopeCache& rope_cache() { return rope_cache_; }

  // Runs fn(const ThreadContext&) as min(n_tasks, max_threads()) parallel tasks.
  template <class Fn>
  void parallel(int n_tasks, Fn&& fn) {
    // Most decode-sized nodes are one task: run it here, without the pool's type-erased call,
    // error bookkeeping and region publication (~40 ns of a ~100 ns node).
    if (n_tasks <= 1 || pool_.size() == 1) {
      fn(ThreadContext{0, 1, scratch_[0]});
      return;
    }
    pool_.parallel_for(n_tasks, [&](int ith, int nth) { fn(ThreadContext{ith, nth, scratch_[size_t(ith)]}); });
  }

  // Calls fn(tc, begin, end) over contiguous ranges that together cover [0, n) once. `cost` is
  // the work of one item in elements touched: regions too small to be worth waking workers for
  // run on fewer threads (one, for most decode-sized nodes). With several tasks the tasks claim
  // chunks in turn, long ones first and ever shorter ones (chunk_items), so that a thread slowed
  // by other work (a shared machine, a slower core) takes fewer of them and the last one to finish
  // keeps the others waiting for little. A chunk's bounds depend only on where it starts, not on
  // the timing: fn must treat each range on its own, and results then do not depend on which
  // thread ran which chunk.
  template <class Fn>
  void parallel_range(int64_t n, int64_t cost, Fn&& fn) {
    const int tasks = tasks_for(n, cost);
    if (tasks <= 1) {
      if (n > 0) fn(ThreadContext{0, 1, scratch_[0]}, int64_t(0), n);
      return;
    }
    std::atomic<int64_t> next{0};
    parallel(tasks, [&](const ThreadContext& tc) {
      int64_t begin = next.load(std::memory_order_relaxed);
      while (begin < n) {
        const int64_t end = begin + chunk_items(n - begin, cost, tasks);
        if (next.compare_exchange_weak(begin, end, std::memory_order_relaxed)) {
          fn(tc, begin, end);
          begin = end;  // a stale guess: the exchange corrects it
        }
      }
    });
  }

  // The task count worth using for n items of `cost` elements each.
  int tasks_for(int64_t n, int64_t cost) const { return task_count(n, cost, pool_.size()); }

 private:
  ThreadPool& pool_;
  const VecKernels& vec_;
  std::vector<Scratch> scratch_;  // one per thread
  Scratch shared_;
  RopeCache rope_cache_;
};

using Kernel = void (*)(const Tensor& node, ExecContext& exec);

// "cpu: <op> <name>: <what went wrong>": the error of a node whose kernel (or fused chain,
// named by its first node) failed, worded the same in eager execution and in replay.
Error node_error(const Tensor& node, const std::exception& cause);

// One entry point per op family; the backend maps ops to them (cpu_backend.cpp). The row ops
// (elementwise and norms) are in row_ops.h.
void run_mul_mat(const Tensor& node, ExecContext& exec);
// The blocked kernel for what the GEMM does not take (quantized weights, views with no unit
// stride).
void run_mul_mat_fallback(const Tensor& node, ExecContext& exec);
// Whether run_mul_mat takes the GEMM for `node` (and so whether it can fuse an epilogue).
bool mul_mat_uses_gemm(const Tensor& node);
// Whether run_mul_mat_fallback takes the integer GEMM for `node` (quantized weights against more
// tokens than the matrix-vector path takes), which can fuse an epilogue too: run_quant_matmul.
bool mul_mat_uses_quant_gemm(const Tensor& node);
// The integer GEMM of `node` with `epilogue_ops` applied to each finished tile, as run_matmul
// (matmul_call.h) does for the float GEMM, with the same guarantees from the caller.
void run_quant_matmul(const Tensor& node, std::span<const Tensor* const> epilogue_ops, ExecContext& exec);
void run_soft_max(const Tensor& node, ExecContext& exec);
void run_rope(const Tensor& node, ExecContext& exec);
void run_get_rows(const Tensor& node, ExecContext& exec);
void run_set_rows(const Tensor& node, ExecContext& exec);
void run_copy(const Tensor& node, ExecContext& exec);  // CPY, CONT
void run_concat(const Tensor& node, ExecContext& exec);
void run_flash_attn_ext(const Tensor& node, ExecContext& exec);
void run_sum_rows(const Tensor& node, ExecContext& exec);
void run_argmax(const Tensor& node, ExecContext& exec);
void run_batch_norm(const Tensor& node, ExecContext& exec);
void run_conv_2d(const Tensor& node, ExecContext& exec);
void run_pool_2d(const Tensor& node, ExecContext& exec);

}  // namespace tg::cpu
