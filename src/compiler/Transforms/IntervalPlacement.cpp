// Best-fit placement of buffers with lifetimes (IntervalPlacement.h).
#include "IntervalPlacement.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace tg::compiler::tx8be {

namespace {

int64_t liveTime(const PlacedBuffer& buffer) {
  int64_t time = 0;
  for (const LiveInterval& interval : buffer.intervals) time += interval.last - interval.first + 1;
  return time;
}

// The offset for buffer `index` among the others already at `offsets` (placed[i] says which are):
// the smallest gap between the ones it meets that holds it (lowest first when `lowest`), or on
// top of them.
uint64_t fitOffset(const std::vector<PlacedBuffer>& buffers, const std::vector<uint64_t>& offsets,
                   const std::vector<bool>& placed, size_t index, bool lowest) {
  const PlacedBuffer& buffer = buffers[index];
  std::vector<std::pair<uint64_t, uint64_t>> taken;  // [begin, end) of the placed buffers it meets
  for (size_t other = 0; other < buffers.size(); ++other) {
    if (other == index || !placed[other] || !lifetimesOverlap(buffer.intervals, buffers[other].intervals)) continue;
    taken.push_back({offsets[other], offsets[other] + buffers[other].bytes});
  }
  std::sort(taken.begin(), taken.end());
  uint64_t cursor = 0, best = 0, bestGap = UINT64_MAX;
  bool fits = false;
  for (const auto& [begin, end] : taken) {
    if (begin > cursor && begin - cursor >= buffer.bytes && begin - cursor < bestGap) {
      best = cursor;
      bestGap = lowest ? 0 : begin - cursor;
      fits = true;
    }
    cursor = std::max(cursor, end);
  }
  return fits ? best : cursor;
}

uint64_t peakOf(const std::vector<PlacedBuffer>& buffers, const std::vector<uint64_t>& offsets) {
  uint64_t peak = 0;
  for (size_t i = 0; i < buffers.size(); ++i) peak = std::max(peak, offsets[i] + buffers[i].bytes);
  return peak;
}

// Best fit in `order`, then compaction: the buffers highest up move to the lowest gap that holds
// them while any does (a placement made early may leave room that later ones freed).
Placement placeInOrder(const std::vector<PlacedBuffer>& buffers, const std::vector<size_t>& order) {
  std::vector<uint64_t> offsets(buffers.size(), 0);
  std::vector<bool> placed(buffers.size(), false);
  for (size_t index : order) {
    offsets[index] = fitOffset(buffers, offsets, placed, index, false);
    placed[index] = true;
  }
  for (bool moved = true; moved;) {
    moved = false;
    std::vector<size_t> highest(order);
    std::sort(highest.begin(), highest.end(),
              [&](size_t a, size_t b) { return offsets[a] + buffers[a].bytes > offsets[b] + buffers[b].bytes; });
    for (size_t index : highest) {
      const uint64_t lower = fitOffset(buffers, offsets, placed, index, true);
      if (lower < offsets[index]) {
        offsets[index] = lower;
        moved = true;
      }
    }
  }
  return Placement{.offsets = offsets, .peak = peakOf(buffers, offsets)};
}

}  // namespace

std::vector<LiveInterval> mergeLifetimes(std::vector<LiveInterval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const LiveInterval& a, const LiveInterval& b) { return a.first < b.first; });
  std::vector<LiveInterval> merged;
  for (const LiveInterval& interval : intervals) {
    if (!merged.empty() && interval.first <= merged.back().last + 1) {
      merged.back().last = std::max(merged.back().last, interval.last);
    } else {
      merged.push_back(interval);
    }
  }
  return merged;
}

bool lifetimesOverlap(const std::vector<LiveInterval>& a, const std::vector<LiveInterval>& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].last < b[j].first) {
      ++i;
    } else if (b[j].last < a[i].first) {
      ++j;
    } else {
      return true;
    }
  }
  return false;
}

Placement placeBestFit(const std::vector<PlacedBuffer>& buffers) {
  using Before = std::function<bool(const PlacedBuffer&, const PlacedBuffer&)>;
  const Before orders[] = {
      [](const PlacedBuffer& a, const PlacedBuffer& b) { return a.bytes > b.bytes; },
      [](const PlacedBuffer& a, const PlacedBuffer& b) {
        return a.intervals.front().first != b.intervals.front().first
                   ? a.intervals.front().first < b.intervals.front().first
                   : a.bytes > b.bytes;
      },
      [](const PlacedBuffer& a, const PlacedBuffer& b) { return liveTime(a) > liveTime(b); },
      [](const PlacedBuffer& a, const PlacedBuffer& b) {
        return a.bytes * uint64_t(liveTime(a)) > b.bytes * uint64_t(liveTime(b));
      },
  };
  Placement best{.offsets = std::vector<uint64_t>(buffers.size(), 0), .peak = UINT64_MAX};
  for (const Before& before : orders) {
    std::vector<size_t> order(buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return before(buffers[a], buffers[b]); });
    Placement tried = placeInOrder(buffers, order);
    if (tried.peak < best.peak) best = std::move(tried);
  }
  if (buffers.empty()) best.peak = 0;
  return best;
}

uint64_t liveBytesBound(const std::vector<PlacedBuffer>& buffers) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +/- bytes)
  for (const PlacedBuffer& buffer : buffers) {
    for (const LiveInterval& interval : buffer.intervals) {
      events.push_back({interval.first, int64_t(buffer.bytes)});
      events.push_back({interval.last + 1, -int64_t(buffer.bytes)});
    }
  }
  std::sort(events.begin(), events.end());  // at one time, frees before allocations
  int64_t live = 0, most = 0;
  for (const auto& [time, delta] : events) {
    live += delta;
    most = std::max(most, live);
  }
  return uint64_t(most);
}

}  // namespace tg::compiler::tx8be
