#pragma once
// The CNN ops of a tile program (tile_program.h) on the windows it holds. A core image [W, H, C, N]
// is tensor<NxCxHxW> in tx8be and sits in DDR and SPM as it lies, NCHW, while the op library's
// convolution and BatchNorm take NHWC (the NE's input rows of Cin, the CGRA's per-channel unit
// vectors along C): the convolution and the BatchNorm transpose each batch of their window into
// scratch (CGRA), compute there and transpose the result back. Pooling needs no transpose: an NCHW
// window is N x C planes of H x W, which op_pool2d pools as N*C images of one channel.
//
// A window of a convolution or pooling is its output window's halo of the input, clipped to the
// image (ShardingRules.cpp, backWindow): the rows and columns clipped off become the padding the op
// has there, so a window touching one edge is padded on that side only and an interior one not at
// all. The convolution builds the padded input in scratch (zeros, then the rows copied in by the
// TDMA) and runs op_conv2d without padding; op_pool2d takes each side's padding itself.
//
// Each function returns the sum of its instructions' cycles (what the op library's ops return),
// and its `*_imm_bytes` the scratch it needs for an output window, which the compiler's cost query
// (OpCost.cpp) reports so that the SPM allocation reserves it.
#include <algorithm>
#include <cstdint>

#include "tilegraph/core/error.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/lsu.h"
#include "tilegraph/sim/oplib/batchnorm.h"
#include "tilegraph/sim/oplib/gemm.h"
#include "tilegraph/sim/oplib/pool.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::compiler::tile_program {

namespace cnn_detail {

inline uint64_t align256(uint64_t bytes) {
  return (bytes + sim::kBatchAlignBytes - 1) / sim::kBatchAlignBytes * sim::kBatchAlignBytes;
}

// `to`'s next instruction waits for everything issued so far to `from`.
inline void order(sim::Tile& tile, sim::Engine from, sim::Engine to) { tile.wait(to, tile.record(from)); }

inline uint64_t transpose(sim::Tile& tile, sim::Format format, uint64_t src, uint64_t dst, int64_t rows, int64_t cols) {
  return sim::cgra::execute(tile, sim::cgra::TransposeTensor{format, src, dst, rows, cols});
}

}  // namespace cnn_detail

// Along one dimension: the padded extent an output window of `out_size` at `out_start` reads
// (stride, padding, `span` = dilation * (k - 1) + 1), and how it lies against the input window
// [in_start, in_start + in_size): `skip` leading input rows outside it, `before` rows of padding,
// `rows` rows copied, `after` rows of padding.
struct EdgeSpan {
  int64_t extent = 0, skip = 0, before = 0, rows = 0, after = 0;
};

inline EdgeSpan edge_span(int64_t out_start, int64_t out_size, int64_t in_start, int64_t in_size, int64_t stride,
                          int64_t pad, int64_t span) {
  EdgeSpan e;
  const int64_t first = out_start * stride - pad;
  e.extent = (out_size - 1) * stride + span;
  const int64_t lo = std::max(first, in_start), hi = std::min(first + e.extent, in_start + in_size);
  e.skip = lo - in_start;
  e.before = lo - first;
  e.rows = std::max<int64_t>(0, hi - lo);
  e.after = e.extent - e.before - e.rows;
  return e;
}

struct Conv2dNchw {
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
};

// Scratch of conv2d_nchw for an output window of cout x oh x ow (one batch at a time) of a kernel
// cin x kh x kw: the kernel in HWIO, the padded input, and one region used in turn by the
// transposed kernel, the transposed input and the NHWC result (each dead before the next).
inline uint64_t conv2d_nchw_imm_bytes(sim::Format format, const Conv2dNchw& p, int64_t cin, int64_t kh, int64_t kw,
                                      int64_t cout, int64_t oh, int64_t ow) {
  using cnn_detail::align256;
  const uint64_t e = sim::format_bytes(format);
  const int64_t hp = (oh - 1) * p.stride_h + p.dil_h * (kh - 1) + 1,
                wp = (ow - 1) * p.stride_w + p.dil_w * (kw - 1) + 1;
  const uint64_t kernel = align256(uint64_t(cout * cin * kh * kw) * e);
  const uint64_t input = align256(uint64_t(hp * wp * cin) * e);
  const uint64_t result = align256(uint64_t(oh * ow * cout) * e);
  return kernel + input + std::max({kernel, input, result});
}

