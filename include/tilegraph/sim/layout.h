#pragma once
// How a tensor's elements sit in memory on the chip (the TX8 toolchain's mem_layout). Shapes are
// N x H x W x C with C innermost.
//
//   Tensor / NTensor  dense NHWC (Tensor when N is 1).
//   Cx / NCx          the engines' aligned form. Each batch starts at a 2048-bit (256-byte)
//                     boundary. Within a batch, C splits into Cx full blocks of B channels
//                     (B = 64, or 128 for int8) and a remainder C0:
//                       [Cx][H*W][B]  then  [H*W][C0 aligned]
//                     C0 is aligned up to 4, 8, 16 or 32 (int8: up to 64); a remainder wider
//                     than that becomes one more full block. So C <= 32 (int8: 64) is plain
//                     NHWC with C aligned, e.g. fp16 C = 131 is 2 blocks of 64 and C0 = 3 -> 4.
//                     Padding elements are zero.
#include <cstdint>
#include <string>
#include <string_view>

#include "tilegraph/sim/format.h"

namespace tg::sim {

enum class MemLayout : int32_t { Tensor, NTensor, Cx, NCx };
std::string_view mem_layout_name(MemLayout layout);  // "Tensor", "NTensor", "Cx", "NCx"
MemLayout parse_mem_layout(std::string_view name);

struct Shape4 {
  int64_t n = 1, h = 1, w = 1, c = 1;
  int64_t elements() const { return n * h * w * c; }
  bool operator==(const Shape4&) const = default;
};
std::string shape_string(const Shape4& shape);  // "2x1x2x131"

inline constexpr uint64_t kBatchAlignBytes = 256;  // 2048 bits

// Where each element of a shape lives in one layout. Cheap to make; every size is in bytes.
class LayoutGeometry {
 public:
  // Throws tg::Error for a negative dimension, for Tensor/Cx with n != 1 and for a layout the
  // format has no alignment rule for (int32 in Cx/NCx).
  LayoutGeometry(Shape4 shape, Format format, MemLayout layout);

  const Shape4& shape() const { return shape_; }
  Format format() const { return format_; }
  MemLayout layout() const { return layout_; }
  bool aligned() const { return layout_ == MemLayout::Cx || layout_ == MemLayout::NCx; }
  int64_t block_channels() const { return block_; }  // B: 64, or 128 for int8
  int64_t cx() const { return cx_; }                 // full channel blocks per batch
  int64_t c0() const { return c0_; }                 // remainder channels after alignment
  uint64_t element_bytes() const { return element_bytes_; }
  uint64_t batch_bytes() const { return batch_bytes_; }    // one batch's data, without padding to the next
  uint64_t batch_stride() const { return batch_stride_; }  // batch to batch
  uint64_t total_bytes() const;                            // up to the end of the last batch's data
  // Byte offset of element (n, h, w, c).
  uint64_t offset(int64_t n, int64_t h, int64_t w, int64_t c) const;

 private:
  Shape4 shape_;
  Format format_;
  MemLayout layout_;
  int64_t block_ = 0, cx_ = 0, c0_ = 0;
  uint64_t element_bytes_ = 0, batch_bytes_ = 0, batch_stride_ = 0;
};

// The aligned width of a channel remainder: 0, 4, 8, 16, 32 (int8 also 64), or the full block
// width when it is wider than the largest alignment.
int64_t align_channel_remainder(int64_t c0, Format format);

// Copies every element of `shape` from one layout to another (host memory; src and dst must not
// overlap). Padding of an aligned destination is zeroed.
void convert_layout(const void* src, MemLayout src_layout, void* dst, MemLayout dst_layout, Shape4 shape,
                    Format format);

}  // namespace tg::sim
