// allocateSpm (GroupPlan.h): places a group's SPM buffers, as the TX8 toolchain's SPMAllocPass
// does after SA_BufferLife and SA_BufferMerge (BufferLife.h). Each buffer keeps one offset for
// its whole life; buffers whose lifetimes meet get disjoint bytes. Placement is best fit: a
// buffer goes into the smallest gap between the buffers it meets that holds it, or on top. The
// result depends on the order buffers are placed in, so several orders are tried (largest
// first, earliest first, longest-lived first, largest area first) and the lowest peak is kept.
#include <algorithm>
#include <functional>
#include <numeric>

#include "BufferLife.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"

namespace tg::compiler::tx8be {

namespace {

int64_t liveCycles(const BufferLife& buffer) {
  int64_t cycles = 0;
  for (const LiveInterval& interval : buffer.intervals) cycles += interval.last - interval.first + 1;
  return cycles;
}

// The most bytes live in one cycle: no placement can peak lower.
uint64_t liveBytesBound(const std::vector<BufferLife>& buffers) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (cycle, +/- bytes)
  for (const BufferLife& buffer : buffers) {
    for (const LiveInterval& interval : buffer.intervals) {
      events.push_back({interval.first, int64_t(buffer.footprint())});
      events.push_back({interval.last + 1, -int64_t(buffer.footprint())});
    }
  }
  std::sort(events.begin(), events.end());  // at one cycle, frees before allocations
  int64_t live = 0, most = 0;
  for (const auto& [cycle, delta] : events) {
    live += delta;
    most = std::max(most, live);
  }
  return uint64_t(most);
}

// Best-fit placement in `order`; returns the offsets (by buffer index) and the peak.
std::pair<std::vector<uint64_t>, uint64_t> place(const std::vector<BufferLife>& buffers,
                                                 const std::vector<size_t>& order) {
  std::vector<uint64_t> offsets(buffers.size(), 0);
  std::vector<size_t> placed;
  uint64_t peak = 0;
  for (size_t index : order) {
    const BufferLife& buffer = buffers[index];
    std::vector<std::pair<uint64_t, uint64_t>> taken;  // [begin, end) of the buffers it meets
    for (size_t other : placed) {
      if (lifetimesOverlap(buffer.intervals, buffers[other].intervals)) {
        taken.push_back({offsets[other], offsets[other] + buffers[other].footprint()});
      }
    }
    std::sort(taken.begin(), taken.end());
    uint64_t best = 0, bestGap = UINT64_MAX, cursor = 0;
    bool fits = false;
    for (const auto& [begin, end] : taken) {
      if (begin > cursor && begin - cursor >= buffer.footprint() && begin - cursor < bestGap) {
        best = cursor;
        bestGap = begin - cursor;
        fits = true;
      }
      cursor = std::max(cursor, end);
    }
    offsets[index] = fits ? best : cursor;
    peak = std::max(peak, offsets[index] + buffer.footprint());
    placed.push_back(index);
  }
  return {std::move(offsets), peak};
}

}  // namespace

PlanStatus allocateSpm(GroupOp group, const DataSplit& split, const Pipeline& pipeline, const sim::ChipConfig& chip,
                       SpmPlan& spm) {
  const std::vector<BufferLife> buffers = bufferLives(group, split, pipeline);
  using Before = std::function<bool(const BufferLife&, const BufferLife&)>;
  const Before orders[] = {
      [](const BufferLife& a, const BufferLife& b) { return a.footprint() > b.footprint(); },
      [](const BufferLife& a, const BufferLife& b) {
        return a.intervals.front().first != b.intervals.front().first
                   ? a.intervals.front().first < b.intervals.front().first
                   : a.footprint() > b.footprint();
      },
      [](const BufferLife& a, const BufferLife& b) { return liveCycles(a) > liveCycles(b); },
      [](const BufferLife& a, const BufferLife& b) {
        return a.footprint() * uint64_t(liveCycles(a)) > b.footprint() * uint64_t(liveCycles(b));
      },
  };
  std::vector<uint64_t> offsets(buffers.size(), 0);
  uint64_t peak = UINT64_MAX;
  for (const Before& before : orders) {
    std::vector<size_t> order(buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return before(buffers[a], buffers[b]); });
    auto [tried, triedPeak] = place(buffers, order);
    if (triedPeak < peak) {
      peak = triedPeak;
      offsets = std::move(tried);
    }
  }
  if (buffers.empty()) peak = 0;

  spm = SpmPlan{};
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferLife& buffer = buffers[i];
    const SpmBuffer placed{.scratchOf = buffer.scratchOf,
                           .bytes = buffer.bytes,
                           .copies = buffer.copies,
                           .firstCycle = buffer.intervals.front().first,
                           .lastCycle = buffer.intervals.back().last,
                           .offset = offsets[i]};
    if (buffer.scratchOf) spm.buffers.push_back(placed);
    // Every value of an in-place chain is listed, at the chain's offset: each op's dev_info
    // names the buffer it writes.
    for (mlir::Value member : buffer.members) {
      spm.buffers.push_back(placed);
      spm.buffers.back().value = member;
    }
  }
  spm.peak = peak;
  spm.lowerBound = liveBytesBound(buffers);
  return peak > chip.spm_bytes ? PlanStatus::SpmAllocFailed : PlanStatus::Ok;
}

}  // namespace tg::compiler::tx8be
