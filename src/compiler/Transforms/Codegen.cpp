// tx8-codegen (Passes.td): the tile program of each planned group, C++ over the sim's op library
// in the shape of the TX8 toolchain's generated per-tile main.c (load -> compute -> store until
// the tile's range is done), attached to the group as its tx8be.source attribute (and written to
// --codegen-dir).
//
// A program is data for its steps: the window of every value for each (tile, step), computed
// here from the plan (the primary result's windows, the others' through backWindow), and the
// pipeline's (op, step) order; the code is one function per op of the body, which a loop over
// the pipeline calls. Within a pipeline cycle the items are issued by step: the op library's
// compute ops wait for every transfer the tile issued before them, so a
// load of step s + 1 issued after the compute of step s still overlaps it on the schedule, while
// issued before, it would delay it. Stores go last in a cycle for the same reason.
#include "Codegen.h"
#include "DdrMoves.h"
#include "GroupTags.h"
#include "PanelMatmul.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/FileSystem.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinAttributes.h>
#include <mlir/IR/BuiltinTypes.h>
#include <mlir/Pass/Pass.h>

#include "TileMesh.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/SliceWindows.h"
#include "tilegraph/compiler/tile_program.h"
#include "tilegraph/compiler/tile_program_cnn.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/dtype.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/core/rope.h"
#include "tilegraph/sim/layout.h"
#include "tilegraph/sim/oplib/elementwise.h"
#include "tilegraph/sim/oplib/norm.h"
#include "tilegraph/sim/oplib/softmax.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

using Dims = std::array<int64_t, 4>;

struct Box {
  std::vector<int64_t> start, size;
  bool operator==(const Box& other) const { return start == other.start && size == other.size; }
};

Box unite(const Box& a, const Box& b) {
  Box out = a;
  for (size_t d = 0; d < a.start.size(); ++d) {
    const int64_t lo = std::min(a.start[d], b.start[d]);
    const int64_t hi = std::max(a.start[d] + a.size[d], b.start[d] + b.size[d]);
    out.start[d] = lo;
    out.size[d] = hi - lo;
  }
  return out;
}

mlir::RankedTensorType tensorType(mlir::Value value) { return value.getType().cast<mlir::RankedTensorType>(); }

Box wholeBox(mlir::Value value) {
  auto type = tensorType(value);
  return Box{std::vector<int64_t>(size_t(type.getRank()), 0), std::vector<int64_t>(type.getShape())};
}

// Shapes outermost first, as N, H, W, C (leading ones for a lower rank).
Dims dims4(llvm::ArrayRef<int64_t> shape, int64_t fill) {
  Dims dims{fill, fill, fill, fill};
  const size_t rank = shape.size();
  for (size_t i = 0; i < rank && i < 4; ++i) dims[4 - rank + i] = shape[i];
  return dims;
}

// A q8_0 tensor (GGUF's blocks of 32 int8 with an f16 scale) sits in DDR and SPM as its blocks'
// bytes: an int8 tensor whose rows are K / 32 blocks of 34 bytes.
bool isQ8_0(mlir::Type type) {
  auto quant = type.cast<mlir::ShapedType>().getElementType().dyn_cast<BlockQuantType>();
  return quant && quant.getName() == "q8_0";
}

int64_t q8_0Row(int64_t k) { return k / kQ8_0BlockSize * int64_t(sizeof(BlockQ8_0)); }

std::string formatCode(sim::Format format) {
  switch (format) {
    case sim::Format::FP32: return "sim::Format::FP32";
    case sim::Format::FP16: return "sim::Format::FP16";
    case sim::Format::BF16: return "sim::Format::BF16";
    case sim::Format::TF32: return "sim::Format::TF32";
    case sim::Format::INT8: return "sim::Format::INT8";
    case sim::Format::INT32: return "sim::Format::INT32";
  }
  return "";
}

// Every SPM buffer is dense (Tensor, NTensor for a batch): the ops generated so far (element-wise,
// row, GEMM) take dense operands, and a DDR tensor is dense.
sim::MemLayout denseLayout(const Dims& whole) {
  return whole[0] > 1 ? sim::MemLayout::NTensor : sim::MemLayout::Tensor;
}

std::string layoutCode(sim::MemLayout layout) {
  return layout == sim::MemLayout::NTensor ? "sim::MemLayout::NTensor" : "sim::MemLayout::Tensor";
}

std::string dimsCode(const Dims& dims) {
  return "{" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + ", " + std::to_string(dims[2]) + ", " +
         std::to_string(dims[3]) + "}";
}

std::string hex(uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

std::string_view mnemonicOf(mlir::Operation* op) {
  llvm::StringRef name = op->getName().getStringRef();
  return std::string_view(name.data(), name.size()).substr(name.find('.') + 1);
}

const std::map<std::string_view, const char*>& unaryOps() {
  static const std::map<std::string_view, const char*> ops{
      {"relu", "Relu"}, {"gelu", "Gelu"}, {"silu", "Silu"}, {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"},
      {"exp", "Exp"},   {"neg", "Neg"},   {"abs", "Abs"},   {"sqrt", "Sqrt"},       {"rsqrt", "Rsqrt"}};
  return ops;
}

const std::map<std::string_view, const char*>& binaryOps() {
  static const std::map<std::string_view, const char*> ops{
      {"add", "Add"}, {"sub", "Sub"}, {"mul", "Mul"}, {"div", "Div"}};
  return ops;
}

// "[1, 1, 4, 8]", for diagnostics.
std::string listString(llvm::ArrayRef<int64_t> values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(values[i]);
  }
  return text + "]";
}

// Appends `item` to a `separator`-separated list.
void join(std::string& list, const char* separator, const std::string& item) {
  if (!list.empty()) list += separator;
  list += item;
}

bool isFloat(sim::Format format) { return format != sim::Format::INT32 && format != sim::Format::INT8; }

// A value the op reads in DDR: a group input, or a constant left in DDR (bypass_codegen).
bool isDdrInput(mlir::Value value) {
  if (value.isa<mlir::BlockArgument>()) return true;
  auto constant = value.getDefiningOp<LoadConstOp>();
  return constant && constant.getBypassCodegen().value_or(false);
}

// The cos / sin formula of a rope op: its attributes decoded as the core decodes a ROPE node.
RopeYarn ropeYarn(RopeOp rope) {
  Context context(ContextOptions{.no_alloc = true});
  const int64_t head_dim = tensorType(rope.getInput()).getShape().back();
  RopeParams params;
  params.n_dims = int32_t(rope.getNDims());
  params.mode = RopeMode(rope.getMode());
  params.n_ctx_orig = int32_t(rope.getNCtxOrig());
  params.freq_base = rope.getFreqBase().convertToFloat();
  params.freq_scale = rope.getFreqScale().convertToFloat();
  params.ext_factor = rope.getExtFactor().convertToFloat();
  params.attn_factor = rope.getAttnFactor().convertToFloat();
  params.beta_fast = rope.getBetaFast().convertToFloat();
  params.beta_slow = rope.getBetaSlow().convertToFloat();
  Tensor* x = context.new_tensor(DType::F32, {head_dim, 1, 1});
  Tensor* positions = context.new_tensor(DType::I32, {1});
  return RopeYarn::from_node(*tg::rope(context, x, positions, params));
}

// A batchnorm whose channels are innermost ([.., C]) rather than NCHW's C.
bool channelsInnermost(BatchNormInferenceOp bn) {
  return int64_t(bn.getChannelAxis()) == tensorType(bn.getInput()).getRank() - 1;
}

}  // namespace

std::optional<sim::Format> formatOf(mlir::Type type) {
  mlir::Type element = type.cast<mlir::ShapedType>().getElementType();
  if (element.isF32()) return sim::Format::FP32;
  if (element.isF16()) return sim::Format::FP16;
  if (element.isBF16()) return sim::Format::BF16;
  if (element.isInteger(32)) return sim::Format::INT32;
  if (isQ8_0(type)) return sim::Format::INT8;  // its blocks' bytes (q8_0Row)
  return std::nullopt;
}

