#pragma once
// Runs a flat epilogue graph over the sub-tiles of one accumulator block (the role of Catlass's
// VisitorImpl): for each sub-tile the LOAD phase of every load node, the COMPUTE phase of the
// compute, cast and reduction nodes in topological order, then the STORE phase. Each node runs
// exactly once per sub-tile, however many consumers its value has.
//
// Everything is resolved at compile time: which buffer each node reads and writes (the scratch
// plan), each value's extent, the loops. The inner loops are over whole W-lane vectors of
// scratch, with no calls, branches on node type or allocation.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <tuple>
#include <utility>

#include "tilegraph/evg/arch/simd.h"
#include "tilegraph/evg/block.h"
#include "tilegraph/evg/fusion/graph.h"
#include "tilegraph/evg/fusion/scratch_plan.h"
#include "tilegraph/evg/fusion/tile.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg {

template <class Graph, class Arch, int ComputeLength>
class GraphExecutor {
 public:
  using Info = GraphInfo<Graph>;
  static_assert(Info::kChecked);
  static constexpr int W = Arch::kLanes;
  static constexpr int N = Info::kSize;
  static_assert(ComputeLength >= 16 && ComputeLength % 16 == 0,
                "evg: the compute length is a positive multiple of 16 elements");
  static constexpr ScratchLayout<N> kPlan =
      plan_scratch<Info, W, ComputeLength, Arch::kLoadStages, Arch::kFuseCompute>();

  static constexpr size_t arena_bytes() { return kPlan.arena_bytes; }

  // Run-long memory the nodes ask for (the reductions' partials): each node's share, in node
  // order, whole 64-byte lines each.
  static size_t workspace_bytes(const GemmShape& problem, const BlockGrid& grid) {
    size_t total = 0;
    for_each_node([&]<int I>() { total += node_workspace_bytes<typename Info::template Op<I>>(problem, grid); });
    return total;
  }

  // The nodes' memory allocated here.
  GraphExecutor(const typename Graph::ArgumentTuple& args, const GemmShape& problem, const BlockGrid& grid)
      : owned_(allocate(workspace_bytes(problem, grid))),
        ops_(make_ops(args, problem, grid, owned_.get(), std::make_integer_sequence<int, N>{})) {
    choose_in_place_output();
  }

  // The nodes' memory in `workspace`: workspace_bytes() of it, 64-byte aligned, kept by the
  // caller for the run (its contents need not be cleared: the nodes initialise their share).
  GraphExecutor(const typename Graph::ArgumentTuple& args, const GemmShape& problem, const BlockGrid& grid,
                std::byte* workspace)
      : ops_(make_ops(args, problem, grid, workspace, std::make_integer_sequence<int, N>{})) {
    choose_in_place_output();
  }

  // All sub-tiles of one block; `arena` is this thread's scratch (arena_bytes() of it).
  void visit_block(const AccBlock& acc, int64_t block_row, int64_t block_col, std::byte* arena) {
    const int cols_per_tile = int(std::min<int64_t>(acc.cols, ComputeLength));
    if (cols_per_tile <= 0 || acc.rows <= 0) return;
    const int rows_per_tile = ComputeLength / round_up(cols_per_tile);
    const int64_t row_tiles = (acc.rows + rows_per_tile - 1) / rows_per_tile;
    const int64_t tiles = (acc.cols + cols_per_tile - 1) / cols_per_tile * row_tiles;
    const auto tile_at = [&](int64_t t) {
      const int64_t r = t % row_tiles * rows_per_tile;
      const int64_t c = t / row_tiles * cols_per_tile;
      SubTile s;
      s.row0 = acc.row0 + r;
      s.col0 = acc.col0 + c;
      s.rows = int(std::min<int64_t>(rows_per_tile, acc.rows - r));
      s.cols = int(std::min<int64_t>(cols_per_tile, acc.cols - c));
      s.ld = round_up(s.cols);
      s.acc = acc.data + r * acc.ld + c;
      s.acc_ld = acc.ld;
      s.block_row = block_row;
      s.block_col = block_col;
      return s;
    };
    if constexpr (Arch::kLoadStages >= 2) {
      load_phase(tile_at(0), arena, 0);
      for (int64_t t = 0; t < tiles; ++t) {
        const SubTile tile = tile_at(t);
        const int stage = int(t & 1);
        if (t + 1 < tiles) load_phase(tile_at(t + 1), arena, stage ^ 1);
        compute_phase(tile, arena, stage);
        store_phase(tile, arena, stage);
      }
    } else {
      for (int64_t t = 0; t < tiles; ++t) {
        const SubTile tile = tile_at(t);
        load_phase(tile, arena, 0);
        compute_phase(tile, arena, 0);
        store_phase(tile, arena, 0);
      }
    }
  }

