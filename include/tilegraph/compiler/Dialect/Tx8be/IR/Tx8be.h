#pragma once
// The tx8be dialect: its attributes, types, op interfaces and ops, generated from the .td files
// beside this header (the .inc files are in the build tree).
#include <optional>

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/BuiltinAttributes.h>
#include <mlir/IR/BuiltinTypes.h>
#include <mlir/IR/Dialect.h>
#include <mlir/IR/OpDefinition.h>
#include <mlir/IR/OpImplementation.h>
#include <mlir/Interfaces/ControlFlowInterfaces.h>
#include <mlir/Interfaces/SideEffectInterfaces.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/OpLibTypes.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/tensor.h"

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beDialect.h.inc"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beTypes.h.inc"

namespace tg::compiler::tx8be {

// The MLIR element type of a core dtype (f32, f16, bf16, i32, !tx8be.q<"q4_K">...), and back
// (nullopt for a type no core dtype has).
mlir::Type element_type(mlir::MLIRContext* context, DType type);
std::optional<DType> core_dtype(mlir::Type type);

// A `layout_str` is one layout for every operand and the result ("NTensor"), or one per operand
// and then the result joined by '-' ("NCHW-OIHW-NCHW"). The layout of operand `index` (of
// `operands`), or of the result with index == operands; "" when the string has another count.
std::string layout_component(llvm::StringRef layout, unsigned index, unsigned operands);

// Where a value comes from across region boundaries: the op defining it or, for an argument of
// a group's or subgraph's body, the op defining the region op's matching operand (null for a
// function argument).
mlir::Operation* producer_across_regions(mlir::Value value);

// The interfaces' default implementations (Tx8beInterfaces.td); each works from the op's core
// node where it needs one.
namespace detail {
mlir::LogicalResult inferShapesThroughCore(mlir::Operation* op, DynamicShapeParam& shapeParam);
mlir::LogicalResult inferLayoutFromFirstOperand(mlir::Operation* op);
// Whether the op's result is laid out as its first operand (false for ops that regroup
// elements: reshape, view, transpose, broadcast), so a layout can pass through it either way.
bool transmitsLayout(mlir::Operation* op);
std::vector<ShardingSplitParam> defaultTileShardingSplit(mlir::Operation* op, ShardingSplitParam& param);
std::vector<SliceParam> defaultTemporalSliceShape(mlir::Operation* op, SliceParam& param);
std::vector<WindowParam> defaultBackWindow(mlir::Operation* op, const WindowParam& param);
std::string defaultOpCode(mlir::Operation* op, const OpCodeParam& param);
// The OpCost.h query of the whole output on the default chip (0 for an op it cannot cost).
uint64_t opClockCycles(mlir::Operation* op);
uint32_t opImmSpSize(mlir::Operation* op);
OpAttr defaultOpAttr(mlir::Operation* op);
mlir::LogicalResult computeThroughCore(mlir::Operation* op, ComputeParam& param);
mlir::LogicalResult verifyThroughCore(mlir::Operation* op);
}  // namespace detail

}  // namespace tg::compiler::tx8be

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beInterfaces.h.inc"

#define GET_OP_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beOps.h.inc"