bool codegenSupports(mlir::Operation* op, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  const std::string_view name = mnemonicOf(op);
  llvm::SmallVector<mlir::Value> values(op->getOperands());
  values.append(op->result_begin(), op->result_end());
  for (mlir::Value value : values) {
    if (!value.getType().isa<mlir::RankedTensorType>()) return fail("an operand is not a ranked tensor");
    if (tensorType(value).getRank() > 4) return fail("a value has more than four dimensions");
    if (!formatOf(value.getType())) {
      std::string type;
      llvm::raw_string_ostream os(type);
      os << tensorType(value).getElementType();
      return fail("element type " + os.str() + " has no sim format (f32, f16, bf16, i32)");
    }
  }
  const bool readsQ8_0 = name == "matmul" && isQ8_0(op->getOperand(0).getType());
  if (name != "load_var" && name != "load_const" && !readsQ8_0) {
    for (mlir::Value value : values) {
      if (isQ8_0(value.getType())) return fail("a q8_0 value is read only as a matmul's weight (the NE's int8 path)");
    }
  }
  if (name == "load_var" || name == "store_var" || name == "load_const" || isDdrMove(name)) return true;
  const sim::Format out = *formatOf(op->getResult(0).getType());
  if (unaryOps().count(name) || name == "scale" || name == "rmsnorm" || name == "layernorm") {
    if (!isFloat(out)) return fail(std::string(name) + " needs a float type");
    if (*formatOf(op->getOperand(0).getType()) != out) return fail("input and result types differ");
    return true;
  }
  if (binaryOps().count(name)) {
    auto lhs = tensorType(op->getOperand(0)), rhs = tensorType(op->getOperand(1));
    if (!isFloat(out) || lhs.getElementType() != rhs.getElementType() ||
        lhs.getElementType() != tensorType(op->getResult(0)).getElementType()) {
      return fail("operands of different float types (the CGRA's VV takes one format)");
    }
    if (rhs.getShape() != lhs.getShape()) {
      const Dims r = dims4(rhs.getShape(), 1), l = dims4(lhs.getShape(), 1);
      if (!(r[0] == 1 && r[1] == 1 && r[2] == 1 && r[3] == l[3])) {
        return fail("the rhs repeats other than as one row (the oplib broadcasts one row of C values)");
      }
    }
    return true;
  }
  if (name == "softmax") {
    if (auto bias = op->getAttrOfType<mlir::FloatAttr>("max_bias"); bias && bias.getValueAsDouble() != 0) {
      return fail("ALiBi (max_bias > 0) is not in the oplib's softmax");
    }
    if (op->getNumOperands() > 1) {
      auto mask = tensorType(op->getOperand(1)), in = tensorType(op->getOperand(0));
      if (!mask.getElementType().isF32()) return fail("the mask is not f32 (the oplib's softmax adds an f32 mask)");
      const Dims m = dims4(mask.getShape(), 1), x = dims4(in.getShape(), 1);
      if (mask.getShape() != in.getShape() && !(m[0] == 1 && m[1] == 1 && m[2] == 1 && m[3] == x[3])) {
        return fail("the mask is neither the input's shape nor one row");
      }
    }
    return isFloat(out) ? true : fail("softmax needs a float type");
  }
  if (name == "matmul") {
    const sim::Format lhs = *formatOf(op->getOperand(0).getType()), rhs = *formatOf(op->getOperand(1).getType());
    if (readsQ8_0) {
      // op_gemm_q8_0: f32 activations quantized per 32-block on the way in, f32 sums.
      return rhs == sim::Format::FP32 && out == sim::Format::FP32
                 ? true
                 : fail("a q8_0 matmul needs f32 activations and an f32 result");
    }
    if (!isFloat(lhs) || !isFloat(rhs) || out != sim::Format::FP32) return fail("matmul of non-float types");
    if (lhs != rhs && rhs != sim::Format::FP32) {
      return fail("matmul of activations neither f32 nor of the weights' type");
    }
    return true;
  }
  if (name == "glu") {
    if (op->getNumOperands() < 2) return fail("glu without a separate gate (the halves of one row are not generated)");
    return true;
  }
  if (name == "gather") {
    const sim::Format table = *formatOf(op->getOperand(0).getType());
    if (out != (table == sim::Format::INT32 ? sim::Format::INT32 : sim::Format::FP32)) {
      return fail("gather's result is neither f32 nor the i32 table's type");
    }
    if (!isDdrInput(op->getOperand(0))) return fail("gather's table is not a group input or constant in DDR");
    return true;
  }
  if (name == "set_rows") {
    if (!isFloat(out)) return fail("set_rows into a non-float tensor");
    if (!isDdrInput(op->getOperand(0))) return fail("set_rows' destination is not a group input in DDR");
    mlir::Value result = op->getResult(0);
    if (!result.hasOneUse() || !mlir::isa<StoreVarOp>(*result.getUsers().begin())) {
      return fail("set_rows' result is read other than by one store (it is written straight to DDR)");
    }
    return true;
  }
  if (name == "convert") {
    if (!isFloat(out) || !isFloat(*formatOf(op->getOperand(0).getType()))) {
      return fail("convert between non-float types (the CGRA converts f32, f16 and bf16)");
    }
    return true;
  }
  if (name == "rope") {
    auto rope = mlir::cast<RopeOp>(op);
    if (rope.getMode() != 0 && rope.getMode() != 2) return fail("rope mode other than normal (0) or NEOX (2)");
    if (!isFloat(out) || *formatOf(rope.getInput().getType()) != out) return fail("input and result types differ");
    if (tensorType(rope.getInput()).getRank() != 4) return fail("rope of a value that is not 4-D");
    return true;
  }
  if (name == "attention") {
    auto attention = mlir::cast<AttentionOp>(op);
    if (attention.getMaxBias().convertToDouble() != 0) {
      return fail("ALiBi (max_bias > 0) is not in op_attention_decode");
    }
    if (attention.getSoftcap().convertToDouble() != 0) return fail("softcap is not in op_attention_decode");
    auto key = tensorType(attention.getKey()), value = tensorType(attention.getValue());
    if (key.getElementType() != value.getElementType()) return fail("key and value of different types");
    if (key.getShape().back() != value.getShape().back()) {
      return fail("value rows of another length than key rows (op_attention_decode takes D == Dv)");
    }
    if (key.getRank() != 4 || tensorType(attention.getQuery()).getRank() != 4) return fail("attention not 4-D");
    if (auto mask = attention.getMask()) {
      auto m = tensorType(mask);
      if (!m.getElementType().isF32()) return fail("the mask is not f32 (op_attention_decode adds an f32 mask)");
      if (m.getRank() != 4 || m.getShape()[1] != 1) return fail("a mask per head (op_attention_decode adds one row)");
    }
    return true;
  }
  if (name == "conv2d" || name == "pool2d") {
    if (tensorType(op->getResult(0)).getRank() != 4) return fail(std::string(name) + " of a value that is not NCHW");
    if (name == "conv2d" && !tensorType(op->getOperand(1)).getElementType().isF32()) {
      return fail("conv2d with a kernel that is not f32 (the NE's convolution takes one format)");
    }
    return true;
  }
  if (name == "batchnorm_inference") {
    auto bn = mlir::cast<BatchNormInferenceOp>(op);
    if (!channelsInnermost(bn) && !(tensorType(bn.getInput()).getRank() == 4 && bn.getChannelAxis() == 1)) {
      return fail("batchnorm over a channel axis that is neither NCHW's C nor the innermost");
    }
    return true;
  }
  // The codegen's buffers are all dense: a change of layout is a copy.
  if (name == "channel_norm") return true;
  return fail("tx8-codegen has no program for tx8be." + std::string(name));
}

namespace {

// f32 activations times f16/bf16 weights: the activation rows of one batch of the result window,
// rounded to the weights' type by the CGRA for the NE (tile_program.h, matmul).
uint64_t matmulImmBytes(mlir::Operation* op, const std::array<int64_t, 4>& outSize) {
  const std::optional<sim::Format> weights = formatOf(op->getOperand(0).getType());
  if (!weights || !isFloat(*weights) || *weights == *formatOf(op->getOperand(1).getType())) return 0;
  const int64_t k = tensorType(op->getOperand(0)).getShape().back();
  return uint64_t(outSize[2] * k) * sim::format_bytes(*weights);
}

}  // namespace

uint64_t codegenImmBytes(mlir::Operation* op, const std::array<int64_t, 4>& outSize) {
  const std::string_view name = mnemonicOf(op);
  const sim::Shape4 out = sim::oplib::shape_of(outSize);
  const sim::Format format = *formatOf(op->getResult(0).getType());
  if (name == "scale")
    return sim::oplib::scale_imm_bytes(format, denseLayout(dims4(tensorType(op->getResult(0)).getShape(), 1)), out);
  if (name == "rmsnorm" || name == "layernorm") return sim::oplib::norm_imm_bytes(out);
  if (name == "softmax") return sim::oplib::softmax_imm_bytes(out);
  if (name == "gather") {
    return tile_program::gather_imm_bytes(*formatOf(op->getOperand(0).getType()), format, outSize);
  }
  if (name == "set_rows") {
    const int64_t rows = tensorType(op->getOperand(1)).getShape().drop_back().back();
    return tile_program::set_rows_imm_bytes(format, {outSize[0], outSize[1], rows, outSize[3]});
  }
  if (name == "rope") {
    auto rope = mlir::cast<RopeOp>(op);
    return tile_program::rope_imm_bytes(rope.getNDims(), rope.getMode() == 2, outSize);
  }
  if (name == "attention") {
    auto attention = mlir::cast<AttentionOp>(op);
    auto key = tensorType(attention.getKey()).getShape();
    const int64_t group = tensorType(attention.getQuery()).getShape()[1] / key[1];
    return tile_program::attention_imm_bytes(*formatOf(attention.getKey().getType()), std::min(group, outSize[2]),
                                             key[2], key[3]);
  }
  if (name == "matmul") return matmulImmBytes(op, outSize);
  if (auto conv = mlir::dyn_cast<Conv2dOp>(op)) {
    auto kernel = tensorType(conv.getKernel()).getShape();
    return tile_program::conv2d_nchw_imm_bytes(format, convParams(conv), kernel[1], kernel[2], kernel[3], outSize[1],
                                               outSize[2], outSize[3]);
  }
  if (auto bn = mlir::dyn_cast<BatchNormInferenceOp>(op)) {
    return tile_program::batchnorm_nchw_imm_bytes(channelsInnermost(bn), outSize);
  }
  if (auto pool = mlir::dyn_cast<Pool2dOp>(op)) {
    return tile_program::pool2d_nchw_imm_bytes(format, poolParams(pool), outSize[0], outSize[1], outSize[2],
                                               outSize[3]);
  }
  return 0;
}

tile_program::Conv2dNchw convParams(Conv2dOp conv) {
  return tile_program::Conv2dNchw{conv.getStrides()[0], conv.getStrides()[1],   conv.getPads()[0],
                                  conv.getPads()[1],    conv.getDilations()[0], conv.getDilations()[1]};
}

