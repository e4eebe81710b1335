// ExecContext::parallel_range: every item exactly once, in contiguous chunks a few per task, on
// one thread when the work is too small to share.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "kernels.h"
#include "thread_pool.h"
#include "vec.h"

namespace tg::cpu {
namespace {

struct Ranges {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::set<int> tasks;
};

Ranges run_ranges(ExecContext& exec, int64_t n, int64_t cost) {
  Ranges out;
  std::mutex mutex;
  exec.parallel_range(n, cost, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    const std::lock_guard<std::mutex> lock(mutex);
    out.ranges.emplace_back(begin, end);
    out.tasks.insert(tc.ith);
  });
  std::sort(out.ranges.begin(), out.ranges.end());
  return out;
}

TEST(ParallelRange, CoversEveryItemOnceInContiguousChunks) {
  for (const int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    ExecContext exec(pool, scalar_vec_kernels());
    for (const int64_t n :
         {int64_t(0), int64_t(1), int64_t(2), int64_t(7), int64_t(31), int64_t(997), int64_t(65537)}) {
      for (const int64_t cost : {int64_t(1), int64_t(64), int64_t(4096), int64_t(1) << 20}) {
        const Ranges got = run_ranges(exec, n, cost);
        int64_t next = 0;
        for (const auto& [begin, end] : got.ranges) {
          ASSERT_EQ(begin, next) << "a gap or an overlap at n " << n << " cost " << cost << " threads " << threads;
          ASSERT_LT(begin, end) << "an empty range";
          next = end;
        }
        EXPECT_EQ(next, n) << "cost " << cost << " threads " << threads;
        const int tasks = exec.tasks_for(n, cost);
        const int64_t expected = n == 0 ? 0 : tasks <= 1 ? 1 : chunk_count(n, cost, tasks);
        EXPECT_EQ(int64_t(got.ranges.size()), expected) << "n " << n << " cost " << cost << " threads " << threads;
        for (const int ith : got.tasks) EXPECT_LT(ith, std::max(tasks, 1));
      }
    }
  }
}

TEST(ParallelRange, ChunkCountStaysWithinItsBounds) {
  for (const int tasks : {2, 3, 8}) {
    for (const int64_t n : {int64_t(1), int64_t(2), int64_t(5), int64_t(100), int64_t(1) << 20}) {
      for (const int64_t cost : {int64_t(1), int64_t(1000), int64_t(1) << 16}) {
        const int64_t chunks = chunk_count(n, cost, tasks);
        EXPECT_GE(chunks, std::min<int64_t>(tasks, n)) << "fewer chunks than tasks";
        EXPECT_LE(chunks, std::min<int64_t>(n, 4 * int64_t(tasks)));
      }
    }
  }
  // Large work is cut into several chunks per task; small work into no more than it pays for.
  EXPECT_EQ(chunk_count(1 << 20, 1 << 10, 2), 8);
  EXPECT_EQ(chunk_count(4, 16 * 1024, 2), 4);
  EXPECT_EQ(chunk_count(1000, 40, 2), 2);
}

// A thread that is slow (here: the first task, held up in its first chunk until the other task
// has done the rest) does not keep a fixed share: it ends with at most the one chunk it claimed
// (none, if the other task took them all before it claimed any), the other task with the rest.
TEST(ParallelRange, OtherTasksTakeOverTheChunksOfASlowOne) {
  ThreadPool pool(2);
  ExecContext exec(pool, scalar_vec_kernels());
  const int64_t n = 1 << 20, cost = 1 << 10;
  ASSERT_EQ(exec.tasks_for(n, cost), 2);
  const int64_t chunks = chunk_count(n, cost, 2);
  std::atomic<int64_t> done_by_first{0}, done_by_others{0};
  std::atomic<int> calls{0};
  exec.parallel_range(n, cost, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    calls.fetch_add(1);
    if (tc.ith != 0) {
      done_by_others.fetch_add(end - begin);
      return;
    }
    done_by_first.fetch_add(end - begin);
    // Bounded: a worker the OS never schedules fails the test instead of hanging it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (done_by_others.load() < n - (end - begin) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  });
  EXPECT_EQ(calls.load(), int(chunks));
  EXPECT_EQ(done_by_first.load() + done_by_others.load(), n);
  EXPECT_LE(done_by_first.load(), n / chunks) << "the slow task kept more than the chunk it was held up in";
}

}  // namespace
}  // namespace tg::cpu
