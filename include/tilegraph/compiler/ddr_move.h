#pragma once
// A DDR-to-DDR move (a view, reshape, transpose or one operand of a concat that a group working
// in DDR materialises) cut into pieces that each are one DMA box on both sides: a load of a 4-D
// window of the source into SPM and a store of it into a 4-D window of the destination.
//
// A transfer's cost on the chip is its latency plus its contiguous runs rounded up to bursts, so
// one box instead of a transfer per run saves a latency per run: a KV-cache view of 8 heads x 64
// positions x 128 dims is 8 boxes (one per head), not 512 row transfers.
//
// Header-only and free of the simulator: the generated move programs (tile_program.h) and the
// cost model both cut moves this way.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace tg::compiler {

// Elements per dimension (N, H, W, C) and their strides in elements.
using MoveDims = std::array<int64_t, 4>;

// The SPM a tile stages moves through: enough for boxes of half a MiB (two halves, one loading
// while the other stores), less on a smaller SPM.
inline uint64_t move_staging_bytes(uint64_t spm_bytes) { return std::min<uint64_t>(uint64_t(1) << 20, spm_bytes); }

struct MoveBox {
  uint64_t src = 0, dst = 0;       // byte offsets of the box's first byte from the move's src / dst
  MoveDims size{1, 1, 1, 1};       // bytes innermost (C), then whole elements or merged rows
  MoveDims src_whole{1, 1, 1, 1};  // the row-major extents whose window `size` at 0 the box is
  MoveDims dst_whole{1, 1, 1, 1};
  uint64_t bytes() const { return uint64_t(size[0] * size[1] * size[2] * size[3]); }
};

// The boxes of the move of `size` elements of `element_bytes` bytes from strides `src_strides`
// to `dst_strides`, each at most `max_box_bytes` (> 0). Dimensions that stay contiguous on both
// sides merge; a dimension joins the box while its stride on both sides is a whole multiple of the
// next inner one at least as large as that one's extent (what a window of a row-major tensor can
// express); the dimensions left over are walked one box at a time, the innermost fastest.
inline std::vector<MoveBox> move_boxes(const MoveDims& size, const MoveDims& src_strides, const MoveDims& dst_strides,
                                       uint64_t element_bytes, uint64_t max_box_bytes) {
  struct Dim {
    int64_t size, src, dst;  // extent, byte strides
  };
  for (int64_t s : size) {
    if (s <= 0) return {};
  }
  // Innermost first; the bytes of one element are the first dimension.
  std::vector<Dim> dims{{int64_t(element_bytes), 1, 1}};
  for (int d = 3; d >= 0; --d) {
    if (size[size_t(d)] == 1) continue;
    const Dim next{size[size_t(d)], src_strides[size_t(d)] * int64_t(element_bytes),
                   dst_strides[size_t(d)] * int64_t(element_bytes)};
    Dim& inner = dims.back();
    if (next.src == inner.src * inner.size && next.dst == inner.dst * inner.size) {
      inner.size *= next.size;
    } else {
      dims.push_back(next);
    }
  }
  auto nests = [](int64_t outer, int64_t inner, int64_t inner_size) {
    return inner > 0 && outer % inner == 0 && outer / inner >= inner_size;
  };
  size_t depth = 1;
  while (depth < std::min<size_t>(dims.size(), 4) &&
         nests(dims[depth].src, dims[depth - 1].src, dims[depth - 1].size) &&
         nests(dims[depth].dst, dims[depth - 1].dst, dims[depth - 1].size)) {
    ++depth;
  }
  auto inner_bytes = [&](size_t n) {
    int64_t b = 1;
    for (size_t j = 0; j < n; ++j) b *= dims[j].size;
    return uint64_t(b);
  };
  while (depth > 1 && inner_bytes(depth - 1) > max_box_bytes) --depth;
  // The outermost box dimension is cut into chunks that fit.
  const int64_t chunk = int64_t(std::max<uint64_t>(1, max_box_bytes / inner_bytes(depth - 1)));

  std::vector<MoveBox> boxes;
  std::vector<int64_t> index(dims.size(), 0);  // over dims[depth..], outermost last
  for (;;) {
    uint64_t src = 0, dst = 0;
    for (size_t j = depth; j < dims.size(); ++j) {
      src += uint64_t(index[j] * dims[j].src);
      dst += uint64_t(index[j] * dims[j].dst);
    }
    const Dim& cut = dims[depth - 1];
    for (int64_t at = 0; at < cut.size; at += chunk) {
      MoveBox box;
      box.src = src + uint64_t(at * cut.src);
      box.dst = dst + uint64_t(at * cut.dst);
      // Box dimension j is array entry 3 - j (C innermost).
      for (size_t j = 0; j < depth; ++j) {
        const int64_t extent = j + 1 == depth ? std::min(chunk, cut.size - at) : dims[j].size;
        box.size[3 - j] = extent;
        box.src_whole[3 - j] = j + 1 == depth ? extent : dims[j + 1].src / dims[j].src;
        box.dst_whole[3 - j] = j + 1 == depth ? extent : dims[j + 1].dst / dims[j].dst;
      }
      boxes.push_back(box);
    }
    size_t j = depth;
    while (j < dims.size() && ++index[j] == dims[j].size) index[j++] = 0;
    if (j == dims.size()) break;
  }
  return boxes;
}

}  // namespace tg::compiler
