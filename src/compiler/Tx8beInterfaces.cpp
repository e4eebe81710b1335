// The op interfaces' default implementations: each derives its answer from the op's core node
// (ComputeInterface::buildCoreNode), so shapes, costs and results follow the core's rules.
#include <cstring>
#include <vector>

#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/Builders.h>

#include "core_bridge.h"
#include "cost_model.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/OpCost.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/constant_data.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/core/reference.h"
#include "tilegraph/sim/chip_config.h"

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beInterfaces.cpp.inc"

using namespace mlir;

namespace tg::compiler {

std::optional<std::array<int64_t, kMaxDims>> core_ne(ArrayRef<int64_t> shape) {
  if (shape.size() > size_t(kMaxDims)) return std::nullopt;
  std::array<int64_t, kMaxDims> ne = {1, 1, 1, 1};
  for (size_t i = 0; i < shape.size(); ++i) {
    if (ShapedType::isDynamic(shape[i])) return std::nullopt;
    ne[i] = shape[shape.size() - 1 - i];
  }
  return ne;
}

int min_rank(const Tensor& tensor) {
  int rank = 1;
  for (int i = 0; i < kMaxDims; ++i) {
    if (tensor.ne[i] != 1) rank = i + 1;
  }
  return rank;
}

RankedTensorType tensor_type(MLIRContext* context, const Tensor& tensor, int rank) {
  if (min_rank(tensor) > rank) return {};
  SmallVector<int64_t, kMaxDims> shape;
  for (int i = rank - 1; i >= 0; --i) shape.push_back(tensor.ne[i]);
  return RankedTensorType::get(shape, tx8be::element_type(context, tensor.type));
}

Tensor* core_tensor(Context& context, Type type) {
  auto ranked = type.dyn_cast<RankedTensorType>();
  const std::optional<DType> dtype = ranked ? tx8be::core_dtype(ranked.getElementType()) : std::nullopt;
  const auto ne = ranked ? core_ne(ranked.getShape()) : std::nullopt;
  if (!dtype || !ne) throw Error("the type " + type_string(type) + " has no core tensor counterpart");
  return context.new_tensor(*dtype, std::span<const int64_t>(ne->data(), ne->size()));
}

std::string type_string(Type type) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << type;
  return stream.str();
}

}  // namespace tg::compiler

namespace tg::compiler::tx8be {

Operation* producer_across_regions(Value value) {
  while (auto argument = value.dyn_cast<BlockArgument>()) {
    Operation* owner = argument.getOwner()->getParentOp();
    if (!isa_and_nonnull<GroupOp, SubgraphOp>(owner) || argument.getArgNumber() >= owner->getNumOperands()) {
      return nullptr;
    }
    value = owner->getOperand(argument.getArgNumber());
  }
  return value.getDefiningOp();
}

}  // namespace tg::compiler::tx8be