tile_program::Pool2dNchw poolParams(Pool2dOp pool) {
  return tile_program::Pool2dNchw{pool.getMode() == "max" ? sim::cgra::PoolOp::Max : sim::cgra::PoolOp::Avg,
                                  pool.getKernel()[0],
                                  pool.getKernel()[1],
                                  pool.getStrides()[0],
                                  pool.getStrides()[1],
                                  pool.getPads()[0],
                                  pool.getPads()[1]};
}

std::vector<LoadConstOp> programConstants(GroupOp group) {
  std::vector<LoadConstOp> constants;
  group.getBodyBlock().walk([&](LoadConstOp op) { constants.push_back(op); });
  return constants;
}

namespace {

// The windows of one tile (a part of the sharding grid) at each of its steps.
struct PartWindows {
  int tile = 0;  // chip tile index
  std::vector<llvm::DenseMap<mlir::Value, Box>> steps;
};

struct Plan {
  std::vector<int32_t> sharding;
  std::vector<int64_t> slice;
  int64_t steps = 1;
  std::vector<std::pair<int64_t, int64_t>> pipeline;  // (op index, step), compute first in a cycle
  std::vector<size_t> cycleBegin;
};

// The part `part`'s range of a result of `shape` split by `sharding` (ceil division).
Box partRange(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int32_t> sharding, int64_t part) {
  Box range{std::vector<int64_t>(shape.size()), std::vector<int64_t>(shape.size())};
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t parts = sharding[d], coord = part % parts;
    part /= parts;
    const int64_t chunk = (shape[d] + parts - 1) / parts;
    const int64_t lo = std::min(shape[d], coord * chunk), hi = std::min(shape[d], lo + chunk);
    range.start[d] = lo;
    range.size[d] = hi - lo;
  }
  return range;
}

// The steps walking `range` in `slice`-shaped windows, the innermost dimension fastest.
std::vector<Box> stepWindows(const Box& range, llvm::ArrayRef<int64_t> slice) {
  std::vector<Box> windows;
  const size_t rank = range.start.size();
  for (int64_t size : range.size) {
    if (size <= 0) return windows;
  }
  std::vector<int64_t> index(rank, 0);
  while (true) {
    Box w{std::vector<int64_t>(rank), std::vector<int64_t>(rank)};
    for (size_t d = 0; d < rank; ++d) {
      w.start[d] = range.start[d] + index[d] * slice[d];
      w.size[d] = std::min(slice[d], range.start[d] + range.size[d] - w.start[d]);
    }
    windows.push_back(w);
    size_t d = rank;
    while (d-- > 0) {
      if ((++index[d]) * slice[d] < range.size[d]) break;
      index[d] = 0;
    }
    if (d == size_t(-1)) return windows;
  }
}

// Every value's window for one (tile, step), from the yielded values' windows back through the
// body (ShardingInterface::backWindow; the bounding box of what the consumers read).
mlir::LogicalResult backPropagate(GroupOp group, llvm::DenseMap<mlir::Value, Box>& windows) {
  mlir::Block& body = group.getBodyBlock();
  for (mlir::Operation& op : llvm::reverse(body.without_terminator())) {
    if (op.getNumResults() != 1) return op.emitOpError("tx8-codegen: an op with more than one result");
    auto it = windows.find(op.getResult(0));
    if (it == windows.end()) continue;
    const Box out = it->second;
    std::vector<Box> operands;
    if (auto sharding = mlir::dyn_cast<ShardingInterface>(&op)) {
      for (const WindowParam& w : sharding.backWindow(WindowParam{out.start, out.size})) {
        operands.push_back(Box{w.start, w.size});
      }
    }
    if (operands.size() != op.getNumOperands()) {
      operands.clear();
      for (mlir::Value operand : op.getOperands()) operands.push_back(wholeBox(operand));
    }
    for (auto [operand, window] : llvm::zip(op.getOperands(), operands)) {
      if (window.start.size() != size_t(tensorType(operand).getRank())) window = wholeBox(operand);
      auto [entry, inserted] = windows.try_emplace(operand, window);
      if (!inserted) entry->second = unite(entry->second, window);
    }
  }
  return mlir::success();
}

mlir::FailureOr<Plan> readGroupPlan(GroupOp group) {
  Plan plan;
  auto sharding = group.getShardingAttr();
  auto slice = group.getSliceAttr();
  auto steps = group.getStepsAttr();
  if (!sharding || !slice || !steps) {
    return group.emitOpError(
               "tx8-codegen: the group has no plan (sharding, slice, steps): run the back-end passes first"),
           mlir::failure();
  }
  plan.sharding.assign(sharding.asArrayRef().begin(), sharding.asArrayRef().end());
  plan.slice.assign(slice.asArrayRef().begin(), slice.asArrayRef().end());
  plan.steps = steps.getInt();
  mlir::Block& body = group.getBodyBlock();
  std::vector<mlir::Operation*> ops;
  for (mlir::Operation& op : body.without_terminator()) ops.push_back(&op);
  // The issue order within a cycle: stores last, the rest by step (a load of step s + 1 after the
  // compute of step s), else in the plan's order.
  auto addCycle = [&](std::vector<std::pair<int64_t, int64_t>> items) {
    auto key = [&](const std::pair<int64_t, int64_t>& item) {
      return std::pair{mlir::isa<StoreVarOp>(ops[size_t(item.first)]) ? 1 : 0, item.second};
    };
    std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    plan.cycleBegin.push_back(plan.pipeline.size());
    plan.pipeline.insert(plan.pipeline.end(), items.begin(), items.end());
  };
  if (auto pipeline = group.getPipelineAttr()) {
    for (mlir::Attribute cycle : pipeline) {
      llvm::ArrayRef<int64_t> pairs = cycle.cast<mlir::DenseI64ArrayAttr>().asArrayRef();
      std::vector<std::pair<int64_t, int64_t>> items;
      for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
        if (pairs[i] < 0 || pairs[i] >= int64_t(ops.size()) || pairs[i + 1] < 0 || pairs[i + 1] >= plan.steps) {
          return group.emitOpError("tx8-codegen: pipeline item (op ")
                     << pairs[i] << ", step " << pairs[i + 1] << ") is outside the body's " << ops.size() << " ops and "
                     << plan.steps << " steps",
                 mlir::failure();
        }
        items.emplace_back(pairs[i], pairs[i + 1]);
      }
      addCycle(items);
    }
  } else {
    for (int64_t s = 0; s < plan.steps; ++s) {
      for (size_t i = 0; i < ops.size(); ++i) addCycle({{int64_t(i), s}});
    }
  }
  plan.cycleBegin.push_back(plan.pipeline.size());
  return plan;
}

// The chip tile of each part of the sharding grid: the group region's tiles, row by row. A grid
// of more parts than the region has tiles is an error.
mlir::FailureOr<std::vector<int>> partTiles(GroupOp group, llvm::ArrayRef<int32_t> sharding) {
  auto mesh = tile_mesh(group->getParentOfType<mlir::ModuleOp>());
  if (mlir::failed(mesh)) return mlir::failure();
  std::vector<int> tiles;
  if (auto region = group.getDevRegionAttr()) {
    for (int32_t y = region.getY(); y < region.getY() + region.getHeight(); ++y) {
      for (int32_t x = region.getX(); x < region.getX() + region.getWidth(); ++x) tiles.push_back(y * mesh->dx + x);
    }
  } else {
    tiles.push_back(0);
  }
  int64_t parts = 1;
  for (int32_t p : sharding) parts *= p;
  if (parts > int64_t(tiles.size())) {
    return group.emitOpError("tx8-codegen: the sharding has ")
           << parts << " parts but the region " << tiles.size() << " tiles";
  }
  tiles.resize(size_t(parts));
  return tiles;
}

// One value of the body as the program sees it.
struct ValueInfo {
  int id = 0;
  sim::Format format = sim::Format::FP32;
  Dims whole{1, 1, 1, 1};
  sim::MemLayout layout = sim::MemLayout::Tensor;
  int slot = -1;                // parameter index: a value in DDR
  std::vector<uint64_t> addrs;  // SPM copies
  uint64_t bytes = 0;           // one copy
};

class ProgramWriter {
 public:
  ProgramWriter(GroupOp group, Plan plan) : group_(group), plan_(std::move(plan)) {}

  mlir::FailureOr<std::string> write() {
    mlir::Block& body = group_.getBodyBlock();
    for (mlir::Operation& op : body.without_terminator()) {
      std::string why;
      if (!codegenSupports(&op, &why)) return op.emitOpError("tx8-codegen: ") << why, mlir::failure();
      ops_.push_back(&op);
    }
    if (mlir::failed(numberValues())) return mlir::failure();
    if (group_.getGroupTag().value_or(0) == kGroupTagInDdr) return writeMoves();
    if (mlir::failed(computeWindows()) || mlir::failed(placeBuffers())) return mlir::failure();
    return writeSteps();
  }

