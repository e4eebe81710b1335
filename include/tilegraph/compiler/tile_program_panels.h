#pragma once
// The program of a K-split matmul group (docs/compiler.md, "matmul on the chip"): the tx8-codegen
// pass writes the plan's windows and buffers as data and calls panel_matmul, which issues every
// tile's instructions of the group step by step (the tiles send each other operand panels, so
// their programs interleave on the host: a copy's bytes must be in the receiving SPM before that
// tile's GEMM runs on the host).
//
// Per step s (result window s / panels, K panel s % panels) and tile:
//   load     the step's lhs (weights) and rhs (activations) panels into copy s % copies of their
//            buffers; with sharing, the tiles whose panel of an operand is the same (a grid row
//            shares the activation rows, a grid column the weight rows) each load one part of it
//            (its outermost dimension of more than one element cut in as many parts);
//   send     (sharing) each part, over the NoC (DTE), to the same place in the other tiles'
//            buffers;
//   GEMM     per batch of the window one NE GEMM of the panel into the f32 accumulator (copy
//            window % accumulator copies): the first panel overwrites it, the others add to it;
//   store    after the window's last panel, the accumulator to the result in DDR.
// The waits: a load or a send into a buffer copy waits for the GEMM and the sends that last read
// that copy on the receiving tile; a send for the load of its part; a GEMM for its loads and every send into
// its buffers; a window's first GEMM for the store that last read its accumulator copy; a store
// for its GEMM. At the start each tile waits for what it ran before (an earlier group's use of
// its SPM) and every tile's DTE for what the others ran before (it writes into their SPM).
#include <cstdint>
#include <vector>

#include "tilegraph/compiler/tile_program.h"
#include "tilegraph/sim/dte.h"
#include "tilegraph/sim/ne.h"

