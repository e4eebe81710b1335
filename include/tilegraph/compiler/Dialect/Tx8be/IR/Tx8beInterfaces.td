//===- Tx8beInterfaces.td - the op interfaces of TX8 BE --------------------===//
//
// The four interfaces the TX8 toolchain's back end asks of an op: shape and layout inference,
// sharding, its op library entry (code, cycles, scratch, attributes), and its reference
// computation. Every method has a default that derives the answer from the op's core
// counterpart (the node ComputeInterface::buildCoreNode builds); ops override what differs.
//
//===----------------------------------------------------------------------===//

#ifndef TILEGRAPH_COMPILER_TX8BE_INTERFACES_TD
#define TILEGRAPH_COMPILER_TX8BE_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Tx8be_ShapeInferenceOpInterface : OpInterface<"ShapeInferenceOpInterface"> {
  let description = [{
    Infers an op's result from its operands: `inferShapes` its result type, `inferLayout`
    its `layout_str` (and `dev_info.mem_layout`) from the op that defines its first operand.
  }];
  let cppNamespace = "::tg::compiler::tx8be";
  let methods = [
    InterfaceMethod<[{
        Sets the result type from the operand types (the core op builder's shape rule).
        `shapeParam` carries run-time shape buffers for dynamic shapes (unused while every
        shape is static).
      }],
      "::mlir::LogicalResult", "inferShapes", (ins "::tg::compiler::tx8be::DynamicShapeParam &":$shapeParam), [{}],
      [{ return detail::inferShapesThroughCore($_op, shapeParam); }]>,
    InterfaceMethod<[{
        Sets `layout_str` and the device layout from the first operand's defining op; fails
        for ops whose output layout cannot follow from their input's (reshape, broadcast...).
      }],
      "::mlir::LogicalResult", "inferLayout", (ins), [{}],
      [{ return detail::inferLayoutFromFirstOperand($_op); }]>
  ];
}

def Tx8be_ShardingInterface : OpInterface<"ShardingInterface"> {
  let description = [{
    Spreads an op over tiles. Sharding is the spatial split (parts per dimension over tiles),
    split the temporal one (steps per dimension on one tile). Given the split of the output,
    `tileShardingSplit` gives the split of each operand (an empty vector: that operand cannot
    follow and is loaded whole), `temporalSliceShape` the shape one tile handles per step, and
    `backWindow` the window of each operand an output window reads. Each returns one entry per
    operand, or no entry at all when the op refuses the output's split, step or window (a cut
    row of a row op, a reshape window that is not one range). All three derive from one window
    rule per op (src/compiler/ShardingRules.cpp).
  }];
  let cppNamespace = "::tg::compiler::tx8be";
  let methods = [
    InterfaceMethod<"The sharding and split of each operand for the output's `param`.",
      "std::vector<::tg::compiler::tx8be::ShardingSplitParam>", "tileShardingSplit", (ins "::tg::compiler::tx8be::ShardingSplitParam &":$param),
      [{}], [{ return detail::defaultTileShardingSplit($_op, param); }]>,
    InterfaceMethod<"The per-step shape of each operand for the output's per-step shape `param`.",
      "std::vector<::tg::compiler::tx8be::SliceParam>", "temporalSliceShape", (ins "::tg::compiler::tx8be::SliceParam &":$param),
      [{}], [{ return detail::defaultTemporalSliceShape($_op, param); }]>,
    InterfaceMethod<"The window of each operand that the output window `param` reads.",
      "std::vector<::tg::compiler::tx8be::WindowParam>", "backWindow", (ins "const ::tg::compiler::tx8be::WindowParam &":$param),
      [{}], [{ return detail::defaultBackWindow($_op, param); }]>
  ];
}

def Tx8be_OpLibInterface : OpInterface<"OpLibInterface"> {
  let description = [{
    The op's entry in the TX8 op library: the code that calls it, its cost and scratch
    space, and the attributes the layout, constant and grouping passes query.
  }];
  let cppNamespace = "::tg::compiler::tx8be";
  let methods = [
    InterfaceMethod<"The C statement that runs the op on its tensors.",
      "std::string", "genOpCode", (ins "const ::tg::compiler::tx8be::OpCodeParam &":$param),
      [{}], [{ return detail::defaultOpCode($_op, param); }]>,
    InterfaceMethod<"Clock cycles of the whole op on one tile of the default chip (OpCost.h).",
      "uint64_t", "getOpClockCycle", (ins),
      [{}], [{ return detail::opClockCycles($_op); }]>,
    InterfaceMethod<"Bytes of scratch SPM the op needs besides its operands (OpCost.h).",
      "uint32_t", "getImmSpSize", (ins),
      [{}], [{ return detail::opImmSpSize($_op); }]>,
    InterfaceMethod<"Alignment, layout, engine, in-place and load/store needs of the op.",
      "::tg::compiler::tx8be::OpAttr", "queryOpAttr", (ins),
      [{}], [{ return detail::defaultOpAttr($_op); }]>
  ];
}

def Tx8be_ComputeInterface : OpInterface<"ComputeInterface"> {
  let description = [{
    The op's reference semantics: `buildCoreNode` builds the equivalent tilegraph core node
    (tilegraph/core/ops.h) over core tensors standing for the operands, and `compute` runs it
    through the core reference implementation on host tensors. The interface's verifier builds
    the node from the operand types, so a shape, dtype or attribute the core op rejects is
    rejected here with the core's message, and checks the declared result type against it.
  }];
  let cppNamespace = "::tg::compiler::tx8be";
  let methods = [
    InterfaceMethod<[{
        The core node computing this op from `operands` (one core tensor per operand, absent
        optional operands left out), built in `context`; null for ops without a core
        counterpart, which override `compute`. Throws tg::Error for what the core rejects.
      }],
      "::tg::Tensor *", "buildCoreNode",
      (ins "::tg::Context &":$context, "::llvm::ArrayRef<::tg::Tensor *>":$operands)>,
    InterfaceMethod<"Computes the op's result from the host tensors in `param`.",
      "::mlir::LogicalResult", "compute", (ins "::tg::compiler::tx8be::ComputeParam &":$param),
      [{}], [{ return detail::computeThroughCore($_op, param); }]>
  ];
  let verify = [{ return detail::verifyThroughCore($_op); }];
}

#endif  // TILEGRAPH_COMPILER_TX8BE_INTERFACES_TD
