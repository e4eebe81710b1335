#pragma once
// Helpers for the EVG tests: an accumulator computed naively, cut into the AccBlocks of a grid
// and fed to an epilogue serially, shuffled, or from several real threads; reference checks.
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tilegraph/evg/block.h"

namespace tg::evg::test {

using Rng = std::mt19937;

// An M x N f32 accumulator: A (M x K) times B (K x N), summed in double, from random A and B.
std::vector<float> naive_accumulator(int64_t m, int64_t n, int64_t k, Rng& rng);
std::vector<float> random_vector(size_t size, Rng& rng, float lo = -2.0f, float hi = 2.0f);

// How blocks are handed to the epilogue.
enum class Schedule { kSerial, kReversed, kShuffled, kThreads };

// A Launcher whose parallel_for runs on `threads` std::threads pulling items from a shared
// counter (so which thread gets which block varies from run to run).
Launcher thread_launcher(int threads);

// Visits every block of `grid` over the m x n accumulator `acc` (row-major, ld = n) with
// visit(block, thread), in the order the schedule says, then returns. `threads` is the thread
// count the epilogue was built for.
void for_each_block(const std::vector<float>& acc, int64_t m, int64_t n, const BlockGrid& grid,
                    Schedule schedule, int threads, Rng& rng,
                    const std::function<void(const AccBlock&, int)>& visit);

// Runs an epilogue type E end to end: construct, visit every block, finish.
template <class E>
void run_epilogue(const typename E::Arguments& args, const std::vector<float>& acc, int64_t m, int64_t n,
                  const BlockGrid& grid, Schedule schedule = Schedule::kSerial, int threads = 1,
                  uint32_t seed = 1) {
  E epilogue(args, GemmShape{m, n, 1}, grid, threads);
  Rng rng(seed);
  for_each_block(acc, m, n, grid, schedule, threads, rng,
                 [&](const AccBlock& block, int thread) { epilogue.visit(block, thread); });
  epilogue.finish(schedule == Schedule::kThreads ? thread_launcher(threads) : Launcher::serial());
}

// Empty string if |out - ref| <= abs_tol + rel_tol * |ref| everywhere (NaNs must match NaNs,
// infinities exactly), else a description of the first mismatch.
std::string compare(const std::vector<float>& out, const std::vector<double>& ref, double rel_tol,
                    double abs_tol);
// Empty string if bit-identical, else the first difference.
std::string compare_bits(const std::vector<float>& a, const std::vector<float>& b);

// Shapes every node test runs on: sizes 0, 1, primes, and a few larger ones.
struct Shape {
  int64_t m, n;
};
std::vector<Shape> test_shapes();
// Grids to cut those shapes with: single-row/column blocks, primes, larger than the problem.
std::vector<BlockGrid> test_grids();

}  // namespace tg::evg::test
