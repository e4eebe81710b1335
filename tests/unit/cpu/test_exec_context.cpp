// ExecContext::parallel_range: every item exactly once, in contiguous chunks that shrink with what
// is left and whose bounds do not depend on the timing, on one thread when the work is too small
// to share.
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

// The chunks chunk_items cuts [0, n) into.
std::vector<std::pair<int64_t, int64_t>> expected_chunks(int64_t n, int64_t cost, int tasks) {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (int64_t begin = 0; begin < n;) {
    const int64_t end = begin + chunk_items(n - begin, cost, tasks);
    chunks.emplace_back(begin, end);
    begin = end;
  }
  return chunks;
}

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
        if (tasks <= 1) {
          EXPECT_LE(got.ranges.size(), size_t(1)) << "n " << n << " cost " << cost << " threads " << threads;
        } else {
          EXPECT_EQ(got.ranges, expected_chunks(n, cost, tasks))
              << "n " << n << " cost " << cost << " threads " << threads;
        }
        for (const int ith : got.tasks) EXPECT_LT(ith, std::max(tasks, 1));
      }
    }
  }
}

TEST(ParallelRange, ChunksShrinkWithWhatIsLeftDownToATasksMinimumWork) {
  for (const int tasks : {2, 3, 8}) {
    for (const int64_t n : {int64_t(1), int64_t(2), int64_t(5), int64_t(100), int64_t(1) << 20}) {
      for (const int64_t cost : {int64_t(1), int64_t(1000), int64_t(1) << 16}) {
        const auto chunks = expected_chunks(n, cost, tasks);
        const int64_t least = std::max<int64_t>(16 * 1024 / cost, 1);
        for (size_t i = 0; i < chunks.size(); ++i) {
          const int64_t items = chunks[i].second - chunks[i].first, left = n - chunks[i].first;
          EXPECT_LE(items, std::max<int64_t>((left + 2 * tasks - 1) / (2 * tasks), least)) << "a chunk too long";
          if (i + 1 < chunks.size()) {
            EXPECT_GE(items, least) << "a chunk shorter than a task's minimum work before the last";
            EXPECT_GE(items, chunks[i + 1].second - chunks[i + 1].first) << "a chunk longer than the one before";
          }
        }
      }
    }
  }
  // Two tasks: a quarter of the range first, then a quarter of what is left, down to the minimum.
  EXPECT_EQ(chunk_items(1 << 20, 1 << 10, 2), 1 << 18);
  EXPECT_EQ(chunk_items(3 << 18, 1 << 10, 2), 3 << 16);
  EXPECT_EQ(chunk_items(40, 1 << 10, 2), 16);
  EXPECT_EQ(chunk_items(10, 1 << 10, 2), 10);
  EXPECT_EQ(chunk_items(1000, 40, 2), 409);
}

// A thread that is slow (here: the first task, held up in its first chunk until the other task
// has done the rest) does not keep a fixed share: it ends with at most the one chunk it claimed
// (none, if the other task took them all before it claimed any; at most the first, the longest),
// the other task with the rest.
TEST(ParallelRange, OtherTasksTakeOverTheChunksOfASlowOne) {
  ThreadPool pool(2);
  ExecContext exec(pool, scalar_vec_kernels());
  const int64_t n = 1 << 20, cost = 1 << 10;
  ASSERT_EQ(exec.tasks_for(n, cost), 2);
  const auto chunks = expected_chunks(n, cost, 2);
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
  EXPECT_EQ(calls.load(), int(chunks.size()));
  EXPECT_EQ(done_by_first.load() + done_by_others.load(), n);
  EXPECT_LE(done_by_first.load(), chunks[0].second) << "the slow task kept more than the chunk it was held up in";
}

}  // namespace
}  // namespace tg::cpu