 private:
  mlir::LogicalResult numberValues() {
    mlir::Block& body = group_.getBodyBlock();
    int slot = 0;
    auto add = [&](mlir::Value value) {
      ValueInfo info;
      info.id = int(values_.size());
      info.format = *formatOf(value.getType());
      info.whole = dims4(tensorType(value).getShape(), 1);
      if (isQ8_0(value.getType())) info.whole[3] = q8_0Row(info.whole[3]);
      info.layout = denseLayout(info.whole);
      values_[value] = info;
      order_.push_back(value);
    };
    for (mlir::BlockArgument argument : body.getArguments()) {
      add(argument);
      values_[argument].slot = slot++;
    }
    for (mlir::Operation* op : ops_) add(op->getResult(0));
    for (mlir::Value result : group_.getYield()->getOperands()) {
      if (values_.count(result) && values_[result].slot < 0) values_[result].slot = slot;
      ++slot;
    }
    for (LoadConstOp constant : programConstants(group_)) {
      ValueInfo& info = values_[constant.getOutput()];
      if (constant.getBypassCodegen().value_or(false)) info.slot = slot;
      constSlots_[constant] = slot++;
    }
    return mlir::success();
  }

  mlir::LogicalResult computeWindows() {
    YieldOp yield = group_.getYield();
    if (yield->getNumOperands() == 0) return group_.emitOpError("tx8-codegen: the group yields nothing");
    mlir::Value primary = yield->getOperand(0);
    auto shape = tensorType(primary).getShape();
    if (plan_.sharding.size() != shape.size() || plan_.slice.size() != shape.size()) {
      return group_.emitOpError("tx8-codegen: the plan's sharding and slice need one entry per dimension of ")
             << tensorType(primary);
    }
    auto tiles = partTiles(group_, plan_.sharding);
    if (mlir::failed(tiles)) return mlir::failure();
    const int64_t parts = int64_t(tiles->size());
    for (int64_t part = 0; part < parts; ++part) {
      PartWindows pw;
      pw.tile = (*tiles)[size_t(part)];
      for (const Box& window : stepWindows(partRange(shape, plan_.sharding, part), plan_.slice)) {
        llvm::DenseMap<mlir::Value, Box> windows;
        for (mlir::Value result : yield->getOperands()) {
          windows[result] = tensorType(result).getShape() == shape ? window : wholeBox(result);
        }
        if (mlir::failed(backPropagate(group_, windows))) return mlir::failure();
        pw.steps.push_back(std::move(windows));
      }
      if (part == 0 && int64_t(pw.steps.size()) != plan_.steps) {
        return group_.emitOpError("tx8-codegen: the plan says ")
               << plan_.steps << " steps but slice " << listString(plan_.slice) << " walks tile 0's range in "
               << pw.steps.size();
      }
      parts_.push_back(std::move(pw));
    }
    return mlir::success();
  }

  // The window of `value` at (part, step) as N, H, W, C, in elements.
  std::pair<Dims, Dims> elementWindow4(size_t part, size_t step, mlir::Value value) const {
    const Box& box = parts_[part].steps[step].find(value)->second;
    return {dims4(box.start, 0), dims4(box.size, 1)};
  }

  // The same as the program sees it: a q8_0 value's rows in bytes (its windows hold whole
  // blocks: matmul never cuts K).
  std::pair<Dims, Dims> window4(size_t part, size_t step, mlir::Value value) const {
    auto window = elementWindow4(part, step, value);
    if (isQ8_0(value.getType())) {
      window.first[3] = q8_0Row(window.first[3]);
      window.second[3] = q8_0Row(window.second[3]);
    }
    return window;
  }

  bool hasWindow(mlir::Value value) const {
    for (const PartWindows& pw : parts_) {
      for (const auto& step : pw.steps) {
        if (step.count(value)) return true;
      }
    }
    return false;
  }

  mlir::LogicalResult placeBuffers() {
    for (mlir::Operation* op : ops_) {
      mlir::Value result = op->getResult(0);
      ValueInfo& info = values_[result];
      if (info.slot >= 0 || mnemonicOf(op) == "store_var") continue;
      auto dev = op->getAttrOfType<DevAttr>("dev_info");
      if (!dev || dev.getMemAddr().empty()) {
        return op->emitOpError("tx8-codegen: no SPM address (dev_info.mem_addr): run the SPM allocation first");
      }
      info.addrs.assign(dev.getMemAddr().asArrayRef().begin(), dev.getMemAddr().asArrayRef().end());
      for (const PartWindows& pw : parts_) {
        for (size_t s = 0; s < pw.steps.size(); ++s) {
          if (!pw.steps[s].count(result)) continue;
          auto [start, size] = window4(size_t(&pw - parts_.data()), s, result);
          const uint64_t bytes =
              uint64_t(sim::LayoutGeometry(sim::oplib::shape_of(size), info.format, info.layout).total_bytes());
          info.bytes = std::max(info.bytes, bytes);
        }
      }
      for (uint64_t addr : info.addrs) {
        if (addr + info.bytes > spmBytes_) spmBytes_ = addr + info.bytes;
      }
    }
    return mlir::success();
  }

  uint64_t immBytes(mlir::Operation* op, size_t part, size_t step) const {
    if (!parts_[part].steps[step].count(op->getResult(0))) return 0;
    return codegenImmBytes(op, window4(part, step, op->getResult(0)).second);
  }

  std::string winExpr(mlir::Value value) const {
    return "w(s, " + std::to_string(values_.find(value)->second.id) + ")";
  }

  std::string bufExpr(mlir::Value value) const {
    const ValueInfo& info = values_.find(value)->second;
    if (info.addrs.size() == 1) return "v" + std::to_string(info.id) + "[0]";
    return "v" + std::to_string(info.id) + "[invariant(" + std::to_string(info.id) + ") ? 0 : s % " +
           std::to_string(info.addrs.size()) + "]";
  }

  std::string tsrExpr(mlir::Value value) const {
    const ValueInfo& info = values_.find(value)->second;
    return "tsr(" + formatCode(info.format) + ", " + bufExpr(value) + ".addr, " + layoutCode(info.layout) +
           ", kWhole[" + std::to_string(info.id) + "], " + winExpr(value) + ")";
  }

  // Checks that operand `i`'s window equals the result's at every step (element-wise ops), or is
  // its one row when `row` (a broadcast rhs or mask).
  mlir::LogicalResult checkFollows(mlir::Operation* op, unsigned i, bool row) const {
    for (size_t p = 0; p < parts_.size(); ++p) {
      for (size_t s = 0; s < parts_[p].steps.size(); ++s) {
        if (!parts_[p].steps[s].count(op->getResult(0))) continue;
        auto [ostart, osize] = window4(p, s, op->getResult(0));
        auto [start, size] = window4(p, s, op->getOperand(i));
        const bool same = start == ostart && size == osize;
        const bool isRow =
            row && size[0] == 1 && size[1] == 1 && size[2] == 1 && size[3] == osize[3] && start[3] == ostart[3];
        if (!same && !isRow) {
          return op->emitOpError("tx8-codegen: operand ")
                 << i << "'s window " << listString(size) << " at " << listString(start) << " is not the result's "
                 << listString(osize) << " at " << listString(ostart) << " (tile part " << p << ", step " << s << ")";
        }
      }
    }
    return mlir::success();
  }

  // Row ops: the window holds whole rows.
  mlir::LogicalResult checkWholeRows(mlir::Operation* op) const {
    for (size_t p = 0; p < parts_.size(); ++p) {
      for (size_t s = 0; s < parts_[p].steps.size(); ++s) {
        if (!parts_[p].steps[s].count(op->getResult(0))) continue;
        if (window4(p, s, op->getResult(0)).second[3] != values_.find(op->getResult(0))->second.whole[3]) {
          return op->emitOpError("tx8-codegen: a row op's window must hold whole rows (the innermost dimension)");
        }
      }
    }
    return mlir::success();
  }

  // Operand `i`'s window holds whole rows of it at every step (set_rows' source).
  mlir::LogicalResult checkWholeRowsOf(mlir::Operation* op, unsigned i) const {
    for (size_t p = 0; p < parts_.size(); ++p) {
      for (size_t s = 0; s < parts_[p].steps.size(); ++s) {
        if (!parts_[p].steps[s].count(op->getResult(0))) continue;
        const Dims size = window4(p, s, op->getOperand(i)).second;
        if (size[2] != values_.find(op->getOperand(i))->second.whole[2]) {
          return op->emitOpError("tx8-codegen: operand ") << i << "'s window must hold all its rows";
        }
      }
    }
    return mlir::success();
  }

  // convert: the input window has as many elements as the result window (one flat range of both).
  mlir::LogicalResult checkSameCount(mlir::Operation* op) const {
    for (size_t p = 0; p < parts_.size(); ++p) {
      for (size_t s = 0; s < parts_[p].steps.size(); ++s) {
        if (!parts_[p].steps[s].count(op->getResult(0))) continue;
        const Dims in = window4(p, s, op->getOperand(0)).second, out = window4(p, s, op->getResult(0)).second;
        if (in[0] * in[1] * in[2] * in[3] != out[0] * out[1] * out[2] * out[3]) {
          return op->emitOpError("tx8-codegen: convert's input window ")
                 << listString(in) << " is not its result window " << listString(out) << " in elements";
        }
      }
    }
    return mlir::success();
  }

