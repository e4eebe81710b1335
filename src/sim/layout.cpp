#include "tilegraph/sim/layout.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "tilegraph/core/error.h"

namespace tg::sim {

namespace {

constexpr std::string_view kLayoutNames[] = {"Tensor", "NTensor", "Cx", "NCx"};

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

int64_t block_channels_of(Format format) { return format == Format::INT8 ? 128 : 64; }

}  // namespace

std::string_view mem_layout_name(MemLayout layout) {
  const int i = int(layout);
  if (i < 0 || i > 3) throw Error("unknown memory layout " + std::to_string(i));
  return kLayoutNames[i];
}

MemLayout parse_mem_layout(std::string_view name) {
  for (int i = 0; i < 4; ++i) {
    if (kLayoutNames[i] == name) return MemLayout(i);
  }
  throw Error("unknown memory layout '" + std::string(name) + "' (expected Tensor, NTensor, Cx or NCx)");
}

std::string shape_string(const Shape4& s) {
  return std::to_string(s.n) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" + std::to_string(s.c);
}

int64_t align_channel_remainder(int64_t c0, Format format) {
  if (c0 <= 0) return 0;
  const int64_t largest = format == Format::INT8 ? 64 : 32;
  for (int64_t a = 4; a <= largest; a *= 2) {
    if (c0 <= a) return a;
  }
  return block_channels_of(format);
}

LayoutGeometry::LayoutGeometry(Shape4 shape, Format format, MemLayout layout)
    : shape_(shape), format_(format), layout_(layout) {
  mem_layout_name(layout);
  if (shape.n < 0 || shape.h < 0 || shape.w < 0 || shape.c < 0) {
    throw Error("layout: negative dimension in shape " + shape_string(shape));
  }
  if ((layout == MemLayout::Tensor || layout == MemLayout::Cx) && shape.n != 1) {
    throw Error("layout " + std::string(mem_layout_name(layout)) + " holds one batch, got shape " +
                shape_string(shape) + " (use N" + std::string(mem_layout_name(layout)) + ")");
  }
  element_bytes_ = format_bytes(format);
  const uint64_t hw = uint64_t(shape.h * shape.w);
  if (!aligned()) {
    batch_bytes_ = hw * uint64_t(shape.c) * element_bytes_;
    batch_stride_ = batch_bytes_;
    return;
  }
  if (format == Format::INT32) {
    throw Error("layout " + std::string(mem_layout_name(layout)) +
                " has no alignment rule for int32 (fp32, tf32, fp16, bf16 and int8 have)");
  }
  block_ = block_channels_of(format);
  cx_ = shape.c / block_;
  c0_ = align_channel_remainder(shape.c % block_, format);
  if (c0_ == block_) {
    ++cx_;
    c0_ = 0;
  }
  batch_bytes_ = (uint64_t(cx_ * block_) + uint64_t(c0_)) * hw * element_bytes_;
  batch_stride_ = align_up(batch_bytes_, kBatchAlignBytes);
}

uint64_t LayoutGeometry::total_bytes() const {
  if (shape_.n == 0) return 0;
  return uint64_t(shape_.n - 1) * batch_stride_ + batch_bytes_;
}

uint64_t LayoutGeometry::offset(int64_t n, int64_t h, int64_t w, int64_t c) const {
  const uint64_t p = uint64_t(h * shape_.w + w);
  uint64_t index;
  if (!aligned()) {
    index = p * uint64_t(shape_.c) + uint64_t(c);
  } else if (c < cx_ * block_) {
    const uint64_t hw = uint64_t(shape_.h * shape_.w);
    index = (uint64_t(c / block_) * hw + p) * uint64_t(block_) + uint64_t(c % block_);
  } else {
    const uint64_t hw = uint64_t(shape_.h * shape_.w);
    index = uint64_t(cx_ * block_) * hw + p * uint64_t(c0_) + uint64_t(c - cx_ * block_);
  }
  return uint64_t(n) * batch_stride_ + index * element_bytes_;
}

void convert_layout(const void* src, MemLayout src_layout, void* dst, MemLayout dst_layout, Shape4 shape,
                    Format format) {
  const LayoutGeometry from(shape, format, src_layout);
  const LayoutGeometry to(shape, format, dst_layout);
  if (to.aligned()) std::memset(dst, 0, to.total_bytes());
  // Channels are contiguous in runs: the whole C in a dense layout, a block or C0 in an aligned one.
  const int64_t run = from.aligned() ? from.block_channels() : to.aligned() ? to.block_channels() : shape.c;
  const uint64_t eb = from.element_bytes();
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  for (int64_t n = 0; n < shape.n; ++n) {
    for (int64_t h = 0; h < shape.h; ++h) {
      for (int64_t w = 0; w < shape.w; ++w) {
        for (int64_t c = 0; c < shape.c; c += run) {
          const int64_t len = std::min(run, shape.c - c);
          std::memcpy(d + to.offset(n, h, w, c), s + from.offset(n, h, w, c), uint64_t(len) * eb);
        }
      }
    }
  }
}

}  // namespace tg::sim
