// The tx8be ops: each compute op's core node (ComputeInterface::buildCoreNode), and the
// verifiers and computations of the ops the core has no node for.
#include <cstring>

#include <mlir/IR/Builders.h>
#include <mlir/IR/OpImplementation.h>

#include "core_bridge.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/constant_data.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/ops.h"

using namespace mlir;

#define GET_OP_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beOps.cpp.inc"

namespace tg::compiler::tx8be {

namespace {

using Operands = llvm::ArrayRef<Tensor*>;

int64_t rank_of(Value value) { return value.getType().cast<RankedTensorType>().getRank(); }

// The core dimension of axis `axis` (outermost first) of a rank-`rank` tensor.
int core_axis(int64_t axis, int64_t rank, const char* op, const char* attribute) {
  if (axis < 0 || axis >= rank) {
    throw Error(std::string(op) + ": " + attribute + " " + std::to_string(axis) + " is outside the " +
                std::to_string(rank) + " dimensions");
  }
  return int(rank - 1 - axis);
}

// An [H, W] pair attribute as (W, H), the core's order.
std::pair<int32_t, int32_t> width_height(ArrayRef<int64_t> pair, const char* op, const char* attribute) {
  if (pair.size() != 2) {
    throw Error(std::string(op) + ": " + attribute + " must hold two values [H, W], got " +
                std::to_string(pair.size()));
  }
  return {int32_t(pair[1]), int32_t(pair[0])};
}

std::array<int64_t, kMaxDims> result_ne(Value result) {
  return *core_ne(result.getType().cast<RankedTensorType>().getShape());
}

Tensor* optional_operand(Operands operands, size_t index) {
  return operands.size() > index ? operands[index] : nullptr;
}

}  // namespace

//===----------------------------------------------------------------------===//
// Compute ops with a core node
//===----------------------------------------------------------------------===//

Tensor* MatMulOp::buildCoreNode(Context& ctx, Operands operands) { return tg::mul_mat(ctx, operands[0], operands[1]); }

Tensor* Conv2dOp::buildCoreNode(Context& ctx, Operands operands) {
  Conv2dParams params;
  std::tie(params.s0, params.s1) = width_height(getStrides(), "conv2d", "strides");
  std::tie(params.p0, params.p1) = width_height(getPads(), "conv2d", "pads");
  std::tie(params.d0, params.d1) = width_height(getDilations(), "conv2d", "dilations");
  if (rank_of(getInput()) != 4 || rank_of(getKernel()) != 4) {
    throw Error("conv2d: input and kernel must be 4-D (NCHW and OIHW)");
  }
  return tg::conv_2d(ctx, operands[1], operands[0], params);
}

Tensor* BatchNormInferenceOp::buildCoreNode(Context& ctx, Operands operands) {
  const int axis = core_axis(int64_t(getChannelAxis()), rank_of(getInput()), "batchnorm_inference", "channel_axis");
  return tg::batch_norm(ctx, operands[0], operands[3], operands[4], operands[1], operands[2],
                        getEpsilon().convertToFloat(), axis);
}

Tensor* Pool2dOp::buildCoreNode(Context& ctx, Operands operands) {
  Pool2dParams params;
  if (getMode() == "max") {
    params.op = PoolOp::MAX;
  } else if (getMode() == "avg") {
    params.op = PoolOp::AVG;
  } else {
    throw Error("pool2d: mode must be \"max\" or \"avg\", got \"" + getMode().str() + "\"");
  }
  std::tie(params.k0, params.k1) = width_height(getKernel(), "pool2d", "kernel");
  std::tie(params.s0, params.s1) = width_height(getStrides(), "pool2d", "strides");
  std::tie(params.p0, params.p1) = width_height(getPads(), "pool2d", "pads");
  return tg::pool_2d(ctx, operands[0], params);
}

Tensor* AddOp::buildCoreNode(Context& ctx, Operands operands) { return tg::add(ctx, operands[0], operands[1]); }
Tensor* SubOp::buildCoreNode(Context& ctx, Operands operands) { return tg::sub(ctx, operands[0], operands[1]); }
Tensor* MulOp::buildCoreNode(Context& ctx, Operands operands) { return tg::mul(ctx, operands[0], operands[1]); }
Tensor* DivOp::buildCoreNode(Context& ctx, Operands operands) { return tg::div(ctx, operands[0], operands[1]); }

Tensor* ScaleOp::buildCoreNode(Context& ctx, Operands operands) {
  return tg::scale(ctx, operands[0], getScale().convertToFloat(), getBias().convertToFloat());
}

Tensor* ReluOp::buildCoreNode(Context& ctx, Operands operands) { return tg::unary(ctx, operands[0], UnaryOp::RELU); }
Tensor* GeluOp::buildCoreNode(Context& ctx, Operands operands) { return tg::unary(ctx, operands[0], UnaryOp::GELU); }
Tensor* GeluErfOp::buildCoreNode(Context& ctx, Operands operands) {
  return tg::unary(ctx, operands[0], UnaryOp::GELU_ERF);
}
Tensor* SiluOp::buildCoreNode(Context& ctx, Operands operands) { return tg::unary(ctx, operands[0], UnaryOp::SILU); }
Tensor* SigmoidOp::buildCoreNode(Context& ctx, Operands operands) {
  return tg::unary(ctx, operands[0], UnaryOp::SIGMOID);
}
Tensor* TanhOp::buildCoreNode(Context& ctx, Operands operands) { return tg::unary(ctx, operands[0], UnaryOp::TANH); }
Tensor* ExpOp::buildCoreNode(Context& ctx, Operands operands) { return tg::unary(ctx, operands[0], UnaryOp::EXP); }
Tensor* NegOp::buildCoreNode(Context& ctx, Operands operands) { return tg::unary(ctx, operands[0], UnaryOp::NEG); }
Tensor* AbsOp::buildCoreNode(Context& ctx, Operands operands) { return tg::unary(ctx, operands[0], UnaryOp::ABS); }
Tensor* SqrtOp::buildCoreNode(Context& ctx, Operands operands) { return tg::unary(ctx, operands[0], UnaryOp::SQRT); }
Tensor* RsqrtOp::buildCoreNode(Context& ctx, Operands operands) { return tg::unary(ctx, operands[0], UnaryOp::RSQRT); }

Tensor* GluOp::buildCoreNode(Context& ctx, Operands operands) {
  ::tg::GluOp kind;
  if (getKind() == "swiglu") {
    kind = ::tg::GluOp::SWIGLU;
  } else if (getKind() == "geglu") {
    kind = ::tg::GluOp::GEGLU;
  } else {
    throw Error("glu: kind must be \"swiglu\" or \"geglu\", got \"" + getKind().str() + "\"");
  }
  if (Tensor* gate = optional_operand(operands, 1)) {
    if (getSwapped()) throw Error("glu: swapped applies only without a gate operand");
    return tg::glu_split(ctx, operands[0], gate, kind);
  }
  return tg::glu(ctx, operands[0], kind, getSwapped());
}

Tensor* RmsNormOp::buildCoreNode(Context& ctx, Operands operands) {
  return tg::rms_norm(ctx, operands[0], getEpsilon().convertToFloat());
}

Tensor* LayerNormOp::buildCoreNode(Context& ctx, Operands operands) {
  return tg::norm(ctx, operands[0], getEpsilon().convertToFloat());
}

Tensor* SoftmaxOp::buildCoreNode(Context& ctx, Operands operands) {
  return tg::soft_max(ctx, operands[0], optional_operand(operands, 1), getScale().convertToFloat(),
                      getMaxBias().convertToFloat());
}

Tensor* RopeOp::buildCoreNode(Context& ctx, Operands operands) {
  RopeParams params;
  params.n_dims = int32_t(getNDims());
  const int64_t mode = int32_t(getMode());
  if (mode != int64_t(RopeMode::NORMAL) && mode != int64_t(RopeMode::NEOX)) {
    throw Error("rope: mode must be 0 (normal) or 2 (neox), got " + std::to_string(mode));
  }
  params.mode = RopeMode(mode);
  params.n_ctx_orig = int32_t(getNCtxOrig());
  params.freq_base = getFreqBase().convertToFloat();
  params.freq_scale = getFreqScale().convertToFloat();
  params.ext_factor = getExtFactor().convertToFloat();
  params.attn_factor = getAttnFactor().convertToFloat();
  params.beta_fast = getBetaFast().convertToFloat();
  params.beta_slow = getBetaSlow().convertToFloat();
  return tg::rope(ctx, operands[0], operands[1], params, optional_operand(operands, 2));
}

Tensor* AttentionOp::buildCoreNode(Context& ctx, Operands operands) {
  return tg::flash_attn_ext(ctx, operands[0], operands[1], operands[2], optional_operand(operands, 3),
                            getScale().convertToFloat(), getMaxBias().convertToFloat(), getSoftcap().convertToFloat());
}

Tensor* SumRowsOp::buildCoreNode(Context& ctx, Operands operands) { return tg::sum_rows(ctx, operands[0]); }
Tensor* ArgMaxOp::buildCoreNode(Context& ctx, Operands operands) { return tg::argmax(ctx, operands[0]); }

Tensor* ReshapeOp::buildCoreNode(Context& ctx, Operands operands) {
  const auto ne = result_ne(getOutput());
  return tg::reshape(ctx, operands[0], {ne[0], ne[1], ne[2], ne[3]});
}

Tensor* TransposeOp::buildCoreNode(Context& ctx, Operands operands) {
  const ArrayRef<int64_t> perm = getPerm();
  const int64_t rank = rank_of(getInput());
  if (int64_t(perm.size()) != rank) {
    throw Error("transpose: perm has " + std::to_string(perm.size()) + " entries for " + std::to_string(rank) +
                " dimensions");
  }
  int axes[kMaxDims] = {0, 1, 2, 3};
  bool seen[kMaxDims] = {};
  for (int64_t j = 0; j < rank; ++j) {
    const int from = core_axis(perm[size_t(j)], rank, "transpose", "perm entry");
    if (seen[from]) throw Error("transpose: perm repeats dimension " + std::to_string(perm[size_t(j)]));
    seen[from] = true;
    axes[from] = int(rank - 1 - j);
  }
  return tg::permute(ctx, operands[0], axes[0], axes[1], axes[2], axes[3]);
}

LogicalResult ReshapeOp::inferLayout() { return failure(); }
LogicalResult ViewOp::inferLayout() { return failure(); }

// NCHW through perm [0, 2, 3, 1] is NHWC: output dimension j takes the letter of input dimension
// perm[j]. Tensor / NTensor (no letters per dimension) pass through.
LogicalResult TransposeOp::inferLayout() {
  Operation* source = getInput().getDefiningOp();
  auto layout_str = source ? source->getAttrOfType<StringAttr>("layout_str") : StringAttr{};
  // The source's result layout (the last of a per-operand string).
  const std::string layout =
      layout_str ? layout_component(layout_str.getValue(), source->getNumOperands(), source->getNumOperands()) : "";
  if (layout.empty() || layout == "Unknown") return failure();
  std::string permuted = layout;
  const ArrayRef<int64_t> perm = getPerm();
  if (permuted.size() == perm.size() && permuted != "Tensor" && permuted != "NTensor") {
    for (size_t j = 0; j < perm.size(); ++j) permuted[j] = layout[size_t(perm[j])];
  }
  (*this)->setAttr("layout_str", StringAttr::get(getContext(), permuted));
  return success();
}

Tensor* ViewOp::buildCoreNode(Context& ctx, Operands operands) {
  Tensor* input = operands[0];
  if (is_quantized(input->type)) throw Error("view: block-quantized tensors cannot be viewed element-wise");
  const ArrayRef<int64_t> strides = getStrides();
  const int64_t rank = getOutput().getType().cast<RankedTensorType>().getRank();
  if (int64_t(strides.size()) != rank) {
    throw Error("view: strides has " + std::to_string(strides.size()) + " entries for a " + std::to_string(rank) +
                "-D result");
  }
  if (rank > 0 && strides.back() != 1) throw Error("view: the innermost stride must be 1");
  if (getOffsetAttr().getInt() < 0) throw Error("view: the offset cannot be negative");
  for (int64_t s : strides) {
    if (s < 0) throw Error("view: strides cannot be negative");
  }
  const size_t element = input->nb[0];
  const auto ne = result_ne(getOutput());
  size_t nb[kMaxDims];
  for (int i = 0; i < kMaxDims; ++i) {
    nb[i] = i < rank ? size_t(strides[size_t(rank - 1 - i)]) * element : nb[i - 1] * size_t(ne[i - 1]);
  }
  return tg::view_4d(ctx, input, ne[0], ne[1], ne[2], ne[3], nb[1], nb[2], nb[3],
                     size_t(getOffsetAttr().getInt()) * element);
}

Tensor* ConcatOp::buildCoreNode(Context& ctx, Operands operands) {
  if (operands.empty()) throw Error("concat: needs at least one input");
  const int dim = core_axis(getDimAttr().getInt(), rank_of(getInputs()[0]), "concat", "dim");
  Tensor* result = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) result = tg::concat(ctx, result, operands[i], dim);
  return operands.size() == 1 ? tg::cont(ctx, result) : result;
}

