#include "thread_pool.h"

#include <algorithm>
#include <system_error>

#include "tilegraph/core/error.h"
#include "tilegraph/runtime/backend.h"

namespace tg::cpu {

namespace {

// About 50-200 microseconds of polling (a pause is 10-140 cycles depending on the core): long
// enough to cover the gap between two nodes and between the tokens of a decode loop, short
// enough not to hold a core that other processes need once the work has stopped.
constexpr int kSpinIterations = 1 << 12;

inline void cpu_relax() { __builtin_ia32_pause(); }

// Waits until `value` differs from `old` (spinning first, then sleeping on the atomic);
// `sleepers` is raised while asleep so that the notifier can skip the wake-up syscall when
// nobody sleeps. Returns the new value.
template <class T, class Counter>
T wait_for_change(const std::atomic<T>& value, T old, Counter& sleepers) {
  for (int i = 0; i < kSpinIterations; ++i) {
    const T now = value.load(std::memory_order_acquire);
    if (now != old) return now;
    cpu_relax();
  }
  T now;
  while ((now = value.load(std::memory_order_acquire)) == old) {
    // seq_cst pairs with the notifier's seq_cst store-then-load of `sleepers`: either it sees us
    // asleep and notifies, or we see its new value in wait()'s check.
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    value.wait(old, std::memory_order_seq_cst);
    sleepers.fetch_sub(1, std::memory_order_relaxed);
  }
  return now;
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads) {
  static_assert(kMaxThreads < (1 << kCountBits), "task counts fit their bits");
  if (n_threads < 1 || n_threads > kMaxThreads) {
    throw Error("cpu: thread count must be in [1, " + std::to_string(kMaxThreads) + "], got " +
                std::to_string(n_threads));
  }
  workers_.reserve(size_t(n_threads - 1));
  try {
    for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker_main(i); });
  } catch (const std::system_error& e) {
    // The destructor does not run for a constructor that throws: the workers that did start
    // must be stopped here, or their std::thread objects would terminate the program.
    stop_workers();
    throw Error("cpu: cannot start " + std::to_string(n_threads - 1) + " worker threads (started " +
                std::to_string(workers_.size()) + "): " + e.what());
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  publish(0);
  region_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::publish(int n_tasks) { region_.store(make_region(++generation_, n_tasks), std::memory_order_seq_cst); }

void ThreadPool::run_task(int ith, int nth) {
  try {
    task_fn_(task_ctx_, ith, nth);
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!first_error_) first_error_ = std::current_exception();
  }
}

int ThreadPool::claim(uint64_t generation, int nth) {
  uint64_t word = next_task_.load(std::memory_order_acquire);
  for (;;) {
    if (word >> kCountBits != generation) return -1;  // a later region: nothing of ours is left
    const int task = region_tasks(word);
    if (task >= nth) return -1;
    if (next_task_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel)) return task;
  }
}

void ThreadPool::run_claimed_tasks(uint64_t generation, int nth) {
  for (int task; (task = claim(generation, nth)) >= 0;) {
    run_task(task, nth);
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 && caller_sleeping_.load(std::memory_order_seq_cst)) {
      pending_.notify_one();
    }
  }
}

void ThreadPool::run(int n_tasks, TaskFn fn, void* ctx) {
  const int nth = std::clamp(n_tasks, 1, n_threads_);
  first_error_ = nullptr;
  task_fn_ = fn;
  task_ctx_ = ctx;
  if (nth == 1) {
    run_task(0, 1);
  } else {
    // Task 0 is the caller's; the others go to whoever claims them first, the caller included
    // once it is done, so a worker the OS has not scheduled yet delays nothing.
    const uint64_t generation = generation_ + 1;
    pending_.store(nth - 1, std::memory_order_relaxed);
    next_task_.store(make_region(generation, 1), std::memory_order_seq_cst);
    publish(nth);
    if (sleeping_workers_.load(std::memory_order_seq_cst) > 0) region_.notify_all();
    run_task(0, nth);
    run_claimed_tasks(generation, nth);
    int left = pending_.load(std::memory_order_acquire);
    for (int i = 0; left != 0 && i < kSpinIterations; ++i) {
      cpu_relax();
      left = pending_.load(std::memory_order_acquire);
    }
    if (left != 0) {
      caller_sleeping_.store(true, std::memory_order_seq_cst);
      while ((left = pending_.load(std::memory_order_seq_cst)) != 0) pending_.wait(left);
      caller_sleeping_.store(false, std::memory_order_relaxed);
    }
  }
  if (first_error_) std::rethrow_exception(first_error_);
}

void ThreadPool::worker_main(int ith) {
  uint64_t seen = 0;
  for (;;) {
    seen = wait_for_change(region_, seen, sleeping_workers_);
    const int nth = region_tasks(seen);
    if (nth == 0) return;
    if (ith >= nth) continue;  // this region needs fewer threads
    run_claimed_tasks(seen >> kCountBits, nth);
  }
}

}  // namespace tg::cpu
