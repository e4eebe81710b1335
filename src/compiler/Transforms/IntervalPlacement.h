#pragma once
// Placing buffers with lifetimes in one address space so that two buffers live at the same time
// never share a byte: the SPM allocation (a group's buffers over its pipeline cycles) and the
// DDR placement (group results over the group order) both do it. Offsets are best fit: each
// buffer goes into the smallest gap between the placed buffers it meets that holds it, or on top
// of them. The result depends on the order buffers are placed in, so several orders are tried
// (largest first, earliest first, longest-lived first, largest area first) and the lowest peak
// kept.
#include <cstdint>
#include <vector>

namespace tg::compiler::tx8be {

// Cycles (or positions) [first, last], both included.
struct LiveInterval {
  int64_t first = 0, last = 0;
};

// One buffer's intervals with overlapping, contained and touching ones merged, sorted.
std::vector<LiveInterval> mergeLifetimes(std::vector<LiveInterval> intervals);

// Whether two merged interval lists share a cycle.
bool lifetimesOverlap(const std::vector<LiveInterval>& a, const std::vector<LiveInterval>& b);

struct PlacedBuffer {
  uint64_t bytes = 0;                   // a multiple of the alignment the offsets should have
  std::vector<LiveInterval> intervals;  // merged, not empty
};

struct Placement {
  std::vector<uint64_t> offsets;  // one per buffer
  uint64_t peak = 0;              // the highest byte used
};

Placement placeBestFit(const std::vector<PlacedBuffer>& buffers);

// The most bytes live at one time: no placement peaks lower.
uint64_t liveBytesBound(const std::vector<PlacedBuffer>& buffers);

}  // namespace tg::compiler::tx8be