// out [N][Cout][OH][OW] = conv(in [N][Cin][H][W] window, kernel [Cout][Cin][KH][KW] window) as
// windows of the whole tensors (shape_start: where each sits). One NE convolution per batch.
inline uint64_t conv2d_nchw(sim::Tile& tile, const Conv2dNchw& p, const sim::oplib::Tsr& in,
                            const sim::oplib::Tsr& kernel, const sim::oplib::Tsr& imm, const sim::oplib::Tsr& out) {
  using cnn_detail::align256;
  using cnn_detail::order;
  using sim::Engine;
  const sim::oplib::Dims x = in.shape.shape_real, k = kernel.shape.shape_real, y = out.shape.shape_real;
  const int64_t n = y[0], cin = x[1], cout = y[1], oh = y[2], ow = y[3], kh = k[2], kw = k[3];
  if (n == 0 || cout == 0 || oh == 0 || ow == 0) return 0;
  if (k[0] != cout || k[1] != cin) throw Error("conv2d_nchw: the kernel window does not match the input and output");
  const sim::Format f = in.format;
  const uint64_t e = sim::format_bytes(f);
  const EdgeSpan rows = edge_span(out.shape.shape_start[2], oh, in.shape.shape_start[2], x[2], p.stride_h, p.pad_h,
                                  p.dil_h * (kh - 1) + 1);
  const EdgeSpan cols = edge_span(out.shape.shape_start[3], ow, in.shape.shape_start[3], x[3], p.stride_w, p.pad_w,
                                  p.dil_w * (kw - 1) + 1);
  const uint64_t need = conv2d_nchw_imm_bytes(f, p, cin, kh, kw, cout, oh, ow);
  if (imm.allocated_bytes() < need) {
    throw Error("conv2d_nchw: imm holds " + std::to_string(imm.allocated_bytes()) + " bytes, needs " +
                std::to_string(need));
  }
  const uint64_t kernel_bytes = align256(uint64_t(cout * cin * kh * kw) * e);
  const uint64_t input_bytes = align256(uint64_t(rows.extent * cols.extent * cin) * e);
  // w: the HWIO kernel; xp: the padded input; wt, xt, yt: the shared region.
  const uint64_t w = imm.addr, xp = w + kernel_bytes, wt = xp + input_bytes, xt = wt, yt = wt;
  uint64_t cycles = 0;
  // The kernel to HWIO: [Cout][Cin*KH*KW] transposed is [Cin][KH*KW][Cout]; each of the KH*KW
  // positions gathers its Cin rows of Cout.
  cycles += cnn_detail::transpose(tile, f, kernel.addr, wt, cout, cin * kh * kw);
  order(tile, Engine::CT, Engine::TDMA);
  const uint64_t row = uint64_t(cout) * e;
  for (int64_t pos = 0; pos < kh * kw; ++pos) {
    cycles +=
        sim::lsu::execute(tile, sim::lsu::GatherScatter{wt + uint64_t(pos) * row, w + uint64_t(pos * cin) * row, row,
                                                        cin, int64_t(uint64_t(kh * kw) * row), int64_t(row)});
  }
  sim::oplib::Conv2dParam param;
  param.stride_h = int32_t(p.stride_h);
  param.stride_w = int32_t(p.stride_w);
  param.dil_h = int32_t(p.dil_h);
  param.dil_w = int32_t(p.dil_w);
  const sim::oplib::Tsr padded =
      sim::oplib::Tsr{f, xp, sim::MemLayout::Tensor, sim::oplib::LShape::whole({1, rows.extent, cols.extent, cin})};
  const sim::oplib::Tsr weight =
      sim::oplib::Tsr{f, w, sim::MemLayout::NTensor, sim::oplib::LShape::whole({kh, kw, cin, cout})};
  const sim::oplib::Tsr result =
      sim::oplib::Tsr{out.format, yt, sim::MemLayout::Tensor, sim::oplib::LShape::whole({1, oh, ow, cout})};
  const uint64_t plane = uint64_t(x[2] * x[3]);
  order(tile, Engine::TDMA, Engine::CT);  // the kernel's gathers have read wt
  for (int64_t b = 0; b < n; ++b) {
    // The batch to NHWC, then into the zero-padded input (CGRA, then TDMA: both after the NE read
    // the previous batch's).
    order(tile, Engine::NE, Engine::CT);
    cycles += sim::cgra::execute(tile, sim::cgra::FillV{f, xp, 0.0, rows.extent * cols.extent * cin});
    cycles += cnn_detail::transpose(tile, f, in.addr + uint64_t(b * cin) * plane * e, xt, cin, x[2] * x[3]);
    order(tile, Engine::CT, Engine::TDMA);
    if (rows.rows > 0 && cols.rows > 0) {
      const uint64_t src = xt + uint64_t((rows.skip * x[3] + cols.skip) * cin) * e;
      const uint64_t dst = xp + uint64_t((rows.before * cols.extent + cols.before) * cin) * e;
      cycles += sim::lsu::execute(
          tile, sim::lsu::GatherScatter{src, dst, uint64_t(cols.rows * cin) * e, rows.rows,
                                        int64_t(uint64_t(x[3] * cin) * e), int64_t(uint64_t(cols.extent * cin) * e)});
    }
    order(tile, Engine::TDMA, Engine::NE);
    order(tile, Engine::CT, Engine::NE);  // the previous batch's result has left yt
    cycles += sim::oplib::op_conv2d(tile, param, padded, weight, nullptr, result);
    // The NHWC result back to the batch's [Cout][OH*OW].
    order(tile, Engine::NE, Engine::CT);
    cycles += cnn_detail::transpose(
        tile, out.format, yt, out.addr + uint64_t(b * cout * oh * ow) * sim::format_bytes(out.format), oh * ow, cout);
    order(tile, Engine::CT, Engine::TDMA);
  }
  return cycles;
}

