// queryOpCost (OpCost.h): a tx8be op's slice mapped onto the C-model's op library. Shapes map to
// the library's N x H x W x C with C innermost by their innermost dimensions (C the innermost, W
// and H the next two, N the product of the rest); the CNN ops (conv2d, batchnorm_inference,
// pool2d) run as the tile program runs them on its dense NCHW windows (tile_program_cnn.h).
// Element types map to formats (f32, f16, bf16, i32; a q8_0 matmul weight runs as int8, the
// activation rounded to 8 bits as the op does); layouts come from dev_info.mem_layout (Tensor or
// Cx become NTensor or NCx for a slice with more than one batch).
#include "tilegraph/compiler/Dialect/Tx8be/IR/OpCost.h"

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <llvm/ADT/TypeSwitch.h>
#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

#include "Transforms/Codegen.h"
#include "core_bridge.h"
#include "cost_model.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/tile_program_cnn.h"
#include "tilegraph/core/error.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/chip_config.h"
#include "tilegraph/sim/oplib/attention.h"
#include "tilegraph/sim/oplib/batchnorm.h"
#include "tilegraph/sim/oplib/data_layout_ops.h"
#include "tilegraph/sim/oplib/data_movement.h"
#include "tilegraph/sim/oplib/elementwise.h"
#include "tilegraph/sim/oplib/gemm.h"
#include "tilegraph/sim/oplib/norm.h"
#include "tilegraph/sim/oplib/rope.h"
#include "tilegraph/sim/oplib/softmax.h"

using namespace mlir;

