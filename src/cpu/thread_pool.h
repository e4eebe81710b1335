#pragma once
// A fixed set of persistent worker threads that run one parallel region at a time, the calling
// thread taking part. Decode graphs have hundreds of nodes of a few microseconds each, so idle
// workers spin briefly before sleeping (a futex round trip per node would cost more than many
// of the nodes), and regions too small to share run on the caller alone.
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tg::cpu {

class ThreadPool {
 public:
  // n_threads counts the calling thread: n_threads - 1 workers are started. At most kMaxThreads;
  // tg::Error if the system cannot start that many threads.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(ith, nth) for every ith in [0, nth), nth = min(n_tasks, size()), each task exactly
  // once (the caller runs ith 0; the others run on whichever thread claims them first, so a
  // worker that the OS has descheduled does not hold the region up), and returns when all have
  // finished. If tasks throw, the
  // others still run to completion and the first exception is rethrown here. Not reentrant: one
  // region at a time, from one thread at a time.
  template <class Fn>
  void parallel_for(int n_tasks, Fn&& fn) {
    auto call = [](void* ctx, int ith, int nth) { (*static_cast<Fn*>(ctx))(ith, nth); };
    run(n_tasks, call, &fn);
  }

 private:
  using TaskFn = void (*)(void* ctx, int ith, int nth);

  void run(int n_tasks, TaskFn fn, void* ctx);
  void worker_main(int ith);
  void run_task(int ith, int nth);
  // The next unclaimed task of region `generation`, or -1 when none is left.
  int claim(uint64_t generation, int nth);
  // Claims and runs tasks of region `generation` until none is left.
  void run_claimed_tasks(uint64_t generation, int nth);
  void publish(int n_tasks);
  void stop_workers();

  const int n_threads_;
  std::vector<std::thread> workers_;

  // The current region: a generation number and its task count in one word, so that a worker
  // that wakes late never pairs one region's number with another's count. The function and
  // context are published by the same store (release); only participating workers read them,
  // and the caller does not replace them before those have finished. A task count of 0 tells the
  // workers to exit.
  static constexpr int kCountBits = 16;
  static uint64_t make_region(uint64_t generation, int n_tasks) {
    return (generation << kCountBits) | uint64_t(n_tasks);
  }
  static int region_tasks(uint64_t region) { return int(region & ((1u << kCountBits) - 1)); }

  TaskFn task_fn_ = nullptr;
  void* task_ctx_ = nullptr;
  uint64_t generation_ = 0;  // only the caller touches it
  std::atomic<uint64_t> region_{0};
  std::atomic<int> sleeping_workers_{0};

  // The current region's generation and next unclaimed task, in make_region's layout.
  std::atomic<uint64_t> next_task_{0};

  // Tasks other than 0 of the current region not finished yet; the caller waits for 0.
  std::atomic<int> pending_{0};
  std::atomic<bool> caller_sleeping_{false};

  std::mutex error_mutex_;
  std::exception_ptr first_error_;
};

}  // namespace tg::cpu