  // matmul: the operand windows contain the rows the result window reads, K whole.
  mlir::LogicalResult checkMatmul(mlir::Operation* op) const {
    for (size_t p = 0; p < parts_.size(); ++p) {
      for (size_t s = 0; s < parts_[p].steps.size(); ++s) {
        if (!parts_[p].steps[s].count(op->getResult(0))) continue;
        auto [os, oz] = elementWindow4(p, s, op->getResult(0));
        auto [ls, lz] = elementWindow4(p, s, op->getOperand(0));
        auto [rs, rz] = elementWindow4(p, s, op->getOperand(1));
        const Dims lw = dims4(tensorType(op->getOperand(0)).getShape(), 1),
                   ow = dims4(tensorType(op->getResult(0)).getShape(), 1);
        auto contains = [](int64_t start, int64_t size, int64_t lo, int64_t n) {
          return start <= lo && lo + n <= start + size;
        };
        bool ok = ls[3] == 0 && lz[3] == lw[3] && rs[3] == 0 && rz[3] == lw[3];
        ok = ok && contains(rs[2], rz[2], os[2], oz[2]) && contains(ls[2], lz[2], os[3], oz[3]);
        for (int d = 0; d < 2 && ok; ++d) {
          const int64_t ratio = ow[size_t(d)] / lw[size_t(d)];
          ok = contains(rs[size_t(d)], rz[size_t(d)], os[size_t(d)], oz[size_t(d)]) &&
               contains(ls[size_t(d)], lz[size_t(d)], os[size_t(d)] / ratio,
                        (os[size_t(d)] + oz[size_t(d)] - 1) / ratio - os[size_t(d)] / ratio + 1);
        }
        if (!ok) {
          return op->emitOpError("tx8-codegen: the operand windows do not contain what the result window ")
                 << listString(oz) << " at " << listString(os) << " reads, K whole (tile part " << p << ", step " << s
                 << ")";
        }
      }
    }
    return mlir::success();
  }

  // Windowed ops (conv2d, pool2d, batchnorm): each operand's window is the one the op's own
  // backWindow gives for the result window (`exact`), or contains it.
  mlir::LogicalResult checkBackWindows(mlir::Operation* op, bool exact) const {
    auto sharding = mlir::cast<ShardingInterface>(op);
    for (size_t p = 0; p < parts_.size(); ++p) {
      for (size_t s = 0; s < parts_[p].steps.size(); ++s) {
        auto it = parts_[p].steps[s].find(op->getResult(0));
        if (it == parts_[p].steps[s].end()) continue;
        const std::vector<WindowParam> wants = sharding.backWindow(WindowParam{it->second.start, it->second.size});
        for (unsigned i = 0; i < op->getNumOperands() && i < wants.size(); ++i) {
          const Box& have = parts_[p].steps[s].find(op->getOperand(i))->second;
          bool ok = true;
          for (size_t d = 0; d < have.start.size() && ok; ++d) {
            ok = exact ? have.start[d] == wants[i].start[d] && have.size[d] == wants[i].size[d]
                       : have.start[d] <= wants[i].start[d] &&
                             wants[i].start[d] + wants[i].size[d] <= have.start[d] + have.size[d];
          }
          if (!ok) {
            return op->emitOpError("tx8-codegen: operand ")
                   << i << "'s window " << listString(have.size) << " at " << listString(have.start)
                   << (exact ? " is not " : " does not contain ") << "the window " << listString(wants[i].size)
                   << " at " << listString(wants[i].start) << " the result window reads (tile part " << p << ", step "
                   << s << ")";
          }
        }
      }
    }
    return mlir::success();
  }

  // The scratch buffer of `op` (its dev_info.imm_addr), checked against what every step needs.
  mlir::FailureOr<std::string> immBuffer(mlir::Operation* op) {
    uint64_t need = 0;
    for (size_t p = 0; p < parts_.size(); ++p) {
      for (size_t s = 0; s < parts_[p].steps.size(); ++s) need = std::max(need, immBytes(op, p, s));
    }
    if (need == 0) return std::string();
    auto dev = op->getAttrOfType<DevAttr>("dev_info");
    if (!dev || dev.getImmAddr() < 0 || dev.getImmSize() < need) {
      return op->emitOpError("tx8-codegen: needs ")
                 << need << " bytes of scratch (dev_info.imm_size / imm_addr), the plan gives "
                 << (dev ? int64_t(dev.getImmSize()) : 0) << " at " << (dev ? dev.getImmAddr() : -1),
             mlir::failure();
    }
    const std::string name = "imm" + std::to_string(imms_.size());
    imms_.push_back({uint64_t(dev.getImmAddr()), need});
    spmBytes_ = std::max(spmBytes_, uint64_t(dev.getImmAddr()) + need);
    return name;
  }

  // The buffers whose bytes copy `copy` of `value` shares (itself included), for a load's waits.
  std::string overlapped(mlir::Value value, size_t copy) const {
    const ValueInfo& info = values_.find(value)->second;
    const uint64_t lo = info.addrs[copy], hi = lo + info.bytes;
    std::ostringstream list;
    const char* separator = "";
    for (mlir::Value other : order_) {
      const ValueInfo& o = values_.find(other)->second;
      for (size_t c = 0; c < o.addrs.size(); ++c) {
        if (o.addrs[c] < hi && lo < o.addrs[c] + o.bytes) {
          list << separator << "&v" << o.id << "[" << c << "]";
          separator = ", ";
        }
      }
    }
    for (size_t i = 0; i < imms_.size(); ++i) {
      if (imms_[i].first < hi && lo < imms_[i].first + imms_[i].second) {
        list << separator << "&imm" << i;
        separator = ", ";
      }
    }
    return "{" + list.str() + "}";
  }