// Scratch of batchnorm_nchw for a window of `dims` (N, C, H, W; channels_innermost: N, H, W, C):
// the window transposed to NHWC when the channels are not innermost, and the variance's Cx copy.
inline uint64_t batchnorm_nchw_imm_bytes(bool channels_innermost, const sim::oplib::Dims& dims) {
  using cnn_detail::align256;
  const int64_t c = channels_innermost ? dims[3] : dims[1];
  const uint64_t vec = sim::LayoutGeometry({1, 1, 1, c}, sim::Format::FP32, sim::MemLayout::Cx).total_bytes();
  return (channels_innermost ? 0 : align256(uint64_t(dims[0] * dims[1] * dims[2] * dims[3]) * 4)) + align256(vec);
}

// op_batchnorm_inference on an f32 window: `in` / `out` [N][C][H][W] (channels_innermost:
// [N][H][W][C]); the four vectors dense f32 windows of the C channels (as loaded once for every
// step: the variance is copied, since the op leaves rsqrt(var + eps) in it).
inline uint64_t batchnorm_nchw(sim::Tile& tile, float epsilon, bool channels_innermost, const sim::oplib::Tsr& in,
                               const sim::oplib::Tsr& scale, const sim::oplib::Tsr& shift, const sim::oplib::Tsr& mean,
                               const sim::oplib::Tsr& var, const sim::oplib::Tsr& imm, const sim::oplib::Tsr& out) {
  using cnn_detail::align256;
  const sim::oplib::Dims d = in.shape.shape_real;
  const int64_t n = d[0], c = channels_innermost ? d[3] : d[1], hw = channels_innermost ? d[1] * d[2] : d[2] * d[3];
  if (n * c * hw == 0) return 0;
  const uint64_t need = batchnorm_nchw_imm_bytes(channels_innermost, d);
  if (imm.allocated_bytes() < need) {
    throw Error("batchnorm_nchw: imm holds " + std::to_string(imm.allocated_bytes()) + " bytes, needs " +
                std::to_string(need));
  }
  auto vector = [&](uint64_t addr) {
    return sim::oplib::Tsr{sim::Format::FP32, addr, sim::MemLayout::Cx, sim::oplib::LShape::whole({1, 1, 1, c}, 1)};
  };
  const uint64_t xt = imm.addr, var_copy = imm.addr + (channels_innermost ? 0 : align256(uint64_t(n * c * hw) * 4));
  const int64_t vec = int64_t(vector(var_copy).allocated_bytes() / 4);
  uint64_t cycles = sim::cgra::execute(tile, sim::cgra::FillV{sim::Format::FP32, var_copy, 0.0, vec});
  cycles += sim::cgra::execute(tile, sim::cgra::MoveV{sim::Format::FP32, var.addr, var_copy, c});
  const sim::MemLayout layout = n > 1 ? sim::MemLayout::NTensor : sim::MemLayout::Tensor;
  const sim::Shape4 nhwc = channels_innermost ? sim::oplib::shape_of(d) : sim::Shape4{n, d[2], d[3], c};
  sim::oplib::Tsr x{sim::Format::FP32, channels_innermost ? in.addr : xt, layout, sim::oplib::LShape::whole(nhwc)};
  sim::oplib::Tsr y = x;
  y.addr = channels_innermost ? out.addr : xt;
  if (!channels_innermost) {
    for (int64_t b = 0; b < n; ++b) {
      cycles += cnn_detail::transpose(tile, sim::Format::FP32, in.addr + uint64_t(b * c * hw) * 4,
                                      xt + uint64_t(b * c * hw) * 4, c, hw);
    }
  }
  cycles += sim::oplib::op_batchnorm_inference(tile, sim::oplib::BatchNormParam{epsilon}, x, vector(scale.addr),
                                               vector(shift.addr), vector(mean.addr), vector(var_copy),
                                               sim::oplib::imm_tsr(imm.addr, 0), y);
  if (!channels_innermost) {
    cnn_detail::order(tile, sim::Engine::TDMA, sim::Engine::CT);
    for (int64_t b = 0; b < n; ++b) {
      cycles += cnn_detail::transpose(tile, sim::Format::FP32, xt + uint64_t(b * c * hw) * 4,
                                      out.addr + uint64_t(b * c * hw) * 4, hw, c);
    }
  }
  return cycles;
}

