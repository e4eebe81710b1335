#pragma once
// Where each value of an epilogue graph lives in a thread's scratch (Catlass EVG's UB allocation),
// planned at compile time from the graph, the compute length and the architecture policy.
//
// Anchors get buffers of their own, never shared: each load has one per load stage (two for
// double buffering: the next sub-tile loads while this one computes), and each reduction one
// for its accumulator. Every other value that must exist in memory gets a slot sized for its
// element type and extent (ComputeLength elements, a vector's worth for scalars), and slots are
// reused by liveness: a value's slot is free once its last consumer has run. An elementwise
// node may write over an input that dies at it (same extent and element size), as Ascend
// kernels reuse a UB tensor in place.
//
// When the policy fuses compute (CPU: all tile-extent compute nodes run in one loop, values in
// registers), only values that the STORE phase or a reduction reads, and broadcast-extent values
// the loop reads, are materialised. Otherwise (node-at-a-time, as the simulator's vector unit
// runs) every compute value is.
//
// Time line of one sub-tile, for liveness: loads before everything; node-at-a-time: node i at
// time i; fused: broadcast-extent computes at i, the tile loop at N, reductions after it;
// stores last.
#include <array>
#include <cstddef>

#include "tilegraph/evg/fusion/graph.h"

namespace tg::evg {

template <int N>
struct ScratchLayout {
  static constexpr int kMaxSlots = 3 * N + 1;
  std::array<int, N> slot{};           // first slot of a node's buffer, -1 if it has none
  std::array<bool, N> materialized{};  // compute nodes whose value is written to scratch
  std::array<int, N> time{};
  std::array<int, N> last_use{};
  std::array<size_t, kMaxSlots> slot_bytes{};
  std::array<size_t, kMaxSlots> slot_offset{};
  int slots = 0;
  int anchor_slots = 0;  // loads (times the load stages) and reduction accumulators come first
  size_t arena_bytes = 0;
};

template <class Info, int Lanes, int ComputeLength, int LoadStages, bool FuseCompute>
constexpr ScratchLayout<Info::kSize> plan_scratch() {
  constexpr int N = Info::kSize;
  constexpr size_t kAlign = 64;
  ScratchLayout<N> p;
  const auto role = [](int i) { return Info::kRole[size_t(i)]; };
  const auto extent = [](int i) { return Info::kExtent[size_t(i)]; };
  const auto bytes_for = [](int i) {
    const size_t elements = Info::kExtent[size_t(i)] == Extent::kScalar ? size_t(Lanes) : size_t(ComputeLength);
    const size_t bytes = elements * size_t(Info::kLaneBytes[size_t(i)]);
    return (bytes + kAlign - 1) / kAlign * kAlign;
  };

  for (int i = 0; i < N; ++i) {
    p.slot[size_t(i)] = -1;
    p.last_use[size_t(i)] = -1;
    switch (role(i)) {
      case NodeRole::kLoad: p.time[size_t(i)] = -1; break;
      case NodeRole::kCompute:
        p.time[size_t(i)] = FuseCompute && extent(i) == Extent::kTile ? N : i;
        p.materialized[size_t(i)] = !FuseCompute || extent(i) != Extent::kTile;
        break;
      case NodeRole::kReduce: p.time[size_t(i)] = FuseCompute ? N + 1 + i : i; break;
      case NodeRole::kStore: p.time[size_t(i)] = 2 * N + 2; break;
    }
  }
  for (int j = 0; j < N; ++j) {
    for (int k = 0; k < Info::kArity[size_t(j)]; ++k) {
      const int owner = Info::kOwner[size_t(Info::kInputs[size_t(j)][size_t(k)])];
      if (p.time[size_t(j)] > p.last_use[size_t(owner)]) p.last_use[size_t(owner)] = p.time[size_t(j)];
      if ((role(j) == NodeRole::kStore || role(j) == NodeRole::kReduce) && role(owner) == NodeRole::kCompute) {
        p.materialized[size_t(owner)] = true;
      }
    }
  }

  // Anchors.
  for (int i = 0; i < N; ++i) {
    if (role(i) == NodeRole::kLoad) {
      p.slot[size_t(i)] = p.slots;
      for (int b = 0; b < LoadStages; ++b) p.slot_bytes[size_t(p.slots++)] = bytes_for(i);
    } else if (role(i) == NodeRole::kReduce) {
      p.slot[size_t(i)] = p.slots;
      p.slot_bytes[size_t(p.slots++)] = (size_t(ComputeLength) * sizeof(float) + kAlign - 1) / kAlign * kAlign;
    }
  }
  p.anchor_slots = p.slots;

  // Materialised compute values, in order of definition.
  std::array<int, ScratchLayout<N>::kMaxSlots> occupant{};
  for (int done = 0; done < N; ++done) {
    int v = -1;  // the next value to place: smallest (time, index) not yet placed
    for (int i = 0; i < N; ++i) {
      if (role(i) != NodeRole::kCompute || !p.materialized[size_t(i)] || p.slot[size_t(i)] >= 0) continue;
      if (v < 0 || p.time[size_t(i)] < p.time[size_t(v)]) v = i;
    }
    if (v < 0) break;
    const int t = p.time[size_t(v)];
    int chosen = -1;
    // In place over an input dying here (not inside the fused loop, where nodes share a time).
    if (t != N || !FuseCompute) {
      for (int k = 0; k < Info::kArity[size_t(v)] && chosen < 0; ++k) {
        const int in = Info::kOwner[size_t(Info::kInputs[size_t(v)][size_t(k)])];
        const int s = p.slot[size_t(in)];
        if (role(in) == NodeRole::kCompute && s >= p.anchor_slots && occupant[size_t(s)] == in &&
            p.last_use[size_t(in)] == t && extent(in) == extent(v) &&
            Info::kLaneBytes[size_t(in)] == Info::kLaneBytes[size_t(v)]) {
          chosen = s;
        }
      }
    }
    for (int s = p.anchor_slots; s < p.slots && chosen < 0; ++s) {
      if (p.last_use[size_t(occupant[size_t(s)])] < t) chosen = s;
    }
    if (chosen < 0) chosen = p.slots++;
    occupant[size_t(chosen)] = v;
    p.slot[size_t(v)] = chosen;
    if (bytes_for(v) > p.slot_bytes[size_t(chosen)]) p.slot_bytes[size_t(chosen)] = bytes_for(v);
  }

  size_t offset = 0;
  for (int s = 0; s < p.slots; ++s) {
    p.slot_offset[size_t(s)] = offset;
    offset += p.slot_bytes[size_t(s)];
  }
  p.arena_bytes = offset;
  return p;
}

}  // namespace tg::evg