  mlir::FailureOr<std::string> opBody(mlir::Operation* op) {
    const std::string_view name = mnemonicOf(op);
    mlir::Value result = op->getResult(0);
    const ValueInfo& out = values_[result];
    std::ostringstream code;
    if (name == "load_var" || name == "load_const") {
      if (out.slot >= 0) return std::string();  // read in place in DDR
      const int slot = name == "load_var" ? values_[op->getOperand(0)].slot : constSlots_[op];
      if (slot < 0) return op->emitOpError("tx8-codegen: loads a value that is not in DDR"), mlir::failure();
      code << "    if (s > 0 && invariant(" << out.id << ")) return;  // the same window every step: loaded once\n";
      std::string loads;
      if (out.addrs.size() == 1) {
        code << "    load(tile, " << formatCode(out.format) << ", ddr[" << slot << "], kWhole[" << out.id << "], "
             << winExpr(result) << ", " << layoutCode(out.layout) << ", v" << out.id << "[0], " << overlapped(result, 0)
             << ");\n";
      } else {
        code << "    switch (invariant(" << out.id << ") ? 0 : s % " << out.addrs.size() << ") {\n";
        for (size_t c = 0; c < out.addrs.size(); ++c) {
          code << "      case " << c << ": load(tile, " << formatCode(out.format) << ", ddr[" << slot << "], kWhole["
               << out.id << "], " << winExpr(result) << ", " << layoutCode(out.layout) << ", v" << out.id << "[" << c
               << "], " << overlapped(result, c) << "); break;\n";
        }
        code << "    }\n";
      }
      return code.str();
    }
    if (name == "store_var" && op->getOperand(0).getDefiningOp<SetRowsOp>()) {
      return std::string("    (void)s;  // the set_rows wrote it in DDR\n");
    }
    if (name == "store_var") {
      mlir::Value in = op->getOperand(0);
      if (values_[in].addrs.empty()) return op->emitOpError("tx8-codegen: stores a value not in SPM"), mlir::failure();
      code << "    store(tile, " << formatCode(out.format) << ", " << bufExpr(in) << ", "
           << layoutCode(values_[in].layout) << ", ddr[" << out.slot << "], kWhole[" << out.id << "], "
           << winExpr(result) << ");\n";
      return code.str();
    }
    auto imm = immBuffer(op);
    if (mlir::failed(imm)) return mlir::failure();
    std::vector<std::string> buffers;
    const bool readsDdr = name == "gather" || name == "set_rows";  // operand 0 stays in DDR
    for (mlir::Value operand : op->getOperands()) {
      if (readsDdr && operand == op->getOperand(0)) continue;
      if (values_[operand].addrs.empty()) {
        return op->emitOpError("tx8-codegen: operand is not in SPM (load it first)"), mlir::failure();
      }
      buffers.push_back("&" + bufExpr(operand));
    }
    buffers.push_back("&" + bufExpr(result));
    if (!imm->empty()) buffers.push_back("&" + *imm);
    buffers.push_back("&chain");
    std::string list;
    for (const std::string& b : buffers) join(list, ", ", b);
    const std::string immTsr =
        imm->empty() ? "" : "imm_tsr(" + *imm + ".addr, " + std::to_string(imms_.back().second) + ")";
    std::string call;
    if (auto unary = unaryOps().find(name); unary != unaryOps().end()) {
      if (mlir::failed(checkFollows(op, 0, false))) return mlir::failure();
      call = "op_activation(tile, cgra::UnaryOp::" + std::string(unary->second) + ", " + tsrExpr(op->getOperand(0)) +
             ", " + tsrExpr(result) + ");";
    } else if (auto binary = binaryOps().find(name); binary != binaryOps().end()) {
      if (mlir::failed(checkFollows(op, 0, false)) || mlir::failed(checkFollows(op, 1, true))) return mlir::failure();
      call = "op_binary(tile, cgra::ArithOp::" + std::string(binary->second) + ", " + tsrExpr(op->getOperand(0)) +
             ", " + tsrExpr(op->getOperand(1)) + ", " + tsrExpr(result) + ");";
    } else if (name == "scale") {
      if (mlir::failed(checkFollows(op, 0, false))) return mlir::failure();
      auto scale = mlir::cast<ScaleOp>(op);
      call = "op_scale(tile, " + floatCode(scale.getScale().convertToFloat()) + ", " +
             floatCode(scale.getBias().convertToFloat()) + ", " + tsrExpr(op->getOperand(0)) + ", " +
             (immTsr.empty() ? "imm_tsr(0, 0)" : immTsr) + ", " + tsrExpr(result) + ");";
    } else if (name == "rmsnorm" || name == "layernorm") {
      if (mlir::failed(checkFollows(op, 0, false)) || mlir::failed(checkWholeRows(op))) return mlir::failure();
      const float eps = op->getAttrOfType<mlir::FloatAttr>("epsilon").getValueAsDouble();
      call = name == "rmsnorm"
                 ? "op_rmsnorm(tile, oplib::NormParam{" + floatCode(eps) + "}, " + tsrExpr(op->getOperand(0)) +
                       ", nullptr, " + immTsr + ", " + tsrExpr(result) + ");"
                 : "op_layernorm(tile, oplib::NormParam{" + floatCode(eps) + "}, " + tsrExpr(op->getOperand(0)) +
                       ", nullptr, nullptr, " + immTsr + ", " + tsrExpr(result) + ");";
    } else if (name == "softmax") {
      if (mlir::failed(checkFollows(op, 0, false)) || mlir::failed(checkWholeRows(op))) return mlir::failure();
      const float scale = op->getAttrOfType<mlir::FloatAttr>("scale").getValueAsDouble();
      std::string mask = "nullptr";
      if (op->getNumOperands() > 1) {
        if (mlir::failed(checkFollows(op, 1, true))) return mlir::failure();
        code << "    const oplib::Tsr mask = " << tsrExpr(op->getOperand(1)) << ";\n";
        mask = "&mask";
      }
      call = "op_softmax(tile, oplib::SoftmaxParam{" + floatCode(scale) + "}, " + tsrExpr(op->getOperand(0)) + ", " +
             mask + ", " + immTsr + ", " + tsrExpr(result) + ");";
    } else if (name == "matmul") {
      if (mlir::failed(checkMatmul(op))) return mlir::failure();
      call = "matmul(tile, " + tsrExpr(op->getOperand(0)) + ", " + tsrExpr(op->getOperand(1)) + ", " + tsrExpr(result) +
             (immTsr.empty() ? "" : ", " + immTsr) + ");";
    } else if (name == "glu") {
      if (mlir::failed(checkFollows(op, 0, false)) || mlir::failed(checkFollows(op, 1, false))) return mlir::failure();
      const bool swapped =
          op->getAttrOfType<mlir::BoolAttr>("swapped") && op->getAttrOfType<mlir::BoolAttr>("swapped").getValue();
      const std::string act = op->getAttrOfType<mlir::StringAttr>("kind").getValue() == "swiglu" ? "Silu" : "Gelu";
      mlir::Value x = op->getOperand(swapped ? 1 : 0), g = op->getOperand(swapped ? 0 : 1);
      call = "op_activation(tile, cgra::UnaryOp::" + act + ", " + tsrExpr(x) + ", " + tsrExpr(result) +
             ");\n    op_binary(tile, cgra::ArithOp::Mul, " + tsrExpr(result) + ", " + tsrExpr(g) + ", " +
             tsrExpr(result) + ");";
    } else if (name == "gather") {
      mlir::Value table = op->getOperand(0);
      const ValueInfo& t = values_[table];
      code << "    begin_transfer_op(tile, {" << list << "});\n";
      code << "    gather_rows(tile, ddr[" << t.slot << "], " << formatCode(t.format) << ", kWhole[" << t.id << "], "
           << tsrExpr(op->getOperand(1)) << ", " << (imm->empty() ? "0" : *imm + ".addr") << ", " << tsrExpr(result)
           << ");\n";
      code << "    end_transfer_op(tile, {" << list << "});\n";
      return code.str();
    } else if (name == "set_rows") {
      if (mlir::failed(checkWholeRowsOf(op, 1))) return mlir::failure();
      const ValueInfo& dest = values_[op->getOperand(0)];
      const ValueInfo& written = values_[*result.getUsers().begin()->getResults().begin()];
      if (written.slot < 0) {
        return op->emitOpError("tx8-codegen: set_rows' store is not a group result"), mlir::failure();
      }
      code << "    begin_transfer_op(tile, {" << list << "});\n";
      code << "    set_rows(tile, ddr[" << dest.slot << "], ddr[" << written.slot << "], " << formatCode(out.format)
           << ", kWhole[" << out.id << "], " << winExpr(result) << ", " << layoutCode(out.layout) << ", "
           << bufExpr(result) << ", " << tsrExpr(op->getOperand(1)) << ", " << tsrExpr(op->getOperand(2)) << ", "
           << (imm->empty() ? "0" : *imm + ".addr") << ");\n";
      code << "    end_transfer_op(tile, {" << list << "});\n";
      return code.str();
    } else if (name == "convert") {
      if (mlir::failed(checkSameCount(op))) return mlir::failure();
      call = "convert(tile, " + tsrExpr(op->getOperand(0)) + ", " + tsrExpr(result) + ");";
    } else if (name == "rope") {
      if (mlir::failed(checkFollows(op, 0, false)) || mlir::failed(checkWholeRows(op))) return mlir::failure();
      auto rope = mlir::cast<RopeOp>(op);
      const RopeYarn y = ropeYarn(rope);
      std::string factors = "nullptr";
      if (rope.getFreqFactors()) {
        code << "    const oplib::Tsr factors = " << tsrExpr(rope.getFreqFactors()) << ";\n";
        factors = "&factors";
      }
      call = "rope(tile, tg::RopeYarn{" + std::to_string(y.n_dims) + ", " + (y.neox ? "true" : "false") + ", " +
             doubleCode(y.freq_base) + ", " + doubleCode(y.freq_scale) + ", " + doubleCode(y.ext_factor) + ", " +
             doubleCode(y.attn_factor) + ", " + doubleCode(y.corr_low) + ", " + doubleCode(y.corr_high) + "}, " +
             tsrExpr(rope.getInput()) + ", " + tsrExpr(rope.getPositions()) + ", " + factors + ", " + *imm + ".addr, " +
             std::to_string(imms_.back().second) + ", " + tsrExpr(result) + ");";
    } else if (name == "attention") {
      if (mlir::failed(checkWholeRows(op))) return mlir::failure();
      auto attention = mlir::cast<AttentionOp>(op);
      std::string mask = "nullptr";
      if (attention.getMask()) {
        code << "    const oplib::Tsr mask = " << tsrExpr(attention.getMask()) << ";\n";
        mask = "&mask";
      }
      call = "attention(tile, " + floatCode(attention.getScale().convertToFloat()) + ", " +
             tsrExpr(attention.getQuery()) + ", " + tsrExpr(attention.getKey()) + ", " + tsrExpr(attention.getValue()) +
             ", " + mask + ", " + *imm + ".addr, " + std::to_string(imms_.back().second) + ", " + tsrExpr(result) +
             ");";
    } else if (auto conv = mlir::dyn_cast<Conv2dOp>(op)) {
      if (mlir::failed(checkBackWindows(op, false))) return mlir::failure();
      const tile_program::Conv2dNchw p = convParams(conv);
      call = "conv2d_nchw(tile, Conv2dNchw{" + std::to_string(p.stride_h) + ", " + std::to_string(p.stride_w) + ", " +
             std::to_string(p.pad_h) + ", " + std::to_string(p.pad_w) + ", " + std::to_string(p.dil_h) + ", " +
             std::to_string(p.dil_w) + "}, " + tsrExpr(conv.getInput()) + ", " + tsrExpr(conv.getKernel()) + ", " +
             immTsr + ", " + tsrExpr(result) + ");";
    } else if (auto bn = mlir::dyn_cast<BatchNormInferenceOp>(op)) {
      if (mlir::failed(checkBackWindows(op, true))) return mlir::failure();
      call = "batchnorm_nchw(tile, " + floatCode(bn.getEpsilon().convertToFloat()) + ", " +
             (channelsInnermost(bn) ? "true" : "false") + ", " + tsrExpr(bn.getInput()) + ", " +
             tsrExpr(bn.getScale()) + ", " + tsrExpr(bn.getOffset()) + ", " + tsrExpr(bn.getMean()) + ", " +
             tsrExpr(bn.getVariance()) + ", " + immTsr + ", " + tsrExpr(result) + ");";
    } else if (auto pool = mlir::dyn_cast<Pool2dOp>(op)) {
      if (mlir::failed(checkBackWindows(op, true))) return mlir::failure();
      const tile_program::Pool2dNchw p = poolParams(pool);
      call = std::string("pool2d_nchw(tile, Pool2dNchw{sim::cgra::PoolOp::") +
             (p.op == sim::cgra::PoolOp::Max ? "Max" : "Avg") + ", " + std::to_string(p.kh) + ", " +
             std::to_string(p.kw) + ", " + std::to_string(p.stride_h) + ", " + std::to_string(p.stride_w) + ", " +
             std::to_string(p.pad_h) + ", " + std::to_string(p.pad_w) + "}, " + tsrExpr(pool.getInput()) + ", " +
             (immTsr.empty() ? "imm_tsr(0, 0)" : immTsr) + ", " + tsrExpr(result) + ");";
    } else if (name == "channel_norm") {
      if (mlir::failed(checkFollows(op, 0, false))) return mlir::failure();
      call = "copy(tile, " + tsrExpr(op->getOperand(0)) + ", " + tsrExpr(result) + ");";
    } else {
      return op->emitOpError("tx8-codegen: no program for this op"), mlir::failure();
    }
    code << "    begin_compute(tile, {" << list << "});\n";
    code << "    " << call << "\n";
    code << "    end_compute(tile, {" << list << "});\n";
    return code.str();
  }

