#pragma once
// Helpers for the EVG tests: an accumulator computed naively, cut into the AccBlocks of a grid
// and fed to an epilogue serially, shuffled, or from several real threads; reference checks.
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tilegraph/evg/evg.h"
#include "tilegraph/jit/compiler.h"

namespace tg::evg::test {

using Rng = std::mt19937;

// An M x N f32 accumulator: A (M x K) times B (K x N), summed in double, from random A and B.
std::vector<float> naive_accumulator(int64_t m, int64_t n, int64_t k, Rng& rng);
std::vector<float> random_vector(size_t size, Rng& rng, float lo = -2.0f, float hi = 2.0f);

// A JIT compiler whose cache lives in a fresh temporary directory (removed at exit), shared by
// the tests of front end kernels: a cold compile costs seconds, so they share what they can.
jit::Compiler& test_compiler();

// How blocks are handed to the epilogue.
enum class Schedule { kSerial, kReversed, kShuffled, kThreads };

// A Launcher whose parallel_for runs on `threads` std::threads pulling items from a shared
// counter (so which thread gets which block varies from run to run).
Launcher thread_launcher(int threads);

// Visits every block of `grid` over the m x n accumulator `acc` (row-major, ld = n) with
// visit(block, thread), in the order the schedule says, then returns. `threads` is the thread
// count the epilogue was built for.
void for_each_block(const std::vector<float>& acc, int64_t m, int64_t n, const BlockGrid& grid, Schedule schedule,
                    int threads, Rng& rng, const std::function<void(const AccBlock&, int)>& visit);

// Runs an epilogue type E end to end: construct, visit every block, finish.
template <class E>
void run_epilogue(const typename E::Arguments& args, const std::vector<float>& acc, int64_t m, int64_t n,
                  const BlockGrid& grid, Schedule schedule = Schedule::kSerial, int threads = 1, uint32_t seed = 1) {
  E epilogue(args, GemmShape{m, n, 1}, grid, threads);
  Rng rng(seed);
  for_each_block(acc, m, n, grid, schedule, threads, rng,
                 [&](const AccBlock& block, int thread) { epilogue.visit(block, thread); });
  epilogue.finish(schedule == Schedule::kThreads ? thread_launcher(threads) : Launcher::serial());
}

// Empty string if |out - ref| <= abs_tol + rel_tol * |ref| everywhere (NaNs must match NaNs,
// infinities exactly), else a description of the first mismatch.
std::string compare(const std::vector<float>& out, const std::vector<double>& ref, double rel_tol, double abs_tol);
// Empty string if bit-identical, else the first difference.
std::string compare_bits(const std::vector<float>& a, const std::vector<float>& b);

// Shapes every node test runs on: sizes 0, 1, primes, and a few larger ones.
struct Shape {
  int64_t m, n;
};
std::vector<Shape> test_shapes();
// Grids to cut those shapes with: single-row/column blocks, primes, larger than the problem.
std::vector<BlockGrid> test_grids();

// Calls f.template operator()<Epilogue>(name) with EVG under the architecture policies and
// compute lengths the tests cover: vector widths 1 to 16 (wider than the baseline target is
// legal, just emulated), fused and node-at-a-time compute, double- and single-buffered loads,
// sub-tiles from 32 elements (many per block, partial ones) to 2048.
template <class EVG, class F>
void for_each_policy(F&& f) {
  f.template operator()<BlockEpilogue<arch::Cpu<4>, 2048, EVG>>("Cpu<4> L2048");
  f.template operator()<BlockEpilogue<arch::Cpu<1>, 32, EVG>>("Cpu<1> L32");
  f.template operator()<BlockEpilogue<arch::Cpu<16>, 64, EVG>>("Cpu<16> L64");
  f.template operator()<BlockEpilogue<arch::CpuStaged<4>, 32, EVG>>("CpuStaged<4> L32");
  f.template operator()<BlockEpilogue<arch::CpuStaged<8>, 2048, EVG>>("CpuStaged<8> L2048");
  f.template operator()<BlockEpilogue<arch::Cpu<4, false, 1>, 32, EVG>>("CpuStaged<4> single-buffered L32");
}

// Checks that every policy produced the same bits as the first one it saw.
class SameBitsAcrossPolicies {
 public:
  std::string check(const std::vector<float>& out) {
    if (!have_first_) {
      first_ = out;
      have_first_ = true;
      return "";
    }
    return compare_bits(out, first_);
  }

 private:
  std::vector<float> first_;
  bool have_first_ = false;
};

// "shape 7x5 grid 3x5" for failure messages.
std::string describe(const Shape& shape, const BlockGrid& grid);

// A value nothing computes, to see which elements an epilogue wrote.
inline constexpr float kUntouched = -12345.5f;

}  // namespace tg::evg::test