namespace tg::compiler::tx8be {

namespace {

namespace oplib = sim::oplib;
using sim::Format;
using sim::MemLayout;
using sim::Shape4;
using Shape = std::vector<int64_t>;

// The output slice and the slice of each operand it reads per step.
struct Slices {
  Shape out;
  std::vector<Shape> operands;
};

Type element_of(Value value) { return value.getType().cast<ShapedType>().getElementType(); }

std::optional<Format> format_of(Type element) {
  const std::optional<DType> dtype = core_dtype(element);
  if (!dtype) return std::nullopt;
  switch (*dtype) {
    case DType::F32: return Format::FP32;
    case DType::F16: return Format::FP16;
    case DType::BF16: return Format::BF16;
    case DType::I32: return Format::INT32;
    default: return std::nullopt;  // block-quantized: only a matmul weight maps (to int8)
  }
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// C the innermost dimension, W and H the next two, N the rest.
Shape4 innermost_nhwc(ArrayRef<int64_t> s) {
  const size_t r = s.size();
  Shape4 shape;
  if (r >= 1) shape.c = s[r - 1];
  if (r >= 2) shape.w = s[r - 2];
  if (r >= 3) shape.h = s[r - 3];
  if (r >= 4) shape.n = product(s.drop_back(3));
  return shape;
}

MemLayout layout_of(Operation* op, const Shape4& shape) {
  MemLayout layout = MemLayout::Tensor;
  if (auto dev = op->getAttrOfType<DevAttr>("dev_info")) {
    switch (dev.getMemLayout()) {
      case LayoutMode::Tensor: layout = MemLayout::Tensor; break;
      case LayoutMode::NTensor: layout = MemLayout::NTensor; break;
      case LayoutMode::Cx: layout = MemLayout::Cx; break;
      case LayoutMode::NCx: layout = MemLayout::NCx; break;
    }
  }
  if (shape.n > 1 && layout == MemLayout::Tensor) return MemLayout::NTensor;
  if (shape.n > 1 && layout == MemLayout::Cx) return MemLayout::NCx;
  return layout;
}

std::optional<sim::cgra::UnaryOp> unary_of(Operation* op) {
  using U = sim::cgra::UnaryOp;
  return TypeSwitch<Operation*, std::optional<U>>(op)
      .Case([](ReluOp) { return U::Relu; })
      .Case([](GeluOp) { return U::Gelu; })  // the tanh form; gelu_erf has no CGRA function
      .Case([](SiluOp) { return U::Silu; })
      .Case([](SigmoidOp) { return U::Sigmoid; })
      .Case([](TanhOp) { return U::Tanh; })
      .Case([](ExpOp) { return U::Exp; })
      .Case([](NegOp) { return U::Neg; })
      .Case([](AbsOp) { return U::Abs; })
      .Case([](SqrtOp) { return U::Sqrt; })
      .Case([](RsqrtOp) { return U::Rsqrt; })
      .Default([](Operation*) { return std::nullopt; });
}

std::optional<sim::cgra::ArithOp> arith_of(Operation* op) {
  using A = sim::cgra::ArithOp;
  return TypeSwitch<Operation*, std::optional<A>>(op)
      .Case([](AddOp) { return A::Add; })
      .Case([](SubOp) { return A::Sub; })
      .Case([](MulOp) { return A::Mul; })
      .Case([](DivOp) { return A::Div; })
      .Default([](Operation*) { return std::nullopt; });
}

// A dense tensor of four dimensions as the tile program holds a window (any order of them).
oplib::Tsr dense(oplib::SpmArena& arena, Format format, const Shape4& dims) {
  return arena.tensor(format, dims.n > 1 ? MemLayout::NTensor : MemLayout::Tensor, dims);
}

// The DMA engines' load of a slice from the start of a dense tensor in DDR (op_dma_load), and its
// store back (op_store_var).
oplib::OpCost dma_load_cost(const sim::ChipConfig& config, Format format, MemLayout layout, const Shape4& whole,
                            const Shape4& slice) {
  return oplib::cost_only_run(config, 0, [&](sim::Tile& tile, oplib::SpmArena& arena) {
    oplib::Tsr dst = arena.tensor(format, layout, slice);
    // The bytes the load reads must exist: the whole tensor up to the slice's last element.
    const int64_t last = ((((slice.n - 1) * whole.h + slice.h - 1) * whole.w + slice.w - 1) * whole.c + slice.c);
    const std::vector<uint8_t> zeros(size_t(last) * sim::format_bytes(format), 0);
    tile.chip().ddr().write(0, zeros.data(), zeros.size());
    oplib::GShape range = oplib::GShape::range(whole, {0, 0, 0, 0}, oplib::dims_of(slice));
    return oplib::op_dma_load(tile, range, 0, dst);
  });
}

oplib::OpCost dma_store_cost(const sim::ChipConfig& config, Format format, MemLayout layout, const Shape4& whole,
                             const Shape4& slice) {
  return oplib::cost_only_run(config, 0, [&](sim::Tile& tile, oplib::SpmArena& arena) {
    oplib::Tsr src = arena.tensor(format, layout, slice);
    src.shape.shape_whole = oplib::dims_of(whole);
    return oplib::op_store_var(tile, src, 0);
  });
}

// The op library's cost of the slice, or nullopt where it has no entry for the op or its types.
std::optional<oplib::OpCost> oplib_cost(Operation* op, const Slices& s, const sim::ChipConfig& config) {
  const ArrayRef<int64_t> out = s.out;
  const std::optional<Format> out_format =
      op->getNumResults() == 1 ? format_of(element_of(op->getResult(0))) : std::nullopt;
  auto unary = unary_of(op);
  if (unary && out_format) {
    const Shape4 shape = innermost_nhwc(out);
    return oplib::activation_cost(config, *unary, *out_format, layout_of(op, shape), shape);
  }
  auto arith = arith_of(op);
  if (arith && out_format) {
    const Shape4 shape = innermost_nhwc(out);
    return oplib::binary_cost(config, *arith, *out_format, layout_of(op, shape), shape);
  }
  return TypeSwitch<Operation*, std::optional<oplib::OpCost>>(op)
      .Case([&](MatMulOp mm) -> std::optional<oplib::OpCost> {
        // out [.., N, M] = rhs [.., N, K] . lhs [.., M, K]^T: one GEMM of N x M x K per batch, at
        // the weight's (lhs's) precision.
        const std::optional<DType> lhs = core_dtype(element_of(mm.getLhs()));
        const std::optional<Format> format = lhs == DType::Q8_0 ? Format::INT8 : format_of(element_of(mm.getLhs()));
        if (!format || *format == Format::INT32 || out.size() < 2) return std::nullopt;
        const int64_t n = out[out.size() - 2], k = s.operands[0].back();
        oplib::OpCost cost = oplib::gemm_cost(config, *format, n, out.back(), k);
        const std::optional<Format> activations = format_of(element_of(mm.getRhs()));
        if (*format != Format::INT8 && activations && *activations != *format) {
          // f32 activations rounded to the weights' type first (CGRA), into scratch of one batch.
          const oplib::OpCost rounding = oplib::cost_only_run(config, 0, [&](sim::Tile& tile, oplib::SpmArena& arena) {
            const oplib::Tsr from = arena.tensor(*activations, MemLayout::Tensor, Shape4{1, 1, n, k});
            const oplib::Tsr to = arena.tensor(*format, MemLayout::Tensor, Shape4{1, 1, n, k});
            return sim::cgra::execute(tile, sim::cgra::ConvertV{*activations, *format, from.addr, to.addr, n * k});
          });
          cost.cycles += rounding.cycles;
          cost.imm_bytes = uint64_t(n * k) * sim::format_bytes(*format);
        }
        cost.cycles *= uint64_t(product(out.drop_back(2)));
        return cost;
      })
      .Case([&](Conv2dOp conv) -> std::optional<oplib::OpCost> {
        // The tile program's convolution (tile_program_cnn.h) on an interior window: the input
        // slice with its halo, padding included, and no padding.
        const std::optional<Format> format = format_of(element_of(conv.getKernel()));
        if (!format || out.size() != 4) return std::nullopt;
        const Shape& kernel = s.operands[1];
        tile_program::Conv2dNchw param = convParams(conv);
        param.pad_h = param.pad_w = 0;
        const int64_t h = (out[2] - 1) * param.stride_h + param.dil_h * (kernel[2] - 1) + 1;
        const int64_t w = (out[3] - 1) * param.stride_w + param.dil_w * (kernel[3] - 1) + 1;
        const uint64_t imm = tile_program::conv2d_nchw_imm_bytes(*format, param, kernel[1], kernel[2], kernel[3],
                                                                 out[1], out[2], out[3]);
        return oplib::cost_only_run(config, imm, [&](sim::Tile& tile, oplib::SpmArena& arena) {
          const oplib::Tsr x = dense(arena, *format, {out[0], kernel[1], h, w});
          const oplib::Tsr k = dense(arena, *format, {kernel[0], kernel[1], kernel[2], kernel[3]});
          const oplib::Tsr y = dense(arena, Format::FP32, {out[0], out[1], out[2], out[3]});
          return tile_program::conv2d_nchw(tile, param, x, k, oplib::imm_tsr(arena.allocate(imm), imm), y);
        });
      })
      .Case([&](BatchNormInferenceOp bn) -> std::optional<oplib::OpCost> {
        // The tile program's batchnorm (tile_program_cnn.h): NCHW through NHWC, or channels
        // innermost.
        const int64_t rank = int64_t(out.size());
        const int64_t axis = int64_t(bn.getChannelAxis());
        const bool innermost = axis == rank - 1;
        if (!(rank == 4 && axis == 1) && !innermost) return std::nullopt;
        const Shape4 shape = innermost ? innermost_nhwc(out) : Shape4{out[0], out[1], out[2], out[3]};
        const int64_t c = innermost ? shape.c : shape.h;
        const uint64_t imm = tile_program::batchnorm_nchw_imm_bytes(innermost, oplib::dims_of(shape));
        return oplib::cost_only_run(config, imm, [&](sim::Tile& tile, oplib::SpmArena& arena) {
          const oplib::Tsr x = dense(arena, Format::FP32, shape);
          const oplib::Tsr y = dense(arena, Format::FP32, shape);
          std::vector<oplib::Tsr> v;
          for (int i = 0; i < 4; ++i) v.push_back(dense(arena, Format::FP32, {1, 1, 1, c}));
          return tile_program::batchnorm_nchw(tile, 1e-5f, innermost, x, v[0], v[1], v[2], v[3],
                                              oplib::imm_tsr(arena.allocate(imm), imm), y);
        });
      })
      .Case([&](Pool2dOp pool) -> std::optional<oplib::OpCost> {
        // The tile program's pooling (tile_program_cnn.h) on an interior window (no padding); the
        // scratch is that of a window at an edge, padded on one side.
        if (out.size() != 4) return std::nullopt;
        tile_program::Pool2dNchw param = poolParams(pool);
        const uint64_t imm = tile_program::pool2d_nchw_imm_bytes(Format::FP32, param, out[0], out[1], out[2], out[3]);
        param.pad_h = param.pad_w = 0;
        const int64_t h = (out[2] - 1) * param.stride_h + param.kh, w = (out[3] - 1) * param.stride_w + param.kw;
        return oplib::cost_only_run(config, imm, [&](sim::Tile& tile, oplib::SpmArena& arena) {
          const oplib::Tsr x = dense(arena, Format::FP32, {out[0], out[1], h, w});
          const oplib::Tsr y = dense(arena, Format::FP32, {out[0], out[1], out[2], out[3]});
          return tile_program::pool2d_nchw(tile, param, x, oplib::imm_tsr(arena.allocate(imm), imm), y);
        });
      })
      .Case([&](ScaleOp) -> std::optional<oplib::OpCost> {
        const Shape4 shape = innermost_nhwc(out);
        if (!out_format) return std::nullopt;
        return oplib::scale_cost(config, *out_format, layout_of(op, shape), shape);
      })
      .Case([&](RmsNormOp) -> std::optional<oplib::OpCost> {
        if (!out_format) return std::nullopt;
        return oplib::rmsnorm_cost(config, *out_format, innermost_nhwc(out), /*affine=*/false);
      })
      .Case([&](LayerNormOp) -> std::optional<oplib::OpCost> {
        if (!out_format) return std::nullopt;
        return oplib::layernorm_cost(config, *out_format, innermost_nhwc(out), /*affine=*/false);
      })
      .Case([&](SoftmaxOp softmax) -> std::optional<oplib::OpCost> {
        if (!out_format) return std::nullopt;
        return oplib::softmax_cost(config, *out_format, innermost_nhwc(out), bool(softmax.getMask()));
      })
      .Case([&](GluOp glu) -> std::optional<oplib::OpCost> {
        // With a gate: the activation of the input, then the product with the gate, as the tile
        // program runs it. The halves of one row (no gate) have no program: the formula.
        if (!glu.getGate() || !out_format) return std::nullopt;
        const Shape4 shape = innermost_nhwc(out);
        const MemLayout layout = layout_of(op, shape);
        const auto act = glu.getKind() == "swiglu" ? sim::cgra::UnaryOp::Silu : sim::cgra::UnaryOp::Gelu;
        oplib::OpCost cost = oplib::activation_cost(config, act, *out_format, layout, shape);
        cost.cycles += oplib::binary_cost(config, sim::cgra::ArithOp::Mul, *out_format, layout, shape).cycles;
        return cost;
      })
      .Case([&](RopeOp rope) -> std::optional<oplib::OpCost> {
        if (!out_format) return std::nullopt;
        const oplib::RopeParam param{rope.getNDims(), (rope.getMode() & 2) != 0};
        return oplib::rope_cost(config, param, *out_format, innermost_nhwc(out));
      })
      .Case([&](AttentionOp attention) -> std::optional<oplib::OpCost> {
        // The library has the decode form (one query row against the cache): one call per query
        // row and batch.
        const Shape& key = s.operands[1];
        const std::optional<Format> format = format_of(element_of(attention.getKey()));
        if (!format || element_of(attention.getKey()) != element_of(attention.getValue()) ||
            s.operands[2].back() != key.back()) {
          return std::nullopt;
        }
        oplib::OpCost cost = oplib::attention_decode_cost(config, *format, out[2], key[1], key[2], key[3]);
        cost.cycles *= uint64_t(out[0] * out[1]);
        return cost;
      })
      .Case([&](GatherOp gather) -> std::optional<oplib::OpCost> {
        const std::optional<Format> format = format_of(element_of(gather.getTable()));
        if (!format) return std::nullopt;
        const Shape& table = s.operands[0];
        const oplib::DdrTable ddr{0, *format, table[table.size() - 2], out.back()};
        return oplib::embedding_gather_cost(config, ddr, product(out.drop_back()));
      })
      .Case([&](TransposeOp transpose) -> std::optional<oplib::OpCost> {
        // The library transposes the two innermost dimensions.
        const ArrayRef<int64_t> perm = transpose.getPerm();
        const size_t r = perm.size();
        for (size_t d = 0; d + 2 < r; ++d) {
          if (perm[d] != int64_t(d)) return std::nullopt;
        }
        if (r < 2 || perm[r - 1] != int64_t(r - 2) || !out_format) return std::nullopt;
        const Shape& in = s.operands[0];
        return oplib::transpose_cost(config, *out_format,
                                     Shape4{product(ArrayRef(in).drop_back(2)), 1, in[r - 2], in[r - 1]});
      })
      .Case<LoadVarOp, StoreVarOp>([&](Operation* dma) -> std::optional<oplib::OpCost> {
        if (!out_format) return std::nullopt;
        const Shape4 whole = innermost_nhwc(dma->getOperand(0).getType().cast<ShapedType>().getShape());
        const Shape4 slice = innermost_nhwc(out);
        const MemLayout layout = layout_of(op, whole);
        return isa<LoadVarOp>(dma) ? dma_load_cost(config, *out_format, layout, whole, slice)
                                   : dma_store_cost(config, *out_format, layout, whole, slice);
      })
      .Default([](Operation*) { return std::nullopt; });
}

EngineKind engine_kind(Operation* op) {
  auto oplib_op = dyn_cast<OpLibInterface>(op);
  if (!oplib_op) return EngineKind::Dma;
  switch (oplib_op.queryOpAttr().engine) {
    case Engine::NE: return EngineKind::Matrix;
    case Engine::CT: return EngineKind::Vector;
    default: return EngineKind::Dma;
  }
}

// cost_model.h's formula on the core node of the slice; an op whose node cannot be built on
// slices (no core node, or one that reads the whole result type) moves its result's bytes.
OpCostQuery estimate(Operation* op, const Slices& s) {
  Context context(ContextOptions{.no_alloc = true});
  try {
    if (auto compute = dyn_cast<ComputeInterface>(op)) {
      std::vector<Tensor*> operands;
      for (size_t i = 0; i < s.operands.size(); ++i) {
        operands.push_back(
            core_tensor(context, RankedTensorType::get(s.operands[i], element_of(op->getOperand(unsigned(i))))));
      }
      if (Tensor* node = compute.buildCoreNode(context, operands)) {
        return {estimate_cycles(*node, engine_kind(op)), estimate_scratch_bytes(*node), CostSource::Estimate};
      }
    }
  } catch (const Error&) {
    // below
  }
  Tensor* out = core_tensor(context, RankedTensorType::get(s.out, element_of(op->getResult(0))));
  return {estimate_cycles(*out, EngineKind::Dma), 0, CostSource::Estimate};
}

// What the cost depends on: the op's name, attributes and types, the slice and the chip.
std::string signature(Operation* op, ArrayRef<int64_t> slice, const sim::ChipConfig& config) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << op->getName() << op->getAttrDictionary();
  for (Type type : op->getOperandTypes()) stream << ' ' << type;
  for (Type type : op->getResultTypes()) stream << " -> " << type;
  stream << " slice";
  for (int64_t s : slice) stream << ' ' << s;
  stream << ' ' << sim::to_json(config).dump();
  return stream.str();
}

std::string shape_text(ArrayRef<int64_t> shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += 'x';
    text += std::to_string(shape[i]);
  }
  return text;
}

}  // namespace

