#include <algorithm>
#include <string>

#include "kernels.h"
#include "tilegraph/core/context.h"

namespace tg::cpu {

namespace {

// Below this many elements of work per task, waking another thread costs about as much as it
// saves (a woken spinning worker takes ~1 us to join; a contiguous f32 add does ~4 elements/ns).
constexpr int64_t kMinWorkPerTask = 16 * 1024;

// A parallel range's chunk is this share of what is left per task. On two threads the first chunk
// is a quarter of the range and each next a quarter of what is left, so the last thread to finish
// keeps the other waiting for about one minimum chunk rather than half of one of 8 equal chunks
// (on a 2-core Zen 4 the pool's waits in q4_K decode fell from ~8.5% to ~5% of the time), at ~2.4
// claims per halving of what is left.
constexpr int64_t kShareOfLeft = 2;

// Growth in pages, and at least doubling, so that a slowly growing size reallocates rarely.
constexpr size_t kScratchGranularity = 4096;

}  // namespace

void Scratch::Free::operator()(void* p) const { aligned_free_bytes(p); }

void* Scratch::bytes(size_t size) {
  if (size > capacity_) {
    const size_t grown = std::max(size, capacity_ * 2);
    const size_t rounded = (grown + kScratchGranularity - 1) / kScratchGranularity * kScratchGranularity;
    data_.reset();  // contents are not kept: free first so the peak is the new size alone
    data_.reset(aligned_alloc_bytes(rounded, 64));
    capacity_ = rounded;
  }
  return data_.get();
}

ExecContext::ExecContext(ThreadPool& pool, const VecKernels& vec)
    : pool_(pool), vec_(vec), scratch_(size_t(pool.size())) {}

int task_count(int64_t n, int64_t cost, int max_threads) {
  const int64_t work = n * std::max<int64_t>(cost, 1);
  const int64_t by_work = std::max<int64_t>(work / kMinWorkPerTask, 1);
  return int(std::min<int64_t>({by_work, n, int64_t(max_threads)}));
}

int64_t chunk_items(int64_t left, int64_t cost, int tasks) {
  const int64_t least = std::max<int64_t>(kMinWorkPerTask / std::max<int64_t>(cost, 1), 1);
  const int64_t share = (left + kShareOfLeft * tasks - 1) / (kShareOfLeft * tasks);
  return std::min(left, std::max(share, least));
}

Error node_error(const Tensor& node, const std::exception& cause) {
  std::string label(op_name(node.op));
  if (node.name[0]) label += std::string(" ") + node.name;
  return Error("cpu: " + label + ": " + cause.what());
}

}  // namespace tg::cpu
