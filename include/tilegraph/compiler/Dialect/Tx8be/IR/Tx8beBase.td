//===- Tx8beBase.td - the tx8be dialect and its op base classes ------------===//
//
// tx8be is the back-end IR of the TX8 toolchain (TX8 BE): value-semantic tensor ops over
// builtin ranked tensors, each carrying the layout and device attributes the back-end passes
// fill in. Shapes are outermost-first (NCHW for images); a core tg::Tensor's ne[] is the
// reversed shape padded with ones.
//
//===----------------------------------------------------------------------===//

#ifndef TILEGRAPH_COMPILER_TX8BE_BASE_TD
#define TILEGRAPH_COMPILER_TX8BE_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Tx8be_Dialect : Dialect {
  let name = "tx8be";
  let summary = "The TX8 back-end dialect: tensor ops with layout and device attributes";
  let description = [{
    The ops of a tilegraph graph lowered for the TX8 tile-mesh accelerator. Every compute op
    has value semantics (it reads its operands and defines a new tensor); the attributes
    `layout_str`, `chip_parallel`, `tile_parallel` and `dev_info` describe how the back end
    lays the op out, shards it and places it in memory. See docs/compiler.md.
  }];
  let cppNamespace = "::tg::compiler::tx8be";
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let emitAccessorPrefix = kEmitAccessorPrefix_Prefixed;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif  // TILEGRAPH_COMPILER_TX8BE_BASE_TD
