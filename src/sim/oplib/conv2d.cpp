#include "oplib/engine_order.h"
#include "oplib/op_checks.h"
#include "tilegraph/sim/oplib/gemm.h"

namespace tg::sim::oplib {

namespace {
constexpr const char* kOp = "op_conv2d";
}

Shape4 conv2d_out_shape(const Conv2dParam& p, const Shape4& in, const Shape4& weight) {
  const int64_t oh = (in.h + 2 * p.pad_h - p.dil_h * (weight.n - 1) - 1) / p.stride_h + 1;
  const int64_t ow = (in.w + 2 * p.pad_w - p.dil_w * (weight.h - 1) - 1) / p.stride_w + 1;
  return Shape4{in.n, oh, ow, weight.c};
}

uint64_t op_conv2d(Tile& tile, const Conv2dParam& param, const Tsr& in, const Tsr& weight, const Tsr* bias,
                   const Tsr& out) {
  using detail::require;
  detail::require_layout(kOp, "in", in, {MemLayout::Tensor, MemLayout::NTensor});
  detail::require_layout(kOp, "out", out, {MemLayout::Tensor, MemLayout::NTensor});
  detail::require_layout(kOp, "weight", weight, {MemLayout::NTensor});
  require(weight.format == in.format, kOp, "weight must have in's format");
  const Shape4 x = in.shape.real(), w = weight.shape.real();  // weight: KH x KW x Cin x Cout
  require(w.w == x.c, kOp, "weight has Cin = " + std::to_string(w.w) + ", in has C = " + std::to_string(x.c));
  const Shape4 o = conv2d_out_shape(param, x, w);
  require(o.h > 0 && o.w > 0 && o == out.shape.real(), kOp,
          "out is " + dims_string(out.shape.shape_real) + ", the convolution gives " + shape_string(o));
  ne::Conv c;
  c.in_format = in.format;
  c.input = in.addr;
  c.weight = weight.addr;
  c.dst = out.addr;
  c.n = x.n;
  c.h = x.h;
  c.w = x.w;
  c.cin = x.c;
  c.cout = w.c;
  c.kh = w.n;
  c.kw = w.h;
  c.stride_h = param.stride_h;
  c.stride_w = param.stride_w;
  c.pad_h = param.pad_h;
  c.pad_w = param.pad_w;
  c.dil_h = param.dil_h;
  c.dil_w = param.dil_w;
  c.post.act = param.act;
  c.post.out_format = out.format;
  if (bias) {
    detail::require_format(kOp, "bias", *bias, {Format::FP32});
    require(bias->shape.real().elements() == w.c, kOp,
            "bias has " + std::to_string(bias->shape.real().elements()) + " elements, Cout is " + std::to_string(w.c));
    c.post.bias = bias->addr;
  }
  detail::after_transfers(tile);
  return execute(tile, c);
}

OpCost conv2d_cost(const ChipConfig& config, const Conv2dParam& param, Format in_format, const Shape4& in,
                   const Shape4& weight) {
  return cost_only_run(config, 0, [&](Tile& tile, SpmArena& arena) {
    const MemLayout layout = in.n == 1 ? MemLayout::Tensor : MemLayout::NTensor;
    const Tsr x = arena.tensor(in_format, layout, in);
    const Tsr w = arena.tensor(in_format, MemLayout::NTensor, weight);
    const Tsr out = arena.tensor(Format::FP32, layout, conv2d_out_shape(param, in, weight));
    return op_conv2d(tile, param, x, w, nullptr, out);
  });
}

}  // namespace tg::sim::oplib