  static std::string doubleCode(double value) {
    if (std::isinf(value)) return value > 0 ? "kInf" : "-kInf";  // YaRN's bounds without n_ctx_orig
    std::ostringstream out;
    out.precision(17);
    out << value;
    std::string text = out.str();
    if (text.find_first_of(".e") == std::string::npos && text.find("inf") == std::string::npos) text += ".0";
    return text;
  }

  static std::string floatCode(double value) {
    std::ostringstream out;
    out.precision(9);
    out << value << "f";
    std::string text = out.str();
    if (text.find_first_of(".e") == std::string::npos && text.find("inf") == std::string::npos)
      text.insert(text.size() - 1, ".0");
    return text;
  }

  void header(std::ostringstream& out, const std::string& what) {
    std::string ops;
    for (mlir::Operation* op : ops_) {
      const std::string_view name = mnemonicOf(op);
      if (name == "load_var" || name == "load_const" || name == "store_var") continue;
      join(ops, "+", std::string(name));
    }
    // A group that took an earlier group's plan (template_id) names that group: identical layers
    // then have one source, which the JIT compiles once.
    out << "// tx8-codegen: group "
        << (int32_t(group_.getTemplateId()) >= 0 ? int32_t(group_.getTemplateId()) : int32_t(group_.getGroupId()))
        << " (" << ops << "), " << what << "\n";
    out << "#include \"tilegraph/compiler/tile_program.h\"\n\n";
    out << "using namespace tg::compiler::tile_program;\n";
    out << "using namespace tg::sim::oplib;\n";
    out << "namespace sim = tg::sim;\n";
    out << "namespace cgra = tg::sim::cgra;\n";
    out << "namespace oplib = tg::sim::oplib;\n\n";
  }

  mlir::FailureOr<std::string> writeSteps() {
    std::ostringstream out;
    size_t maxSteps = 1;
    for (const PartWindows& pw : parts_) maxSteps = std::max(maxSteps, pw.steps.size());
    std::string sharding, slice;
    for (int32_t p : plan_.sharding) join(sharding, "x", std::to_string(p));
    for (int64_t d : plan_.slice) join(slice, "x", std::to_string(d));
    header(out, "sharding " + sharding + ", slice " + slice + ", " + std::to_string(plan_.steps) + " steps per tile");
    out << "namespace {\n\n";
    out << "constexpr int kParts = " << parts_.size() << ";\n";
    out << "constexpr int kMaxSteps = " << maxSteps << ";\n";
    out << "constexpr int kValues = " << order_.size() << ";\n";
    out << "// The chip tile of each part of the sharding grid, and its steps.\n";
    out << "constexpr int kTiles[kParts] = {";
    for (size_t p = 0; p < parts_.size(); ++p) out << (p ? ", " : "") << parts_[p].tile;
    out << "};\nconstexpr int64_t kSteps[kParts] = {";
    for (size_t p = 0; p < parts_.size(); ++p) out << (p ? ", " : "") << parts_[p].steps.size();
    out << "};\n// Each value's whole shape (N, H, W, C).\nconstexpr Dims kWhole[kValues] = {";
    for (size_t v = 0; v < order_.size(); ++v) out << (v ? ", " : "") << dimsCode(values_[order_[v]].whole);
    out << "};\n";
    // The windows, per part, step and value; a value without a window there is never touched.
    out << "// The window of each value at each (part, step): start, size.\n";
    out << "constexpr Window kWindows[kParts][kMaxSteps][kValues] = {\n";
    for (size_t p = 0; p < parts_.size(); ++p) {
      out << "  {";
      for (size_t s = 0; s < maxSteps; ++s) {
        out << (s ? ",\n   {" : "{");
        for (size_t v = 0; v < order_.size(); ++v) {
          Dims start{0, 0, 0, 0}, size{0, 0, 0, 0};
          if (s < parts_[p].steps.size() && parts_[p].steps[s].count(order_[v])) {
            std::tie(start, size) = window4(p, s, order_[v]);
          }
          out << (v ? ", " : "") << "{" << dimsCode(start) << ", " << dimsCode(size) << "}";
        }
        out << "}";
      }
      out << "}" << (p + 1 < parts_.size() ? "," : "") << "\n";
    }
    out << "};\n";
    out << "// Values whose window is the same at every step of a part: loaded once, one buffer.\n";
    out << "constexpr bool kInvariant[kParts][kValues] = {";
    for (size_t p = 0; p < parts_.size(); ++p) {
      out << (p ? ", " : "") << "{";
      for (size_t v = 0; v < order_.size(); ++v) {
        bool invariant = true;
        const auto& steps = parts_[p].steps;
        for (size_t s = 1; s < steps.size() && invariant; ++s) {
          auto a = steps[0].find(order_[v]), b = steps[s].find(order_[v]);
          invariant = (a == steps[0].end()) == (b == steps[s].end()) && (a == steps[0].end() || a->second == b->second);
        }
        out << (v ? ", " : "") << (invariant ? "true" : "false");
      }
      out << "}";
    }
    out << "};\n";
    out << "// The pipeline: (op, step) items, cycle by cycle (in a cycle: by step, stores last).\n";
    out << "constexpr int kItems = " << plan_.pipeline.size() << ";\n";
    out << "constexpr int64_t kPipeline[kItems][2] = {";
    for (size_t i = 0; i < plan_.pipeline.size(); ++i) {
      out << (i ? ", " : "") << "{" << plan_.pipeline[i].first << ", " << plan_.pipeline[i].second << "}";
    }
    out << "};\n\n";

    // The ops' code first: it registers the scratch buffers the declarations below need.
    // The loads last: their waits name every buffer their destination overlaps, scratch included.
    std::vector<std::string> bodies(ops_.size());
    for (bool loads : {false, true}) {
      for (size_t i = 0; i < ops_.size(); ++i) {
        if (mlir::isa<LoadVarOp, LoadConstOp>(ops_[i]) != loads) continue;
        auto body = opBody(ops_[i]);
        if (mlir::failed(body)) return mlir::failure();
        bodies[i] = *body;
      }
    }
    out << "struct Program {\n";
    out << "  sim::Tile& tile;\n  const uint64_t* ddr;\n  int part;\n";
    out << "  Buffer chain;  // the tile's compute ops, one after the other\n";
    for (mlir::Value value : order_) {
      const ValueInfo& info = values_[value];
      if (info.addrs.empty()) continue;
      out << "  Buffer v" << info.id << "[" << info.addrs.size() << "] = {";
      for (size_t c = 0; c < info.addrs.size(); ++c) out << (c ? ", " : "") << "{" << hex(info.addrs[c]) << "}";
      out << "};  // " << info.bytes << " bytes each\n";
    }
    for (size_t i = 0; i < imms_.size(); ++i) {
      out << "  Buffer imm" << i << "{" << hex(imms_[i].first) << "};  // " << imms_[i].second << " bytes\n";
    }
    out << "\n  const Window& w(int64_t s, int v) const { return kWindows[part][s][v]; }\n";
    out << "  bool invariant(int v) const { return kInvariant[part][v]; }\n\n";
    for (size_t i = 0; i < ops_.size(); ++i) {
      out << "  void op" << i << "(int64_t s) {  // " << ops_[i]->getName().getStringRef().str() << "\n";
      if (bodies[i].empty()) {
        out << "    (void)s;  // read in place in DDR\n";
      } else {
        out << bodies[i];
      }
      out << "  }\n";
    }
    out << "\n  void item(int64_t op, int64_t s) {\n    switch (op) {\n";
    for (size_t i = 0; i < ops_.size(); ++i) out << "      case " << i << ": op" << i << "(s); break;\n";
    out << "    }\n  }\n};\n\n}  // namespace\n\n";
    out << "extern \"C\" void run(uint32_t tile, void* chip, const void* params) {\n";
    out << "  for (int part = 0; part < kParts; ++part) {\n";
    out << "    if (kTiles[part] != int(tile)) continue;\n";
    out << "    Program program{static_cast<sim::Chip*>(chip)->tile(int(tile)), static_cast<const uint64_t*>(params), "
           "part};\n";
    out << "    program.tile.fence();  // the tile's SPM was an earlier group's\n";
    out << "    for (int i = 0; i < kItems; ++i) {\n";
    out << "      if (kPipeline[i][1] < kSteps[part]) program.item(kPipeline[i][0], kPipeline[i][1]);\n";
    out << "    }\n  }\n}\n";
    return out.str();
  }

  // A group working in DDR: its moves cut into DMA boxes, which the chip's tiles take in turn
  // (tile_program.h, MoveQueue), each through a staging buffer at the bottom of its SPM.
  mlir::FailureOr<std::string> writeMoves() {
    std::ostringstream out;
    header(out, "DDR to DDR on every tile");
    out << "extern \"C\" void run(uint32_t tile, void* chip, const void* params) {\n";
    out << "  sim::Chip& c = *static_cast<sim::Chip*>(chip);\n";
    out << "  sim::Tile& t = c.tile(int(tile));\n";
    out << "  t.fence();  // the tile's SPM was an earlier group's\n";
    out << "  const uint64_t* ddr = static_cast<const uint64_t*>(params);\n";
    out << "  MoveQueue queue{t, c.tile_count()};\n";
    mlir::FailureOr<std::vector<DdrMove>> moves = ddrMoves(group_);
    if (mlir::failed(moves)) return mlir::failure();
    for (const DdrMove& move : *moves) {
      const int dst = values_[move.op->getResult(0)].slot;
      if (dst < 0) return move.op->emitOpError("tx8-codegen: a move whose result is not yielded"), mlir::failure();
      const int64_t element = int64_t(move.elementBytes);
      out << "  copy_box(queue, ddr[" << values_[move.source].slot << "] + " << move.srcOffset * element << ", "
          << dimsCode(move.srcStrides) << ", ddr[" << dst << "] + " << move.dstOffset * element << ", "
          << dimsCode(move.dstStrides) << ", " << dimsCode(move.size) << ", " << element << ");  // "
          << move.op->getName().getStringRef().str() << "\n";
    }
    out << "}\n";
    return out.str();
  }