namespace tg::compiler::tile_program {

// The windows of one (part, step): the result's (the accumulator's), and each operand panel's.
struct PanelWindows {
  Window out, lhs, rhs;
};

// An operand or the result: its tensor in DDR and its SPM buffer copies.
struct PanelTensor {
  sim::Format format = sim::Format::FP32;
  uint64_t ddr = 0;
  Dims whole{1, 1, 1, 1};
  sim::MemLayout layout = sim::MemLayout::Tensor;
  std::vector<uint64_t> copies;
};

struct PanelMatmulPlan {
  std::vector<int> tiles;  // the chip tile of each part of the sharding grid
  int64_t steps = 0;       // per part: windows x panels
  int64_t panels = 1;
  const PanelWindows* windows = nullptr;  // [part * steps + step]; an empty out window: nothing to do
  PanelTensor lhs, rhs, out;
  bool share = false;
};

inline bool is_empty(const Window& w) { return elements(w.size) == 0; }

inline bool same(const Window& a, const Window& b) { return a.start == b.start && a.size == b.size; }

// The part `i` of `n` of a shared window: its outermost dimension of more than one element (the
// innermost when there is none) cut in n parts of ceil(size / n), the last ones shorter or empty.
inline Window shared_part(const Window& w, int64_t i, int64_t n) {
  int d = 0;
  while (d < 3 && w.size[size_t(d)] == 1) ++d;
  const int64_t size = w.size[size_t(d)], chunk = (size + n - 1) / n;
  const int64_t lo = std::min(size, i * chunk), hi = std::min(size, (i + 1) * chunk);
  Window part = w;
  part.start[size_t(d)] = w.start[size_t(d)] + lo;
  part.size[size_t(d)] = hi - lo;
  return part;
}

inline void panel_matmul(sim::Chip& chip, const PanelMatmulPlan& p) {
  const size_t parts = p.tiles.size();
  const size_t op_copies = p.lhs.copies.size(), acc_copies = p.out.copies.size();
  const uint64_t eb = sim::format_bytes(p.lhs.format), ob = sim::format_bytes(p.out.format);
  struct State {
    std::vector<sim::Event> read;      // per operand copy: the last GEMM that read it
    std::vector<sim::Event> sent[2];   // per operand (lhs, rhs) and copy: the last send out of it
    std::vector<sim::Event> stored;    // per accumulator copy: its last store
    std::vector<sim::Event> loaded;    // this step's own loads
    std::vector<sim::Event> received;  // this step's sends into its buffers
  };
  std::vector<State> state(parts);
  for (State& st : state) {
    st.read.resize(op_copies);
    st.sent[0].resize(op_copies);
    st.sent[1].resize(op_copies);
    st.stored.resize(acc_copies);
  }
  constexpr sim::Engine kEngines[] = {sim::Engine::NE,   sim::Engine::CT,   sim::Engine::TDMA,
                                      sim::Engine::RDMA, sim::Engine::WDMA, sim::Engine::DTE};
  std::vector<sim::Event> before;
  for (int t : p.tiles) {
    for (sim::Engine e : kEngines) before.push_back(chip.tile(t).record(e));
  }
  for (int t : p.tiles) {
    chip.tile(t).fence();  // the tile's SPM was an earlier group's
    if (p.share) {
      for (const sim::Event& e : before) chip.tile(t).wait(sim::Engine::DTE, e);
    }
  }
  const PanelTensor* operands[2] = {&p.lhs, &p.rhs};
  for (int64_t s = 0; s < p.steps; ++s) {
    const size_t b = size_t(s) % op_copies;
    const int64_t panel = s % p.panels;
    const size_t c = size_t(s / p.panels) % acc_copies;
    auto at = [&](size_t part) -> const PanelWindows& { return p.windows[part * size_t(p.steps) + size_t(s)]; };
    for (State& st : state) {
      st.loaded.clear();
      st.received.clear();
    }
    for (int x = 0; x < 2; ++x) {
      const PanelTensor& t = *operands[x];
      auto window = [&](size_t part) -> const Window& { return x == 0 ? at(part).lhs : at(part).rhs; };
      // Loads, each part's share of its window.
      std::vector<std::vector<size_t>> members(parts);
      for (size_t q = 0; q < parts; ++q) {
        if (is_empty(at(q).out)) continue;
        for (size_t r = 0; r < parts; ++r) {
          if (r == q || (p.share && !is_empty(at(r).out) && same(window(r), window(q)))) members[q].push_back(r);
        }
        const auto self = std::find(members[q].begin(), members[q].end(), q);
        const Window mine = shared_part(window(q), self - members[q].begin(), int64_t(members[q].size()));
        if (is_empty(mine)) continue;
        sim::Tile& tile = chip.tile(p.tiles[q]);
        tile.wait(sim::Engine::RDMA, state[q].read[b]);
        tile.wait(sim::Engine::RDMA, state[q].sent[x][b]);
        sim::lsu::LoadVar load;
        load.format = t.format;
        load.ddr = sim::lsu::DdrSlice{t.ddr, sim::oplib::shape_of(t.whole), sim::oplib::shape_of(mine.start),
                                      sim::oplib::shape_of(mine.size)};
        load.spm_addr = t.copies[b] + offset_in(window(q), mine.start, eb);
        load.layout = t.layout;
        sim::lsu::execute(tile, load);
        state[q].loaded.push_back(tile.record(sim::Engine::RDMA));
      }
      // Sends of each loaded share to the other members, after the sends that read the receiver's
      // copy in an earlier step (not this step's: they read other parts of it).
      std::vector<sim::Event> earlier_sends(parts);
      for (size_t r = 0; r < parts; ++r) earlier_sends[r] = state[r].sent[x][b];
      for (size_t q = 0; q < parts; ++q) {
        if (members[q].size() < 2) continue;
        const auto self = std::find(members[q].begin(), members[q].end(), q);
        const Window mine = shared_part(window(q), self - members[q].begin(), int64_t(members[q].size()));
        if (is_empty(mine)) continue;
        sim::Tile& tile = chip.tile(p.tiles[q]);
        tile.wait(sim::Engine::DTE, state[q].loaded.back());
        const uint64_t addr = t.copies[b] + offset_in(window(q), mine.start, eb);
        for (size_t r : members[q]) {
          if (r == q) continue;
          tile.wait(sim::Engine::DTE, state[r].read[b]);
          tile.wait(sim::Engine::DTE, earlier_sends[r]);
          sim::dte::execute(tile, sim::dte::Copy{addr, p.tiles[r], addr, uint64_t(elements(mine.size)) * eb});
          state[r].received.push_back(tile.record(sim::Engine::DTE));
        }
        state[q].sent[x][b] = tile.record(sim::Engine::DTE);
      }
    }
    // The GEMMs of the panel, and the store after a window's last panel.
    for (size_t q = 0; q < parts; ++q) {
      const PanelWindows& w = at(q);
      if (is_empty(w.out)) continue;
      sim::Tile& tile = chip.tile(p.tiles[q]);
      for (const sim::Event& e : state[q].loaded) tile.wait(sim::Engine::NE, e);
      for (const sim::Event& e : state[q].received) tile.wait(sim::Engine::NE, e);
      if (panel == 0) tile.wait(sim::Engine::NE, state[q].stored[c]);
      const Window& ow = w.out;
      for (int64_t b0 = ow.start[0]; b0 < ow.start[0] + ow.size[0]; ++b0) {
        for (int64_t b1 = ow.start[1]; b1 < ow.start[1] + ow.size[1]; ++b1) {
          const int64_t l0 = b0 / (p.out.whole[0] / p.lhs.whole[0]), l1 = b1 / (p.out.whole[1] / p.lhs.whole[1]);
          sim::ne::Gemm gemm;
          gemm.in_format = p.lhs.format;
          gemm.a = p.rhs.copies[b] + offset_in(w.rhs, {b0, b1, ow.start[2], w.rhs.start[3]}, eb);
          gemm.b = p.lhs.copies[b] + offset_in(w.lhs, {l0, l1, ow.start[3], w.lhs.start[3]}, eb);
          gemm.dst = p.out.copies[c] + offset_in(ow, {b0, b1, ow.start[2], ow.start[3]}, ob);
          gemm.m = ow.size[2];
          gemm.n = ow.size[3];
          gemm.k = w.rhs.size[3];
          gemm.b_transposed = true;
          gemm.accumulate = panel > 0;
          gemm.post.out_format = p.out.format;
          sim::ne::execute(tile, gemm);
        }
      }
      state[q].read[b] = tile.record(sim::Engine::NE);
      if (panel + 1 < p.panels && s + 1 < p.steps) continue;
      tile.wait(sim::Engine::WDMA, state[q].read[b]);
      sim::lsu::DmaStore store;
      store.format = p.out.format;
      store.spm_addr = p.out.copies[c];
      store.layout = p.out.layout;
      store.ddr = sim::lsu::DdrSlice{p.out.ddr, sim::oplib::shape_of(p.out.whole), sim::oplib::shape_of(ow.start),
                                     sim::oplib::shape_of(ow.size)};
      sim::lsu::execute(tile, store);
      state[q].stored[c] = tile.record(sim::Engine::WDMA);
    }
  }
}

}  // namespace tg::compiler::tile_program