Tensor* GatherOp::buildCoreNode(Context& ctx, Operands operands) { return tg::get_rows(ctx, operands[0], operands[1]); }

Tensor* SetRowsOp::buildCoreNode(Context& ctx, Operands operands) {
  return tg::set_rows(ctx, operands[0], operands[1], operands[2]);
}

Tensor* ConvertOp::buildCoreNode(Context& ctx, Operands operands) {
  const auto ne = result_ne(getOutput());
  const std::optional<DType> type = core_dtype(getOutput().getType().cast<RankedTensorType>().getElementType());
  return tg::cpy(ctx, operands[0], ctx.new_tensor(*type, std::span<const int64_t>(ne.data(), ne.size())));
}

//===----------------------------------------------------------------------===//
// broadcast: the core repeats operands inside binary ops only, so it is computed here.
//===----------------------------------------------------------------------===//

Tensor* BroadcastOp::buildCoreNode(Context&, Operands) { return nullptr; }

LogicalResult BroadcastOp::verify() {
  auto in = getInput().getType().cast<RankedTensorType>();
  auto out = getOutput().getType().cast<RankedTensorType>();
  if (in.getElementType() != out.getElementType()) return emitOpError("changes the element type");
  const auto in_ne = core_ne(in.getShape());
  const auto out_ne = core_ne(out.getShape());
  if (!in_ne || !out_ne) return emitOpError("supports up to 4 static dimensions");
  for (int i = 0; i < kMaxDims; ++i) {
    if ((*in_ne)[size_t(i)] == 0 ? (*out_ne)[size_t(i)] != 0 : (*out_ne)[size_t(i)] % (*in_ne)[size_t(i)] != 0) {
      return emitOpError() << "cannot repeat " << in << " to " << out
                           << ": each result dimension must be a multiple of the input's";
    }
  }
  if (core_dtype(in.getElementType()) && is_quantized(*core_dtype(in.getElementType()))) {
    return emitOpError("cannot repeat a block-quantized tensor");
  }
  return success();
}

