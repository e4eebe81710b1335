//===- Passes.td - the tx8be passes ------------------------------------------===//
//
// Each pass is defined here (flag, summary, options) and implemented in its own file under
// src/compiler/Transforms/; registerTx8bePasses() (Passes.h) registers them all with
// tilegraph-opt. To add one: a `def` below, a create function in Passes.h, a .cpp file, a lit test.
//
//===----------------------------------------------------------------------===//

#ifndef TILEGRAPH_COMPILER_TX8BE_PASSES_TD
#define TILEGRAPH_COMPILER_TX8BE_PASSES_TD

include "mlir/Pass/PassBase.td"

def InferShapes : Pass<"tx8be-infer-shapes", "::mlir::func::FuncOp"> {
  let summary = "Recomputes every tx8be op's result type from its operands";
  let description = [{
    Visits the ops in order and calls ShapeInferenceOpInterface::inferShapes on each, so that
    a rewrite that changed an operand's shape (a layout or constant pass) leaves consistent
    types behind. Fails on an op whose operands the core op rejects. The function's result
    types follow its return's operands.
  }];
  let constructor = "::tg::compiler::tx8be::createInferShapesPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

//===----------------------------------------------------------------------===//
// The front end of the TX8 toolchain's back end (--tx8-frontend runs them in this order):
// layouts, constants, groups.
//===----------------------------------------------------------------------===//

def LayoutInit : Pass<"layout-init", "::mlir::func::FuncOp"> {
  let summary = "Gives gemm and CNN ops their layout_str from their kind";
  let description = [{
    matmul and attention get one Tensor/NTensor component per operand and for the result
    ("Tensor-Tensor-Tensor"; NTensor where dim 0 is a batch larger than one). conv2d,
    batchnorm_inference and pool2d get Feature layouts NCHW and Weight layouts OIHW (NHWC and
    HWOI with `nhwc`), batchnorm's per-channel vectors Tensor. Every other op is left "Unknown"
    for layout-transmit, which also defaults what it cannot reach to Tensor/NTensor by the
    result's dim 0. A layout already set is kept.
  }];
  let constructor = "::tg::compiler::tx8be::createLayoutInitPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
  let options = [
    Option<"nhwc", "nhwc", "bool", /*default=*/"false",
           "Lay CNN features out channel-last (NHWC) and kernels HWOI">
  ];
}

def LayoutTransmit : Pass<"layout-transmit", "::mlir::func::FuncOp"> {
  let summary = "Spreads layouts from gemm and conv through inferLayout, the rest Tensor";
  let description = [{
    A worklist starts at the ops layout-init laid out from their kind (matmul, attention,
    conv2d, batchnorm_inference, pool2d). Forwards, an "Unknown" user takes its layout through
    ShapeInferenceOpInterface::inferLayout; backwards, an "Unknown" producer that transmits
    layouts (detail::transmitsLayout) takes the layout its user expects of that operand. Ops
    that regroup elements (reshape, view, transpose, broadcast) stop the spread. Ops still
    "Unknown" at the end get their queryOpAttr().defaultLayout (Tensor, NTensor for a batch).
  }];
  let constructor = "::tg::compiler::tx8be::createLayoutTransmitPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

def LayoutAlignToNpu : Pass<"layout-align-to-npu", "::mlir::func::FuncOp"> {
  let summary = "Inserts channel_norm where neighbours disagree on alignment; sets dev_info";
  let description = [{
    Runs on the function body before grouping (ops inside groups are left alone). Function
    arguments and results are compact (Tensor/NTensor). Walking the ops in order, an
    op's result is aligned (Cx/NCx) when queryOpAttr().alignMode is npu_align, compact when it is
    compact, and follows its first operand when it is any. Where a use needs the other form, a
    tx8be.channel_norm converting the value (Tensor->Cx or Cx->Tensor, NTensor<->NCx for a batch)
    is inserted before the user, one per use. Every op's dev_info.mem_layout records its
    result's form (NCx / NTensor when dim 0 of a tensor of rank 2 or more is a batch).
  }];
  let constructor = "::tg::compiler::tx8be::createLayoutAlignToNpuPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

def LayoutAlignOpt : Pass<"layout-align-opt", "::mlir::func::FuncOp"> {
  let summary = "Erases redundant channel_norm ops (greedy rewrite patterns)";
  let description = [{
    ConstChannelNormErase: a vector constant (at most one dimension above 1) whose only user is
    a channel_norm is stored aligned instead, and the channel_norm goes.
    RedundantChannelNormErase: a channel_norm converting a value to the same layout as an
    earlier channel_norm of that value is replaced by it.
  }];
  let constructor = "::tg::compiler::tx8be::createLayoutAlignOptPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

def MoveConstant : Pass<"move-constant", "::mlir::ModuleOp"> {
  let summary = "Moves constants into the constant container, each use a load_const";
  let description = [{
    Registers every tx8be.constant in a ConstContainer (its data, chip ids -1 = every chip,
    label, bytes per chip) and replaces each use by a tx8be.load_const of its id. The constant
    needs a load when a user's queryOpAttr().needLoad has the operand's bit; otherwise its
    load_consts get `bypass_codegen`. Ids are then renumbered as the TX8 back end lays the
    constants out in DDR: constants above 4 KiB per tile of the mesh (module attributes
    tx8be.tile_dx x tx8be.tile_dy, 4x4 if absent) first, then the rest, each in program order.
  }];
  let constructor = "::tg::compiler::tx8be::createMoveConstantPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

def ConstNorm : Pass<"const-norm", "::mlir::ModuleOp"> {
  let summary = "Folds channel_norm into load_const; one layout per constant";
  let description = [{
    A load_const whose only user is a channel_norm is loaded in the aligned layout (Cx, NCx for
    a batch) and the channel_norm goes. Then the load_consts of one constant (one const_map_id)
    agree on a layout: the aligned one when any of them is aligned (Cx wins, as the constant is
    stored once); a use that needs the compact form gets a channel_norm back.
  }];
  let constructor = "::tg::compiler::tx8be::createConstNormPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

def GroupPattern : Pass<"group-pattern", "::mlir::func::FuncOp"> {
  let summary = "Groups chains of ops that match op-name patterns (a trie automaton)";
  let description = [{
    Patterns are data: the built-in set (docs/compiler-passes.md) plus, with `pattern-file`,
    the patterns of a file, one per line: `<priority>: <op> <op>...`, where `|` separates
    alternatives and `<op> *` repeats the op 1 to 5 times. All are compiled into a trie; from
    each op the automaton follows chains of users, and the longest chain that ends a pattern
    wins (the higher priority on a tie). Matches are taken longest first, each op in at most one
    group, and a chain becomes a tx8be.group with the constants only it uses inside.
  }];
  let constructor = "::tg::compiler::tx8be::createGroupPatternPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
  let options = [
    Option<"patternFile", "pattern-file", "std::string", /*default=*/"\"\"",
           "A file of extra group patterns">,
    Option<"noBuiltin", "no-builtin", "bool", /*default=*/"false",
           "Use only the patterns of pattern-file">
  ];
}

def GroupOptimization : Pass<"group-optimization", "::mlir::func::FuncOp"> {
  let summary = "Puts every compute op outside a group into a group of its own";
  let description = [{
    Each compute op not yet in a group becomes a tx8be.group; the load_const and constant ops
    that only it uses move inside as its dependencies, its other operands become the group's
    inputs, its result the group's result.
  }];
  let constructor = "::tg::compiler::tx8be::createGroupOptimizationPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

def GroupLdSt : Pass<"group-ldst", "::mlir::func::FuncOp"> {
  let summary = "Inserts load_var / store_var at group boundaries; sets group_tag";
  let description = [{
    In each group, an input that a user loads (queryOpAttr().needLoad) gets a tx8be.load_var
    feeding those users; a result whose producer stores it (needStore) goes through a
    tx8be.store_var. group_tag is 0 for a group that loads or stores (it is split by the
    sharding search) and 2 for one that works in DDR only.
  }];
  let constructor = "::tg::compiler::tx8be::createGroupLdStPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

def GroupMapping : Pass<"group-mapping", "::mlir::ModuleOp"> {
  let summary = "Maps every group onto the module's x/y tile mesh (dev_region)";
  let description = [{
    Sets each group's dev_region to the whole mesh the module attributes tx8be.tile_dx and
    tx8be.tile_dy describe (the TX8 chip's 4x4 when absent), as the TX8 back end's simple
    mapping does, and numbers the groups (group_id) in program order.
  }];
  let constructor = "::tg::compiler::tx8be::createGroupMappingPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

def Codegen : Pass<"tx8-codegen", "::mlir::ModuleOp"> {
  let summary = "Generates each planned group's tile program (C++ over the sim's op library)";
  let description = [{
    For each tx8be.group, the C++ translation unit a tile runs, as the TX8 toolchain's
    generated per-tile main.c: `extern "C" void run(uint32_t tile, void* chip, const void*
    params)`, params being the DDR addresses of the group's inputs, results and constants. For
    the tile's part of the plan's sharding, the program walks the pipeline's (op, step) items:
    loads of each value's window into its SPM buffer copy (dev_info.mem_addr), the oplib's op
    calls with their scratch (imm_addr), stores of the results, with the engine waits each
    dependency needs. A group in DDR (group_tag 2) copies on tile 0. The source is attached as
    the string attribute tx8be.source and, with --codegen-dir, written to DIR/group_<id>.cpp.
    Fails on a group without a plan or with an op it has no program for.
  }];
  let constructor = "::tg::compiler::tx8be::createCodegenPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
  let options = [
    Option<"codegenDir", "codegen-dir", "std::string", /*default=*/"\"\"",
           "Also write each program to DIR/group_<id>.cpp">
  ];
}

#endif  // TILEGRAPH_COMPILER_TX8BE_PASSES_TD
