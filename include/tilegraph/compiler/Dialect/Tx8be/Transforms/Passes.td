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

def SwPipeline : Pass<"sw-pipeline", "::mlir::func::FuncOp"> {
  let summary = "Builds each group's software pipeline from its data split";
  let description = [{
    The TX8 back end's TS_SwPipeline (buildPipeline, GroupPlan.h) on the plan each group
    carries (sharding, slice, steps and its ops' slices): one step's ops in frames (an op
    after its producers, sharing a frame with a producer on the same engine), the steps
    retracted into each other as far as the frames meeting in one cycle use disjoint engines
    (the load of step s + 1 and the store of step s - 1 beside the compute of step s), the
    step-invariant ops (weight loads) once, in a prologue retracted into the first steps.
    Writes the group's `pipeline` and each op's dev_info.source_type, and drops a placement
    and an estimate made for another pipeline. Groups working in DDR (group_tag 2) are left
    alone; any other group without a plan is an error.
  }];
  let constructor = "::tg::compiler::tx8be::createSwPipelinePass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

def SpmAlloc : Pass<"spm-alloc", "::mlir::func::FuncOp"> {
  let summary = "Places each group's SPM buffers over its pipeline";
  let description = [{
    The TX8 back end's SA_BufferLife, SA_BufferMerge and SPM allocation (allocateSpm,
    GroupPlan.h) on each group's plan and pipeline: every SPM value's lifetime in pipeline
    cycles (an in-place op's result shares its operand's buffer, an op's scratch lives in its
    cycles), as many copies as steps in flight at once (multi-buffering), best-fit offsets
    aligned to 256 bytes. Writes dev_info.mem_addr (one offset per copy), multi_buf_en /
    multi_buf_num, imm_size / imm_addr, and the group's spm_alloc_size (the peak) and
    spm_lower_bound (the most bytes live in one cycle). A group whose buffers do not fit is an
    error naming both sizes. Groups working in DDR (group_tag 2) are left alone.
  }];
  let constructor = "::tg::compiler::tx8be::createSpmAllocPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
  let options = [
    Option<"chipConfig", "chip-config", "std::string", /*default=*/"\"\"",
           "A chip configuration JSON file (docs/sim.md); when empty the module's tx8be.chip, else the TX8 chip's defaults">,
    Option<"spmBytes", "spm-bytes", "uint64_t", /*default=*/"0",
           "SPM bytes per tile, over the chip's (0: the chip's)">
  ];
}

def OptBarrier : Pass<"opt-barrier", "::mlir::func::FuncOp"> {
  let summary = "Keeps only the barriers the groups' dependencies need";
  let description = [{
    The TX8 back end's opt_barrier: a group needs a barrier after it (need_barrier) only where
    a later group reads its results (stored to DDR, by other tiles in general) and no barrier
    between the two groups synchronizes the tiles already. The barriers are the fewest that
    separate every producer from its consumers in program order (the greedy cover of the
    producer-to-consumer ranges), which on a program in layer order (a group after its
    producers' layer) is one barrier after each layer whose results a later layer reads.
    Groups with no dependency between them, on the same or disjoint tiles, run without one.
  }];
  let constructor = "::tg::compiler::tx8be::createOptBarrierPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

def OptDdr : Pass<"opt-ddr", "::mlir::ModuleOp"> {
  let summary = "Places group results and the program's own constants in scratch DDR";
  let description = [{
    The TX8 back end's opt_ddr for the program's scratch DDR: each group result that is not a
    function result gets a byte offset (the group's `ddr_offsets`, -1 for function results,
    whose addresses the caller binds), reusing the bytes of results no later group reads
    (liveness over the group order, best fit); each dense constant (no key to bind it by) an
    offset in `tx8be.const_ddr_offsets` on the module, indexed by const_map_id (-1 for
    external constants, bound by key); `tx8be.scratch_bytes` is the total. Every offset and
    size is a multiple of the chip's DDR burst (64 bytes on the TX8 chip). DDR banks are not
    modelled.
  }];
  let constructor = "::tg::compiler::tx8be::createOptDdrPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
  let options = [
    Option<"chipConfig", "chip-config", "std::string", /*default=*/"\"\"",
           "A chip configuration JSON file (docs/sim.md); when empty the module's tx8be.chip, else the TX8 chip's defaults">
  ];
}

def DataSplit : Pass<"data-split", "::mlir::ModuleOp"> {
  let summary = "Cuts every group over its tiles and into per-step slices that fit the SPM";
  let description = [{
    Runs the data split (GroupPlan.h's dataSplit) on every group and writes it as the group's
    plan (sharding, slice, steps; each op's tile_parallel.shape_spatial_sharding and
    dev_info.temporal_mem_slice). The cut is the group's `sharding` attribute if it has one,
    else the best-ordered candidate of the search (all the group's tiles over the outer
    dimensions first) that every op of the body accepts. The slice is the largest whose buffers
    fit the SPM, halving the outermost dimension that can be walked in steps first. A group that
    works in DDR (group_tag 2) is left whole: one tile, one step. A given cut an op refuses, or a
    group that fits at no slice, is an error.
  }];
  let constructor = "::tg::compiler::tx8be::createDataSplitPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
  let options = [
    Option<"chipConfig", "chip-config", "std::string", /*default=*/"\"\"",
           "A chip configuration JSON file (docs/sim.md); when empty the module's tx8be.chip, else the TX8 chip's defaults">
  ];
}

def Estimate : Pass<"estimate", "::mlir::ModuleOp"> {
  let summary = "Estimates the cycles of every group's plan (estimated_cycles)";
  let description = [{
    Reads each group's plan (it needs a pipeline: run sw-pipeline first; a plan without an SPM
    placement is placed for the estimate) and writes `estimated_cycles`: the C-model's schedule
    of the group's program on tile 0, its (op, step) tasks in issue order on the RDMA, WDMA and
    compute queues with the program's waits over the SPM buffer copies, loads and stores by
    their latency and DDR bursts sharing the tile's part of the DDR bandwidth, ops by their
    OpLib cycles for the step's window (src/compiler/Transforms/Estimate.cpp states the model).
    Groups working in DDR (group_tag 2) are left alone.
  }];
  let constructor = "::tg::compiler::tx8be::createEstimatePass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
  let options = [
    Option<"chipConfig", "chip-config", "std::string", /*default=*/"\"\"",
           "A chip configuration JSON file (docs/sim.md); when empty the module's tx8be.chip, else the TX8 chip's defaults">
  ];
}

def GroupCost : Pass<"group-cost", "::mlir::ModuleOp"> {
  let summary = "Searches every group's sharding candidates for the plan of least estimated cycles";
  let description = [{
    The TX8 toolchain's GroupCostPass. For each group that loads or stores (group_tag 2 groups
    are left alone): every cut of its primary result over its tiles (and over fewer tiles), each
    run through the data split, the software pipeline, the SPM allocation and the estimate; the
    candidate of fewest estimated cycles among those that fit the SPM is written as the group's
    plan. A group with the same structure (GroupKey: op names, connections, types, layouts,
    attributes but ids, addresses and constant data, tag and tile count) as one planned earlier
    for the same chip reuses its plan, and names it in `template_id` when it is of this module
    (compile_graph may share the memo across compiles: CompileOptions::plan_memo). A group no candidate fits is
    an error naming the SPM the smallest would need. A lone matmul (loads, matmul, store) of one
    float type also has its K splits as candidates: K in panels of 128, 256 or 512, the f32
    result window accumulated in SPM, the operand panels each loaded once per grid row or column
    and sent to its other tiles over the NoC or loaded by every tile (`k-split`).
  }];
  let constructor = "::tg::compiler::tx8be::createGroupCostPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
  let options = [
    Option<"chipConfig", "chip-config", "std::string", /*default=*/"\"\"",
           "A chip configuration JSON file (docs/sim.md); when empty the module's tx8be.chip, else the TX8 chip's defaults">,
    Option<"kSplit", "k-split", "std::string", /*default=*/"\"search\"",
           "K splits of a lone matmul (K in panels, the f32 result accumulated in SPM): search (weighed against K whole by the estimate), always, never">
  ];
  let statistics = [
    Statistic<"searched", "searched", "Groups whose candidates were searched">,
    Statistic<"reused", "reused", "Groups that took an earlier group's plan (GroupKey)">,
    Statistic<"candidates", "candidates", "Sharding candidates tried">
  ];
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
