#include "tilegraph/sim/oplib/batchnorm.h"

#include "oplib/engine_order.h"
#include "oplib/op_checks.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/lsu.h"

namespace tg::sim::oplib {

namespace {

constexpr const char* kOp = "op_batchnorm_inference";
constexpr uint64_t kF32 = 4;

// Copies n batches of `bytes` (the batch stride but for the last, which stops at its data) from
// src to dst with the given strides: what a slice's padding needs so that every byte up to its end
// is written.
uint64_t copy_batches(Tile& tile, uint64_t src, uint64_t src_stride, uint64_t dst, uint64_t dst_stride, int64_t n,
                      uint64_t stride_bytes, uint64_t last_bytes) {
  uint64_t cycles = 0;
  if (n > 1) {
    cycles +=
        execute(tile, lsu::GatherScatter{src, dst, stride_bytes, n - 1, int64_t(src_stride), int64_t(dst_stride)});
  }
  const uint64_t last = uint64_t(n - 1);
  cycles += execute(tile, lsu::GatherScatter{src + last * src_stride, dst + last * dst_stride, last_bytes, 1, 0, 0});
  return cycles;
}

// x (one batch of the slice, f32 in the slice's layout) op= the channel vector, broadcast the way
// the layout needs: dense NHWC and C <= 32 one VuV over the batch; C > 32 a VuV_loop over the Cx
// blocks and a VuV over the C0 part.
uint64_t per_channel(Tile& tile, cgra::ArithOp op, uint64_t x, uint64_t vec, const LayoutGeometry& g) {
  const Shape4& s = g.shape();
  const int64_t hw = s.h * s.w;
  if (!g.aligned()) return execute(tile, cgra::ArithVuV{op, Format::FP32, x, vec, x, hw * s.c, s.c});
  uint64_t cycles = 0;
  const int64_t b = g.block_channels();
  if (g.cx() > 0) {
    cycles += execute(tile, cgra::ArithVuVLoop{op, Format::FP32, x, vec, x, hw * b, b, g.cx() * hw * b, g.cx() * b});
  }
  if (g.c0() > 0) {
    const uint64_t x0 = x + uint64_t(g.cx() * hw * b) * kF32, v0 = vec + uint64_t(g.cx() * b) * kF32;
    cycles += execute(tile, cgra::ArithVuV{op, Format::FP32, x0, v0, x0, hw * g.c0(), g.c0()});
  }
  return cycles;
}

}  // namespace

uint64_t batchnorm_inference_imm_bytes(Format format, MemLayout layout, const Shape4& slice) {
  if (format == Format::FP32) return 0;
  const LayoutGeometry g(slice, format, layout);
  return 2 * g.batch_stride() * uint64_t(slice.n);
}

uint64_t op_batchnorm_inference(Tile& tile, const BatchNormParam& param, const Tsr& in, const Tsr& scale,
                                const Tsr& shift, const Tsr& mean, const Tsr& var, const Tsr& imm, const Tsr& out) {
  using detail::require;
  detail::require_format(kOp, "in", in, {Format::FP32, Format::FP16, Format::BF16});
  require(out.format == in.format && out.layout == in.layout, kOp, "out must have in's format and layout");
  detail::require_same_shape(kOp, "in", in, "out", out);
  const Shape4 s = in.shape.real();
  for (const auto& [name, t] :
       {std::pair<const char*, const Tsr*>{"scale", &scale}, {"shift", &shift}, {"mean", &mean}, {"var", &var}}) {
    detail::require_format(kOp, name, *t, {Format::FP32});
    require(t->layout == MemLayout::Cx, kOp, std::string(name) + " must be a Cx channel vector (op_dma_load_channels)");
    require(t->shape.shape_real[3] == s.c, kOp,
            std::string(name) + " has " + std::to_string(t->shape.shape_real[3]) + " channels, in has " +
                std::to_string(s.c));
  }
  if (s.elements() == 0) return 0;
  const uint64_t imm_needed = batchnorm_inference_imm_bytes(in.format, in.layout, s);
  detail::require_imm(kOp, imm, imm_needed);

  const LayoutGeometry g(s, in.format, in.layout);
  const LayoutGeometry g32(s, Format::FP32, in.layout);            // the same element positions in fp32
  const int64_t e = int64_t(g.batch_bytes() / g.element_bytes());  // elements of a batch, padding within included
  const uint64_t stride = g.batch_stride();
  const bool narrow = in.format != Format::FP32;
  // Batch k computes at x(k): its slot in imm, or its place in out for fp32.
  const uint64_t slot = narrow ? 2 * stride : stride;
  const uint64_t base = narrow ? imm.addr : out.addr;
  auto x = [&](int64_t k) { return base + uint64_t(k) * slot; };
  uint64_t cycles = 0;
  detail::after_transfers(tile);

  if (narrow) {
    // 1, 2: make room, widen.
    cycles += copy_batches(tile, in.addr, stride, imm.addr + stride, slot, s.n, stride, g.batch_bytes());
    detail::order(tile, {Engine::TDMA}, Engine::CT);
    for (int64_t k = 0; k < s.n; ++k) {
      cycles += execute(tile, cgra::ConvertV{in.format, Format::FP32, x(k) + stride, x(k), e});
    }
  } else if (in.addr != out.addr) {
    cycles += execute(tile, lsu::GatherScatter{in.addr, out.addr, g.total_bytes(), 1, 0, 0});
    detail::order(tile, {Engine::TDMA}, Engine::CT);
  }
  // 3: x - mean.
  for (int64_t k = 0; k < s.n; ++k) cycles += per_channel(tile, cgra::ArithOp::Sub, x(k), mean.addr, g32);
  // 4, 5: rsqrt(var + eps) over the whole channel vector (its zero padding included).
  const int64_t vec = int64_t(var.geometry().batch_bytes() / kF32);
  cycles += execute(tile, cgra::ArithVS{cgra::ArithOp::Add, Format::FP32, var.addr, param.epsilon, var.addr, vec});
  cycles += execute(tile, cgra::UnaryV{cgra::UnaryOp::Rsqrt, Format::FP32, var.addr, var.addr, vec});
  // 6, 7, 8: by the normalising factor, by scale, plus shift.
  for (int64_t k = 0; k < s.n; ++k) cycles += per_channel(tile, cgra::ArithOp::Mul, x(k), var.addr, g32);
  for (int64_t k = 0; k < s.n; ++k) cycles += per_channel(tile, cgra::ArithOp::Mul, x(k), scale.addr, g32);
  for (int64_t k = 0; k < s.n; ++k) cycles += per_channel(tile, cgra::ArithOp::Add, x(k), shift.addr, g32);
  if (narrow) {
    // 9, 10: narrow back into the slot's upper half (whose padding step 1 left zero), scatter.
    for (int64_t k = 0; k < s.n; ++k) {
      cycles += execute(tile, cgra::ConvertV{Format::FP32, in.format, x(k), x(k) + stride, e});
    }
    detail::order(tile, {Engine::CT}, Engine::TDMA);
    cycles += copy_batches(tile, imm.addr + stride, slot, out.addr, stride, s.n, stride, g.batch_bytes());
  }
  return cycles;
}

OpCost batchnorm_inference_cost(const ChipConfig& config, Format format, MemLayout layout, const Shape4& slice) {
  const uint64_t imm_bytes = batchnorm_inference_imm_bytes(format, layout, slice);
  return cost_only_run(config, imm_bytes, [&](Tile& tile, SpmArena& arena) {
    const Tsr in = arena.tensor(format, layout, slice);
    const Tsr out = arena.tensor(format, layout, slice);
    const Shape4 channels{1, 1, 1, slice.c};
    const Tsr scale = arena.tensor(Format::FP32, MemLayout::Cx, channels, 1);
    const Tsr shift = arena.tensor(Format::FP32, MemLayout::Cx, channels, 1);
    const Tsr mean = arena.tensor(Format::FP32, MemLayout::Cx, channels, 1);
    const Tsr var = arena.tensor(Format::FP32, MemLayout::Cx, channels, 1);
    const Tsr imm = imm_tsr(arena.allocate(imm_bytes), imm_bytes);
    return op_batchnorm_inference(tile, BatchNormParam{}, in, scale, shift, mean, var, imm, out);
  });
}

}  // namespace tg::sim::oplib
