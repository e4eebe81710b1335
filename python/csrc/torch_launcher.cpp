#include "torch_launcher.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>

// ATen's OpenMP backend lives in its headers: without -fopenmp, at::parallel_for is a plain loop.
#if AT_PARALLEL_OPENMP && !defined(_OPENMP)
#error "the torch extension must be compiled with OpenMP, as ATen is"
#endif

namespace tg::python {

namespace {

// at::parallel_for numbers its threads from 0 below at::get_num_threads(), read on the calling
// thread as torch_launcher() read it; nested in another region it runs everything as thread 0.
void parallel_for(void*, int64_t n_items, void (*fn)(void* arg, int64_t item, int thread), void* arg) {
  if (n_items <= 0) return;
  // One task per thread, each taking the next item as it finishes one: blocks differ in cost
  // (partial blocks, the streaming path), so a static split would leave threads idle.
  std::atomic<int64_t> next{0};
  const int64_t tasks = std::min<int64_t>(n_items, at::get_num_threads());
  at::parallel_for(0, tasks, 1, [&](int64_t, int64_t) {
    const int thread = at::get_thread_num();
    for (int64_t item; (item = next.fetch_add(1, std::memory_order_relaxed)) < n_items;) fn(arg, item, thread);
  });
}

}  // namespace

evg::Launcher torch_launcher() {
  evg::Launcher launcher;
  launcher.num_threads = at::in_parallel_region() ? 1 : std::max(1, at::get_num_threads());
  launcher.parallel_for = parallel_for;
  return launcher;
}

}  // namespace tg::python