namespace tg::compiler::tx8be::detail {

namespace {

// The core node of `op` over data-less tensors of its operand types, in `context`; null (with
// a diagnostic in `error`) when the core rejects it, null without one when the op has none.
Tensor* core_node_of_types(Operation* op, Context& context, std::string& error) {
  auto compute = dyn_cast<ComputeInterface>(op);
  if (!compute) return nullptr;
  try {
    std::vector<Tensor*> operands;
    for (Value operand : op->getOperands()) operands.push_back(core_tensor(context, operand.getType()));
    return compute.buildCoreNode(context, operands);
  } catch (const Error& e) {
    error = e.what();
    return nullptr;
  }
}

RankedTensorType result_type(Operation* op) {
  return op->getNumResults() == 1 ? op->getResult(0).getType().dyn_cast<RankedTensorType>() : RankedTensorType{};
}

StringRef mnemonic(Operation* op) { return op->getName().stripDialect(); }

bool is_one_of(StringRef name, std::initializer_list<StringRef> names) {
  for (StringRef n : names) {
    if (n == name) return true;
  }
  return false;
}

// Ops whose every output element depends only on the operand elements at the same index (the
// right-hand side of a binary op repeated); convert only when it keeps the shape.
bool is_elementwise(Operation* op) {
  if (mnemonic(op) == "convert") {
    return op->getOperand(0).getType().cast<ShapedType>().getShape() ==
           op->getResult(0).getType().cast<ShapedType>().getShape();
  }
  return is_one_of(mnemonic(op),
                   {"add", "sub", "mul", "div", "scale", "relu", "gelu", "gelu_erf", "silu", "sigmoid", "tanh", "exp",
                    "neg", "abs", "sqrt", "rsqrt", "channel_norm", "load_var", "store_var"});
}

// Ops that read a whole innermost row for each output row (the innermost dimension cannot be
// split), the rest elementwise.
bool is_row_op(Operation* op) {
  return is_one_of(mnemonic(op), {"rmsnorm", "layernorm", "softmax", "rope", "sum_rows", "glu"});
}

std::string layout_of(Operation* op) {
  if (!op) return "";
  if (auto layout = op->getAttrOfType<StringAttr>("layout_str")) return layout.str();
  return "";
}

}  // namespace

// The middle end's layout names: unknown, the packed large-model layouts, and the CNN feature
// and weight orders.
bool is_layout_name(StringRef layout) {
  return is_one_of(
      layout, {"Unknown", "Tensor", "NTensor", "NCHW", "NHWC", "CHWN", "NC", "OIHW", "HWOI", "OHWI", "HWIO", "IOHW"});
}

LogicalResult verifyThroughCore(Operation* op) {
  if (auto layout = op->getAttrOfType<StringAttr>("layout_str")) {
    // One layout, or one per operand and then the result ("NCHW-OIHW-NCHW").
    SmallVector<StringRef, 6> parts;
    layout.getValue().split(parts, '-');
    if (!llvm::all_of(parts, is_layout_name)) {
      return op->emitOpError() << "layout_str \"" << layout.getValue()
                               << "\" is not a layout (Unknown, Tensor, NTensor, NCHW, NHWC, CHWN, NC, OIHW, HWOI, "
                                  "OHWI, HWIO, IOHW, or one per operand and the result joined by '-')";
    }
    if (parts.size() != 1 && parts.size() != op->getNumOperands() + 1) {
      return op->emitOpError() << "layout_str \"" << layout.getValue() << "\" has " << parts.size() << " layouts for "
                               << op->getNumOperands() << " operands and a result";
    }
  }
  Context context(ContextOptions{.no_alloc = true});
  std::string error;
  Tensor* node = core_node_of_types(op, context, error);
  if (!error.empty()) return op->emitOpError() << error;
  if (!node) return success();
  RankedTensorType declared = result_type(op);
  if (!declared) return op->emitOpError() << "must have one ranked tensor result";
  RankedTensorType inferred = tensor_type(op->getContext(), *node, int(declared.getRank()));
  if (inferred != declared) {
    RankedTensorType shown = inferred ? inferred : tensor_type(op->getContext(), *node, min_rank(*node));
    return op->emitOpError() << "result type " << declared << " does not match the operands: expected " << shown;
  }
  return success();
}

LogicalResult inferShapesThroughCore(Operation* op, DynamicShapeParam&) {
  Context context(ContextOptions{.no_alloc = true});
  std::string error;
  Tensor* node = core_node_of_types(op, context, error);
  if (!error.empty()) return op->emitOpError() << error;
  if (!node) return success();
  RankedTensorType current = result_type(op);
  const int rank = std::max(current ? int(current.getRank()) : 0, min_rank(*node));
  op->getResult(0).setType(tensor_type(op->getContext(), *node, rank));
  return success();
}

bool transmitsLayout(Operation* op) {
  return op->getNumOperands() > 0 && !is_one_of(mnemonic(op), {"reshape", "view", "transpose", "broadcast"});
}

LogicalResult inferLayoutFromFirstOperand(Operation* op) {
  if (!transmitsLayout(op)) return failure();
  Operation* source = producer_across_regions(op->getOperand(0));
  // The source's result layout (the last component of a per-operand string).
  const std::string layout =
      source ? layout_component(layout_of(source), source->getNumOperands(), source->getNumOperands()) : "";
  if (layout.empty() || layout == "Unknown") return failure();
  op->setAttr("layout_str", StringAttr::get(op->getContext(), layout));
  if (auto source_dev = source->getAttrOfType<DevAttr>("dev_info")) {
    auto dev = op->getAttrOfType<DevAttr>("dev_info");
    dev = dev ? dev.withLayout(source_dev.getMemLayout())
              : DevAttr::getWithLayout(op->getContext(), source_dev.getMemLayout());
    op->setAttr("dev_info", dev);
  }
  return success();
}

std::string defaultOpCode(Operation* op, const OpCodeParam& param) {
  std::string code = "op_" + mnemonic(op).str() + "(&" + param.param;
  for (const std::string& operand : param.operands) code += ", &" + operand;
  if (!param.imm.empty()) code += ", &" + param.imm;
  code += ", &" + param.output + ");";
  return code;
}

namespace {

EngineKind engine_kind(Operation* op) {
  if (is_one_of(mnemonic(op), {"matmul", "conv2d", "attention"})) return EngineKind::Matrix;
  if (is_one_of(mnemonic(op), {"reshape", "transpose", "view", "broadcast", "concat", "gather", "set_rows", "constant",
                               "load_const", "load_var", "store_var", "channel_norm"})) {
    return EngineKind::Dma;
  }
  return EngineKind::Vector;
}

}  // namespace

uint64_t opClockCycles(Operation* op) {
  try {
    return queryOpCost(op, sim::ChipConfig{}).cycles;
  } catch (const Error&) {
    return 0;  // an op without one ranked result, or a type the verifier rejects
  }
}

uint32_t opImmSpSize(Operation* op) {
  try {
    return uint32_t(std::min<uint64_t>(queryOpCost(op, sim::ChipConfig{}).immBytes, UINT32_MAX));
  } catch (const Error&) {
    return 0;
  }
}

OpAttr defaultOpAttr(Operation* op) {
  OpAttr attr;
  const StringRef name = mnemonic(op);
  const bool cnn = is_one_of(name, {"conv2d", "batchnorm_inference", "pool2d", "channel_norm"});
  // Matrix-engine ops and ops that address elements by row-major index or whole innermost rows
  // need the compact layouts; CNN ops the channel-aligned ones; elementwise ops take either.
  const bool compact =
      engine_kind(op) == EngineKind::Matrix || is_row_op(op) ||
      is_one_of(name, {"reshape", "view", "transpose", "broadcast", "concat", "gather", "set_rows", "argmax"});
  attr.alignMode = cnn ? AlignMode::NpuAlign : compact ? AlignMode::Compact : AlignMode::Any;
  attr.needPresetToNPU = is_one_of(name, {"conv2d", "batchnorm_inference", "pool2d"});
  RankedTensorType out = result_type(op);
  attr.defaultLayout = out && out.getRank() > 0 && out.getDimSize(0) != 1 ? "NTensor" : "Tensor";
  switch (engine_kind(op)) {
    case EngineKind::Matrix: attr.engine = Engine::NE; break;
    case EngineKind::Vector: attr.engine = Engine::CT; break;
    case EngineKind::Dma: attr.engine = Engine::DMA; break;
  }
  attr.memInplace = is_elementwise(op) && out && op->getNumOperands() > 0 &&
                    op->getOperand(0).getType() == op->getResult(0).getType();
  // A table read by index (an embedding) and a cache written by index stay in DDR: the op
  // addresses their rows itself.
  if (name == "gather" || name == "set_rows") attr.needLoad &= ~uint64_t(1);
  if (is_one_of(name, {"reshape", "view"})) attr.parallel = false;
  // The DMA engine moves these DDR to DDR: nothing is loaded into SPM or stored back.
  if (is_one_of(name, {"reshape", "view", "transpose", "broadcast", "concat"})) attr.needLoad = attr.needStore = 0;
  return attr;
}

LogicalResult computeThroughCore(Operation* op, ComputeParam& param) {
  auto compute = cast<ComputeInterface>(op);
  RankedTensorType out_type = result_type(op);
  if (!out_type) return op->emitOpError() << "cannot be computed: it needs one ranked tensor result";
  Context context(ContextOptions{.no_alloc = true});
  std::vector<std::unique_ptr<std::byte[]>> scratch;
  try {
    std::vector<Tensor*> leaves;
    for (const HostTensor* input : param.inputs) {
      const std::array<int64_t, kMaxDims> ne = input->ne();
      Tensor* leaf = context.new_tensor(input->type(), std::span<const int64_t>(ne.data(), ne.size()));
      leaf->data = const_cast<void*>(input->data());  // read only: writes go to copies below
      leaves.push_back(leaf);
    }
    Tensor* node = compute.buildCoreNode(context, leaves);
    if (!node) return op->emitOpError() << "has no core counterpart to compute with";
    const std::optional<DType> dtype = core_dtype(out_type.getElementType());
    param.output =
        HostTensor::zeros(*dtype, std::vector<int64_t>(out_type.getShape().begin(), out_type.getShape().end()));
    Tensor* out = node;
    if (node->is_view() && node->is_noop()) {
      out = tg::cont(context, node);  // a pure view: materialize it
    } else if (node->is_view()) {
      // A write into a view of its destination (set_rows, cpy): the result is the whole
      // destination, so the write goes to a copy of it that becomes the output.
      Tensor* storage = node->view_src;
      if (node->view_offs != 0 || storage->nbytes() != param.output.nbytes()) {
        return op->emitOpError() << "writes part of its destination, which a value cannot express";
      }
      if (storage->data) std::memcpy(param.output.mutable_data(), storage->data, param.output.nbytes());
      storage->data = param.output.mutable_data();
      node->data = storage->data;
    }
    if (out->nbytes() != param.output.nbytes()) {
      return op->emitOpError() << "core result of " << out->nbytes() << " bytes does not fit the "
                               << param.output.nbytes() << "-byte result";
    }
    if (!node->is_view() || out != node) out->data = param.output.mutable_data();
    const Graph graph = Graph::build(out);
    for (Tensor* t : graph.nodes()) {
      if (t->data) continue;
      if (t->view_src) {
        t->data = static_cast<char*>(t->view_src->data) + t->view_offs;
      } else {
        scratch.push_back(std::make_unique<std::byte[]>(t->nbytes()));
        t->data = scratch.back().get();
      }
    }
    reference::compute_graph(graph);
  } catch (const Error& e) {
    return op->emitOpError() << e.what();
  }
  return success();
}

}  // namespace tg::compiler::tx8be::detail