  GroupOp group_;
  Plan plan_;
  std::vector<mlir::Operation*> ops_;
  llvm::DenseMap<mlir::Value, ValueInfo> values_;
  std::vector<mlir::Value> order_;
  std::map<mlir::Operation*, int> constSlots_;
  std::vector<PartWindows> parts_;
  std::vector<std::pair<uint64_t, uint64_t>> imms_;  // scratch buffers: address, bytes
  uint64_t spmBytes_ = 0;
};

std::string windowCode(const llvm::DenseMap<mlir::Value, WindowParam>& windows, mlir::Value value) {
  auto found = windows.find(value);
  if (found == windows.end()) return "{{0, 0, 0, 0}, {0, 0, 0, 0}}";
  return "{" + dimsCode(dims4(found->second.start, 0)) + ", " + dimsCode(dims4(found->second.size, 1)) + "}";
}

// A K-split matmul group (PanelMatmul.h): its windows and buffers as data for
// tile_program_panels.h's panel_matmul, which issues every tile's instructions.
mlir::FailureOr<std::string> writePanelProgram(GroupOp group) {
  mlir::FailureOr<GroupPlan> plan = readPlan(group);
  if (mlir::failed(plan)) return mlir::failure();
  const DataSplit& split = plan->split;
  std::string why;
  const std::optional<PanelMatmul> m = panelMatmul(group, &why);
  if (!m) return group.emitOpError("tx8-codegen: a K split of a group that is not a lone matmul: ") << why;
  for (mlir::Operation& op : group.getBodyBlock().without_terminator()) {
    if (!codegenSupports(&op, &why)) return op.emitOpError("tx8-codegen: ") << why, mlir::failure();
  }
  auto tiles = partTiles(group, split.sharding);
  if (mlir::failed(tiles)) return mlir::failure();
  const int64_t parts = int64_t(tiles->size());
  const int64_t panels = panelsOf(*m, split.kPanel);
  int64_t windows = 1;
  const WindowParam range = tileRange(tensorType(primaryValue(group)).getShape(), split.sharding, 0);
  if (split.slice.size() != range.size.size()) {
    return group.emitOpError("tx8-codegen: the plan's slice needs one entry per dimension of the result");
  }
  for (int64_t n : stepsPerDim(range.size, split.slice)) windows *= n;
  if (windows * panels != split.steps) {
    return group.emitOpError("tx8-codegen: the plan says ")
           << split.steps << " steps but slice " << listString(split.slice) << " and K panels of " << split.kPanel
           << " walk tile 0's range in others";
  }
  // The DDR slots as the program's parameters list them: inputs, results, constants.
  const int64_t arguments = group.getBodyBlock().getNumArguments();
  std::map<mlir::Operation*, int64_t> constantSlot;
  for (LoadConstOp constant : programConstants(group)) {
    constantSlot[constant] = arguments + group.getYield()->getNumOperands() + int64_t(constantSlot.size());
  }
  auto tensorCode = [&](mlir::Value value, int64_t slot, mlir::Operation* buffered) -> mlir::FailureOr<std::string> {
    auto dev = buffered->getAttrOfType<DevAttr>("dev_info");
    if (!dev || dev.getMemAddr().empty()) {
      return buffered->emitOpError("tx8-codegen: no SPM address (dev_info.mem_addr): run the SPM allocation first"),
             mlir::failure();
    }
    const Dims whole = dims4(tensorType(value).getShape(), 1);
    std::string copies;
    for (int64_t addr : dev.getMemAddr().asArrayRef()) join(copies, ", ", hex(uint64_t(addr)));
    return "PanelTensor{" + formatCode(*formatOf(value.getType())) + ", ddr[" + std::to_string(slot) + "], " +
           dimsCode(whole) + ", " + layoutCode(denseLayout(whole)) + ", {" + copies + "}}";
  };
  auto loadSlot = [&](mlir::Operation* load) -> int64_t {
    if (mlir::isa<LoadConstOp>(load)) return constantSlot[load];
    return load->getOperand(0).cast<mlir::BlockArgument>().getArgNumber();
  };
  if (mlir::isa<LoadVarOp>(m->lhsLoad) && !m->lhsLoad->getOperand(0).isa<mlir::BlockArgument>()) {
    return m->lhsLoad->emitOpError("tx8-codegen: loads a value that is not in DDR"), mlir::failure();
  }
  if (mlir::isa<LoadVarOp>(m->rhsLoad) && !m->rhsLoad->getOperand(0).isa<mlir::BlockArgument>()) {
    return m->rhsLoad->emitOpError("tx8-codegen: loads a value that is not in DDR"), mlir::failure();
  }
  auto lhs = tensorCode(m->lhsLoad->getResult(0), loadSlot(m->lhsLoad), m->lhsLoad);
  auto rhs = tensorCode(m->rhsLoad->getResult(0), loadSlot(m->rhsLoad), m->rhsLoad);
  auto out = tensorCode(m->matmul->getResult(0), arguments, m->matmul);
  if (mlir::failed(lhs) || mlir::failed(rhs) || mlir::failed(out)) return mlir::failure();

  std::ostringstream code;
  std::string sharding, slice;
  for (int32_t p : split.sharding) join(sharding, "x", std::to_string(p));
  for (int64_t d : split.slice) join(slice, "x", std::to_string(d));
  code << "// tx8-codegen: group "
       << (int32_t(group.getTemplateId()) >= 0 ? int32_t(group.getTemplateId()) : int32_t(group.getGroupId()))
       << " (matmul), sharding " << sharding << ", slice " << slice << ", K in panels of " << split.kPanel
       << (split.shareOperands ? " shared over the NoC" : "") << ", " << split.steps << " steps per tile\n";
  code << "#include \"tilegraph/compiler/tile_program_panels.h\"\n\n";
  code << "using namespace tg::compiler::tile_program;\n";
  code << "namespace sim = tg::sim;\n\n";
  code << "namespace {\n\n";
  code << "constexpr int64_t kSteps = " << split.steps << ";\n";
  code << "// Per part and step: the windows of the accumulator, the lhs panel and the rhs panel.\n";
  code << "const PanelWindows kWindows[" << parts * split.steps << "] = {\n";
  for (int64_t part = 0; part < parts; ++part) {
    for (int64_t step = 0; step < split.steps; ++step) {
      const llvm::DenseMap<mlir::Value, WindowParam> windows = panelWindows(group, *m, split, part, step);
      code << "  {" << windowCode(windows, m->matmul->getResult(0)) << ", "
           << windowCode(windows, m->lhsLoad->getResult(0)) << ", " << windowCode(windows, m->rhsLoad->getResult(0))
           << "},\n";
    }
  }
  code << "};\n\n}  // namespace\n\n";
  code << "extern \"C\" void run(uint32_t tile, void* chip, const void* params) {\n";
  code << "  if (int(tile) != " << (*tiles)[0] << ") return;  // the first tile's call issues every tile's part\n";
  code << "  const uint64_t* ddr = static_cast<const uint64_t*>(params);\n";
  code << "  PanelMatmulPlan plan;\n";
  std::string partTiles;
  for (int64_t part = 0; part < parts; ++part) join(partTiles, ", ", std::to_string((*tiles)[size_t(part)]));
  code << "  plan.tiles = {" << partTiles << "};\n";
  code << "  plan.steps = kSteps;\n";
  code << "  plan.panels = " << panels << ";\n";
  code << "  plan.windows = kWindows;\n";
  code << "  plan.lhs = " << *lhs << ";\n";
  code << "  plan.rhs = " << *rhs << ";\n";
  code << "  plan.out = " << *out << ";\n";
  code << "  plan.share = " << (split.shareOperands ? "true" : "false") << ";\n";
  code << "  panel_matmul(*static_cast<sim::Chip*>(chip), plan);\n";
  code << "}\n";
  return code.str();
}

}  // namespace

mlir::FailureOr<std::string> generateTileProgram(GroupOp group) {
  if (group.getGroupTag().value_or(0) == kGroupTagInDdr) return ProgramWriter(group, Plan{}).write();
  if (group->hasAttr("tx8be.k_panel")) return writePanelProgram(group);
  auto plan = readGroupPlan(group);
  if (mlir::failed(plan)) return mlir::failure();
  return ProgramWriter(group, std::move(*plan)).write();
}

namespace {

struct CodegenPass : public CodegenBase<CodegenPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    bool failed = false;
    module.walk([&](GroupOp group) {
      auto source = generateTileProgram(group);
      if (mlir::failed(source)) {
        failed = true;
        return;
      }
      group->setAttr(kSourceAttr, mlir::StringAttr::get(group->getContext(), *source));
      if (!codegenDir.empty()) {
        llvm::sys::fs::create_directories(codegenDir);
        const std::string path = codegenDir + "/group_" + std::to_string(group.getGroupId()) + ".cpp";
        std::ofstream file(path);
        file << *source;
        if (!file) {
          group.emitOpError("tx8-codegen: cannot write ") << path;
          failed = true;
        }
      }
    });
    if (failed) signalPassFailure();
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createCodegenPass() { return std::make_unique<CodegenPass>(); }

}  // namespace tg::compiler::tx8be