OpCostQuery queryOpCost(Operation* op, ArrayRef<int64_t> outputSliceShape, const sim::ChipConfig& config) {
  static std::mutex mutex;
  static std::map<std::string, OpCostQuery> memo;
  const std::string key = signature(op, outputSliceShape, config);
  {
    std::lock_guard lock(mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  auto sharding = dyn_cast<ShardingInterface>(op);
  const std::string what = op->getName().getStringRef().str() + " slice " + shape_text(outputSliceShape);
  if (!sharding || op->getNumResults() != 1) throw Error(what + ": the op has no one-result cost");
  Slices slices{Shape(outputSliceShape.begin(), outputSliceShape.end()), {}};
  SliceParam param{slices.out};
  for (const SliceParam& operand : sharding.temporalSliceShape(param)) slices.operands.push_back(operand.shape);
  if (slices.operands.size() != op->getNumOperands()) throw Error(what + ": the op cannot be cut to this slice");
  OpCostQuery query;
  std::optional<oplib::OpCost> cost;
  try {
    cost = oplib_cost(op, slices, config);
  } catch (const Error&) {
    cost.reset();  // a slice the library refuses (larger than an SPM, a layout it does not take)
  }
  query = cost ? OpCostQuery{cost->cycles, cost->imm_bytes, CostSource::OpLib} : estimate(op, slices);
  // The generated programs of these call more than the library op (a conversion, rope's cos /
  // sin tables, attention's query rows): the plan reserves the scratch their call needs.
  if (isa<GatherOp, SetRowsOp, RopeOp, AttentionOp>(op) && codegenSupports(op, nullptr)) {
    std::array<int64_t, 4> out4{1, 1, 1, 1};
    const size_t rank = std::min<size_t>(slices.out.size(), 4);
    for (size_t i = 0; i < rank; ++i) out4[4 - rank + i] = slices.out[slices.out.size() - rank + i];
    query.immBytes = std::max(query.immBytes, codegenImmBytes(op, out4));
  }
  std::lock_guard lock(mutex);
  memo.emplace(key, query);
  return query;
}

OpCostQuery queryOpCost(Operation* op, const sim::ChipConfig& config) {
  if (op->getNumResults() != 1 || !op->getResult(0).getType().isa<RankedTensorType>()) {
    throw Error(op->getName().getStringRef().str() + ": the op has no one-result cost");
  }
  return queryOpCost(op, op->getResult(0).getType().cast<RankedTensorType>().getShape(), config);
}

}  // namespace tg::compiler::tx8be