  // Where a GEMM may sum the block at (row0, col0) before visiting it (block.h): the first store
  // node's output that offers itself (node.h) and that no other node reads or writes; nullptr
  // when there is none. Visiting then reads the accumulator from the output and writes the
  // output over it, on lines already in cache.
  float* accumulate_in_place(int64_t row0, int64_t col0, int64_t& ld) const {
    if (!in_place_) return nullptr;
    ld = in_place_ld_;
    return in_place_ + row0 * in_place_ld_ + col0;
  }

  // After every block: the reductions fold their partials.
  void finish(const Launcher& launcher) {
    for_each_node([&]<int I>() {
      if constexpr (Info::kRole[I] == NodeRole::kReduce) std::get<I>(ops_).finish(launcher);
    });
  }

 private:
  using OpTuple = typename Graph::OpTuple;

  static constexpr int round_up(int n) { return (n + W - 1) / W * W; }

  struct Free {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  using OwnedBytes = std::unique_ptr<std::byte[], Free>;

  static OwnedBytes allocate(size_t bytes) {
    return OwnedBytes(bytes ? static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(64))) : nullptr);
  }

  template <int... I>
  static OpTuple make_ops(const typename Graph::ArgumentTuple& args, const GemmShape& problem, const BlockGrid& grid,
                          std::byte* workspace, std::integer_sequence<int, I...>) {
    std::array<std::byte*, size_t(N)> share{};
    size_t offset = 0;
    ((share[size_t(I)] = workspace ? workspace + offset : nullptr,
      offset += node_workspace_bytes<typename Info::template Op<I>>(problem, grid)),
     ...);
    return OpTuple(
        typename Info::template Op<I>(std::get<I>(args), NodeContext{problem, grid, I, share[size_t(I)]})...);
  }

  void choose_in_place_output() {
    int chosen = -1;
    Footprint output;
    for_each_node([&]<int I>() {
      const auto& op = std::get<I>(ops_);
      if constexpr (Info::kRole[I] != NodeRole::kCompute) {
        static_assert(
            requires { op.footprint(); }, "evg: load, reduce and store nodes report their footprint (node.h)");
      }
      if constexpr (requires(int64_t & ld) { op.in_place_output(ld); }) {
        if (chosen < 0 && (in_place_ = op.in_place_output(in_place_ld_))) {
          chosen = I;
          output = op.footprint();
        }
      }
    });
    if (chosen < 0) return;
    bool shared = false;
    for_each_node([&]<int I>() {
      if constexpr (Info::kRole[I] != NodeRole::kCompute) {
        shared |= I != chosen && std::get<I>(ops_).footprint().overlaps(output);
      }
    });
    if (shared) in_place_ = nullptr;
  }

  template <class F>
  TG_EVG_INLINE static void for_each_node(F&& f) {
    [&]<int... I>(std::integer_sequence<int, I...>) { (f.template operator()<I>(), ...); }
    (std::make_integer_sequence<int, N>{});
  }

  // Node I's buffer (for a load, the one of load stage `stage`).
  template <int I>
  TG_EVG_INLINE static auto* buffer(std::byte* arena, int stage) {
    using Lane = typename Info::template Lane<I>;
    const int slot = kPlan.slot[I] + (Info::kRole[I] == NodeRole::kLoad ? stage : 0);
    return reinterpret_cast<Lane*>(arena + kPlan.slot_offset[size_t(slot)]);
  }

  // The buffer holding the value of node I's K-th input.
  template <int I, int K>
  static constexpr int input_owner = Info::kOwner[size_t(Info::kInputs[I][K])];

  template <Extent E>
  TG_EVG_INLINE static int64_t out_offset(int r, int i, int ld) {
    if constexpr (E == Extent::kTile) return int64_t(r) * ld + i;
    if constexpr (E == Extent::kScalar) return 0;
    return i;
  }

  // Tile loops may run as one flat loop when no input varies per row or per column alone.
  template <int I>
  static constexpr bool flat_inputs() {
    for (int k = 0; k < Info::kArity[I]; ++k) {
      const Extent e = Info::kExtent[size_t(Info::kOwner[size_t(Info::kInputs[I][size_t(k)])])];
      if (e == Extent::kRow || e == Extent::kCol) return false;
    }
    return true;
  }

  template <int I>
  static constexpr bool offers_load_vector() {
    return requires(const typename Info::template Op<I>& op, const SubTile& tile) {
      op.template load_vector<W>(tile, 0, 0);
    };
  }

  // Load nodes the fused loop reads straight from memory (load_vector, node.h) instead of copying
  // them to scratch in the LOAD phase: those that offer it and that only tile compute nodes of
  // the loop consume (a store or reduction reads scratch).
  static constexpr std::array<bool, size_t(N)> kDirectLoad = [] {
    std::array<bool, size_t(N)> direct = []<int... I>(std::integer_sequence<int, I...>) {
      return std::array<bool, size_t(N)>{
          (Arch::kFuseCompute && Info::kExtent[size_t(I)] == Extent::kTile && offers_load_vector<I>())...};
    }
    (std::make_integer_sequence<int, N>{});
    for (int j = 0; j < N; ++j) {
      for (int k = 0; k < Info::kArity[size_t(j)]; ++k) {
        if (!Info::is_tile_compute(j))
          direct[size_t(Info::kOwner[size_t(Info::kInputs[size_t(j)][size_t(k)])])] = false;
      }
    }
    return direct;
  }();

  static constexpr bool kFusedLoopIsFlat = [] {
    bool flat = true;
    for (int i = 0; i < N; ++i) {
      if (kDirectLoad[size_t(i)]) flat = false;  // read per row, at the accumulator's stride
    }
    for (int i = 0; i < N; ++i) {
      if (!Info::is_tile_compute(i)) continue;
      for (int k = 0; k < Info::kArity[size_t(i)]; ++k) {
        const int owner = Info::kOwner[size_t(Info::kInputs[size_t(i)][size_t(k)])];
        const Extent e = Info::kExtent[size_t(owner)];
        if (!Info::is_tile_compute(owner) && (e == Extent::kRow || e == Extent::kCol)) flat = false;
      }
    }
    return flat;
  }();

  static constexpr bool kHasTileCompute = [] {
    for (int i = 0; i < N; ++i) {
      if (Info::is_tile_compute(i)) return true;
    }
    return false;
  }();

  void load_phase(const SubTile& tile, std::byte* arena, int stage) const {
    for_each_node([&]<int I>() {
      if constexpr (Info::kRole[I] == NodeRole::kLoad && !kDirectLoad[I]) {
        std::get<I>(ops_).template load<W>(tile, buffer<I>(arena, stage));
      }
    });
  }

  void compute_phase(const SubTile& tile, std::byte* arena, int stage) {
    if constexpr (Arch::kFuseCompute) {
      for_each_node([&]<int I>() {
        if constexpr (Info::kRole[I] == NodeRole::kCompute && Info::kExtent[I] != Extent::kTile) {
          run_elementwise<I>(tile, arena, stage);
        }
      });
      if constexpr (kHasTileCompute) run_fused_tile_loop(tile, arena, stage);
      for_each_node([&]<int I>() {
        if constexpr (Info::kRole[I] == NodeRole::kReduce) run_reduce<I>(tile, arena, stage);
      });
    } else {
      for_each_node([&]<int I>() {
        if constexpr (Info::kRole[I] == NodeRole::kCompute) run_elementwise<I>(tile, arena, stage);
        if constexpr (Info::kRole[I] == NodeRole::kReduce) run_reduce<I>(tile, arena, stage);
      });
    }
  }

  void store_phase(const SubTile& tile, std::byte* arena, int stage) const {
    for_each_node([&]<int I>() {
      if constexpr (Info::kRole[I] == NodeRole::kStore) {
        constexpr int owner = input_owner<I, 0>;
        std::get<I>(ops_).template store<W, Info::kExtent[owner]>(tile, buffer<owner>(arena, stage));
      }
    });
  }

  template <int I>
  void run_reduce(const SubTile& tile, std::byte* arena, int stage) {
    constexpr int owner = input_owner<I, 0>;
    std::get<I>(ops_).template reduce<W, Info::kExtent[owner]>(tile, buffer<owner>(arena, stage),
                                                               reinterpret_cast<float*>(buffer<I>(arena, stage)));
  }

  // One node over its whole extent, reading and writing scratch.
  template <int I>
  void run_elementwise(const SubTile& tile, std::byte* arena, int stage) const {
    constexpr Extent E = Info::kExtent[I];
    auto* out = buffer<I>(arena, stage);
    const auto& op = std::get<I>(ops_);
    [&]<int... K>(std::integer_sequence<int, K...>) {
      const auto inputs = std::make_tuple(buffer<input_owner<I, K>>(arena, stage)...);
      for_each_vector<E, W, E == Extent::kTile && flat_inputs<I>()>(
          tile, [&](int r, int i) __attribute__((always_inline)) {
            const auto value = op.template compute<W>(
                fetch<E, Info::kExtent[input_owner<I, K>], W>(std::get<K>(inputs), r, i, tile.ld)...);
            simd::store<W>(out + out_offset<E>(r, i, tile.ld), value);
          });
    }
    (std::make_integer_sequence<int, Info::kArity[I]>{});
  }

  // Every tile-extent compute node, vector by vector, values passed in registers; only values
  // a store or reduction reads are written to scratch.
  void run_fused_tile_loop(const SubTile& tile, std::byte* arena, int stage) const {
    typename RegisterTuple<std::make_integer_sequence<int, N>>::type registers{};
    for_each_vector<Extent::kTile, W, kFusedLoopIsFlat>(
        tile, [&](int r, int i) __attribute__((always_inline)) {
          for_each_node([&]<int I>() {
            if constexpr (Info::is_tile_compute(I)) {
              const auto value = [&]<int... K>(std::integer_sequence<int, K...>) {
                return std::get<I>(ops_).template compute<W>(fused_input<I, K>(registers, tile, arena, stage, r, i)...);
              }
              (std::make_integer_sequence<int, Info::kArity[I]>{});
              std::get<I>(registers) = value;
              if constexpr (kPlan.materialized[I])
                simd::store<W>(buffer<I>(arena, stage) + int64_t(r) * tile.ld + i, value);
            }
          });
        });
  }

  template <class Seq>
  struct RegisterTuple;
  template <int... I>
  struct RegisterTuple<std::integer_sequence<int, I...>> {
    using type = std::tuple<simd::Vec<typename Info::template Lane<I>, W>...>;
  };

  template <int I, int K, class Registers>
  TG_EVG_INLINE auto fused_input(const Registers& registers, const SubTile& tile, std::byte* arena, int stage, int r,
                                 int i) const {
    constexpr int owner = input_owner<I, K>;
    if constexpr (Info::is_tile_compute(owner)) {
      return std::get<owner>(registers);
    } else if constexpr (kDirectLoad[owner]) {
      return std::get<owner>(ops_).template load_vector<W>(tile, r, i);
    } else {
      return fetch<Extent::kTile, Info::kExtent[owner], W>(buffer<owner>(arena, stage), r, i, tile.ld);
    }
  }

  OwnedBytes owned_;  // declared before ops_, which point into it
  OpTuple ops_;
  float* in_place_ = nullptr;  // accumulate_in_place's output, element (0, 0)
  int64_t in_place_ld_ = 0;
};

}  // namespace tg::evg

TG_EVG_DIAGNOSTICS_POP