LogicalResult BroadcastOp::inferShapes(DynamicShapeParam&) { return success(); }
LogicalResult BroadcastOp::inferLayout() { return failure(); }

LogicalResult BroadcastOp::compute(ComputeParam& param) {
  const HostTensor& in = *param.inputs[0];
  auto out_type = getOutput().getType().cast<RankedTensorType>();
  param.output =
      HostTensor::zeros(in.type(), std::vector<int64_t>(out_type.getShape().begin(), out_type.getShape().end()));
  const auto in_ne = in.ne();
  const auto out_ne = param.output.ne();
  const size_t element = dtype_traits(in.type()).type_size;
  const auto* src = static_cast<const std::byte*>(in.data());
  auto* dst = static_cast<std::byte*>(param.output.mutable_data());
  size_t o = 0;
  for (int64_t i3 = 0; i3 < out_ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < out_ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < out_ne[1]; ++i1) {
        for (int64_t i0 = 0; i0 < out_ne[0]; ++i0, ++o) {
          const int64_t s =
              (((i3 % in_ne[3]) * in_ne[2] + i2 % in_ne[2]) * in_ne[1] + i1 % in_ne[1]) * in_ne[0] + i0 % in_ne[0];
          std::memcpy(dst + o * element, src + size_t(s) * element, element);
        }
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// constant and load_const
//===----------------------------------------------------------------------===//

namespace {

LogicalResult verify_constant_value(Operation* op, Attribute value, RankedTensorType type) {
  if (auto dense = value.dyn_cast<DenseElementsAttr>()) {
    if (dense.getType() != type) {
      return op->emitOpError() << "value of type " << dense.getType() << " does not match the result type " << type;
    }
    return success();
  }
  if (auto external = value.dyn_cast<ExternalDataAttr>()) {
    const std::optional<DType> dtype = core_dtype(type.getElementType());
    if (!dtype) return op->emitOpError() << "result type " << type << " has no core dtype";
    try {
      const size_t expected = dense_bytes(*dtype, type.getShape());
      if (external.getBytes() != expected) {
        return op->emitOpError() << "external data '" << external.getKey() << "' holds " << external.getBytes()
                                 << " bytes but " << type << " needs " << expected;
      }
    } catch (const Error& e) {
      return op->emitOpError() << e.what();
    }
    return success();
  }
  return op->emitOpError() << "value must be dense elements or #tx8be.external data";
}

LogicalResult compute_constant(Operation* op, Attribute value, ComputeParam& param) {
  auto type = op->getResult(0).getType().cast<RankedTensorType>();
  const DType dtype = *core_dtype(type.getElementType());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  if (auto external = value.dyn_cast<ExternalDataAttr>()) {
    if (!param.constants) {
      return op->emitOpError() << "refers to external data '" << external.getKey() << "' but none was given";
    }
    try {
      const HostTensor& data =
          param.constants->get(external.getKey().str(), external.getBytes(), external.getFingerprint());
      param.output = HostTensor::borrow(dtype, shape, data.data());
    } catch (const Error& e) {
      return op->emitOpError() << e.what();
    }
    return success();
  }
  auto dense = value.cast<DenseElementsAttr>();
  param.output = HostTensor::zeros(dtype, shape);
  const ArrayRef<char> raw = dense.getRawData();
  auto* out = static_cast<char*>(param.output.mutable_data());
  if (dense.isSplat()) {
    const size_t element = dtype_traits(dtype).type_size;
    for (int64_t i = 0; i < param.output.elements(); ++i) std::memcpy(out + size_t(i) * element, raw.data(), element);
  } else {
    std::memcpy(out, raw.data(), param.output.nbytes());
  }
  return success();
}

}  // namespace

Tensor* ConstantOp::buildCoreNode(Context&, Operands) { return nullptr; }
LogicalResult ConstantOp::verify() {
  return verify_constant_value(*this, getValue(), getOutput().getType().cast<RankedTensorType>());
}
LogicalResult ConstantOp::compute(ComputeParam& param) { return compute_constant(*this, getValue(), param); }
LogicalResult ConstantOp::inferShapes(DynamicShapeParam&) { return success(); }
LogicalResult ConstantOp::inferLayout() { return success(getLayoutStr() != "Unknown"); }

Tensor* LoadConstOp::buildCoreNode(Context&, Operands) { return nullptr; }
LogicalResult LoadConstOp::verify() {
  if (getConstMapIdAttr().getInt() < 0) {
    return emitOpError() << "const_map_id must not be negative, got " << getConstMapIdAttr().getInt();
  }
  return verify_constant_value(*this, getValue(), getOutput().getType().cast<RankedTensorType>());
}
LogicalResult LoadConstOp::compute(ComputeParam& param) { return compute_constant(*this, getValue(), param); }
LogicalResult LoadConstOp::inferShapes(DynamicShapeParam&) { return success(); }
LogicalResult LoadConstOp::inferLayout() { return success(getLayoutStr() != "Unknown"); }

//===----------------------------------------------------------------------===//
// channel_norm, load_var, store_var: the value passes through unchanged.
//===----------------------------------------------------------------------===//

namespace {

LogicalResult verify_identity(Operation* op) {
  if (op->getOperand(0).getType() != op->getResult(0).getType()) {
    return op->emitOpError() << "moves data without changing it: the result type " << op->getResult(0).getType()
                             << " must be the input type " << op->getOperand(0).getType();
  }
  return success();
}

LogicalResult compute_identity(ComputeParam& param) {
  param.output = *param.inputs[0];  // shares the bytes: values are immutable
  return success();
}

}  // namespace

Tensor* ChannelNormOp::buildCoreNode(Context&, Operands) { return nullptr; }
LogicalResult ChannelNormOp::verify() { return verify_identity(*this); }
LogicalResult ChannelNormOp::compute(ComputeParam& param) { return compute_identity(param); }
Tensor* LoadVarOp::buildCoreNode(Context&, Operands) { return nullptr; }
LogicalResult LoadVarOp::verify() { return verify_identity(*this); }
LogicalResult LoadVarOp::compute(ComputeParam& param) { return compute_identity(param); }
Tensor* StoreVarOp::buildCoreNode(Context&, Operands) { return nullptr; }
LogicalResult StoreVarOp::verify() { return verify_identity(*this); }
LogicalResult StoreVarOp::compute(ComputeParam& param) { return compute_identity(param); }

//===----------------------------------------------------------------------===//
// group and subgraph
//===----------------------------------------------------------------------===//

namespace {

void build_region_op(OperationState& state, TypeRange result_types, ValueRange inputs) {
  state.addOperands(inputs);
  state.addTypes(result_types);
  Region* body = state.addRegion();
  Block* block = new Block();
  body->push_back(block);
  for (Value input : inputs) block->addArgument(input.getType(), input.getLoc());
}

LogicalResult verify_region_op(Operation* op) {
  Block& block = op->getRegion(0).front();
  if (block.getNumArguments() != op->getNumOperands()) {
    return op->emitOpError() << "body has " << block.getNumArguments() << " arguments for " << op->getNumOperands()
                             << " inputs";
  }
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    if (block.getArgument(i).getType() != op->getOperand(i).getType()) {
      return op->emitOpError() << "body argument " << i << " has type " << block.getArgument(i).getType()
                               << " but input " << i << " is " << op->getOperand(i).getType();
    }
  }
  Operation* terminator = block.getTerminator();
  if (terminator->getOperandTypes() != op->getResultTypes()) {
    return op->emitOpError() << "yields " << terminator->getNumOperands() << " values whose types do not match its "
                             << op->getNumResults() << " results";
  }
  return success();
}

}  // namespace

void GroupOp::build(OpBuilder&, OperationState& state, TypeRange resultTypes, ValueRange inputs) {
  build_region_op(state, resultTypes, inputs);
}
YieldOp GroupOp::getYield() { return cast<YieldOp>(getBodyBlock().getTerminator()); }
LogicalResult GroupOp::verify() {
  if (auto tag = getGroupTagAttr(); tag && (tag.getInt() < 0 || tag.getInt() > 2)) {
    return emitOpError() << "group_tag must be 0 (split), 1 (split N/H/T only) or 2 (not split), got " << tag.getInt();
  }
  // Default-valued attributes are not stored when absent: read them through the typed getter.
  if (int32_t(getSpStageNum()) < 1) {
    return emitOpError() << "sp_stage_num must be at least 1, got " << int32_t(getSpStageNum());
  }
  if (auto sharding = getShardingAttr()) {
    for (int32_t parts : sharding.asArrayRef()) {
      if (parts < 1) return emitOpError() << "sharding parts must be at least 1, got " << parts;
    }
  }
  if (auto slice = getSliceAttr()) {
    if (auto sharding = getShardingAttr(); sharding && sharding.size() != slice.size()) {
      return emitOpError() << "slice has " << slice.size() << " dimensions but sharding has " << sharding.size();
    }
    for (int64_t extent : slice.asArrayRef()) {
      if (extent < 1) return emitOpError() << "slice extents must be at least 1, got " << extent;
    }
  }
  if (auto steps = getStepsAttr(); steps && steps.getInt() < 1) {
    return emitOpError() << "steps must be at least 1, got " << steps.getInt();
  }
  if (auto pipeline = getPipelineAttr()) {
    const int64_t ops = int64_t(getBodyBlock().getOperations().size());
    for (auto cycleAttr : pipeline.getAsRange<DenseI64ArrayAttr>()) {
      ArrayRef<int64_t> cycle = cycleAttr.asArrayRef();
      if (cycle.size() % 2 != 0) return emitOpError() << "a pipeline cycle holds (op index, step) pairs";
      for (size_t i = 0; i < cycle.size(); i += 2) {
        if (cycle[i] < 0 || cycle[i] >= ops || cycle[i + 1] < 0) {
          return emitOpError() << "pipeline item (" << cycle[i] << ", " << cycle[i + 1]
                               << ") names no op of the body or a negative step";
        }
      }
    }
  }
  return verify_region_op(*this);
}

void SubgraphOp::build(OpBuilder&, OperationState& state, TypeRange resultTypes, ValueRange inputs) {
  build_region_op(state, resultTypes, inputs);
}
YieldOp SubgraphOp::getYield() { return cast<YieldOp>(getBodyBlock().getTerminator()); }
LogicalResult SubgraphOp::verify() { return verify_region_op(*this); }

}  // namespace tg::compiler::tx8be
