#include "launcher.h"

#include <algorithm>
#include <atomic>

namespace tg::cpu {

namespace {

void pool_parallel_for(void* pool, int64_t n_items, void (*fn)(void* arg, int64_t item, int thread), void* arg) {
  if (n_items <= 0) return;
  ThreadPool& threads = *static_cast<ThreadPool*>(pool);
  const int tasks = int(std::min<int64_t>(n_items, threads.size()));
  if (tasks == 1) {  // a decode-sized GEMM is often one block: no region, no shared counter
    for (int64_t item = 0; item < n_items; ++item) fn(arg, item, 0);
    return;
  }
  std::atomic<int64_t> next{0};
  threads.parallel_for(tasks, [&](int ith, int) {
    for (int64_t item; (item = next.fetch_add(1, std::memory_order_relaxed)) < n_items;) fn(arg, item, ith);
  });
}

}  // namespace

evg::Launcher make_launcher(ThreadPool& pool) {
  evg::Launcher launcher;
  launcher.pool = &pool;
  launcher.num_threads = pool.size();
  launcher.parallel_for = pool_parallel_for;
  return launcher;
}

}  // namespace tg::cpu