struct Pool2dNchw {
  sim::cgra::PoolOp op = sim::cgra::PoolOp::Max;
  int64_t kh = 2, kw = 2, stride_h = 2, stride_w = 2, pad_h = 0, pad_w = 0;
};

// Scratch of pool2d_nchw for an output window of n x c x oh x ow: the padded planes, when the op
// pads at all (a window at one edge pads one side only: op_pool2d's padded copy).
inline uint64_t pool2d_nchw_imm_bytes(sim::Format format, const Pool2dNchw& p, int64_t n, int64_t c, int64_t oh,
                                      int64_t ow) {
  if (p.pad_h == 0 && p.pad_w == 0) return 0;
  const int64_t hp = (oh - 1) * p.stride_h + p.kh, wp = (ow - 1) * p.stride_w + p.kw;
  return uint64_t(n * c * hp * wp) * sim::format_bytes(format);
}

// out [N][C][OH][OW] = pool(in [N][C][H][W] window): op_pool2d over the N*C planes.
inline uint64_t pool2d_nchw(sim::Tile& tile, const Pool2dNchw& p, const sim::oplib::Tsr& in, const sim::oplib::Tsr& imm,
                            const sim::oplib::Tsr& out) {
  const sim::oplib::Dims x = in.shape.shape_real, y = out.shape.shape_real;
  if (y[0] * y[1] * y[2] * y[3] == 0) return 0;
  const EdgeSpan rows =
      edge_span(out.shape.shape_start[2], y[2], in.shape.shape_start[2], x[2], p.stride_h, p.pad_h, p.kh);
  const EdgeSpan cols =
      edge_span(out.shape.shape_start[3], y[3], in.shape.shape_start[3], x[3], p.stride_w, p.pad_w, p.kw);
  if (rows.skip != 0 || cols.skip != 0 || rows.rows != x[2] || cols.rows != x[3]) {
    throw Error("pool2d_nchw: the input window is not the output window's halo");
  }
  const sim::oplib::Pool2dParam param{p.op,
                                      int32_t(p.kh),
                                      int32_t(p.kw),
                                      int32_t(p.stride_h),
                                      int32_t(p.stride_w),
                                      int32_t(rows.before),
                                      int32_t(rows.after),
                                      int32_t(cols.before),
                                      int32_t(cols.after)};
  auto planes = [](const sim::oplib::Tsr& t, const sim::oplib::Dims& d) {
    sim::oplib::Tsr view = t;
    const int64_t count = d[0] * d[1];
    view.layout = count > 1 ? sim::MemLayout::NTensor : sim::MemLayout::Tensor;
    view.shape = sim::oplib::LShape::whole({count, d[2], d[3], 1});
    return view;
  };
  return sim::oplib::op_pool2d(tile, param, planes(in, x), imm, planes(out, y));
}

// channel_norm: the codegen's buffers are all dense NCHW / row-major, so a change of the value's
// layout is a copy of the window (CGRA). In place (the SPM allocation's in-place chain) it is still
// issued: the buffers' waits order the engines through instructions, and the store of the result
// must follow the load of the operand.
inline uint64_t copy(sim::Tile& tile, const sim::oplib::Tsr& in, const sim::oplib::Tsr& out) {
  const int64_t n = in.shape.real().elements();
  if (n == 0) return 0;
  return sim::cgra::execute(tile, sim::cgra::MoveV{in.format, in.addr, out.addr, n});
}

}  // namespace tg::compiler::tile_program
