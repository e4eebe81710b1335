#pragma once
// What the software pipeline (SwPipeline.cpp) decides about one op of a group body, shared with
// the SPM allocation and the pass that writes the pipeline's stages.
#include <mlir/IR/Operation.h>

#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"

namespace tg::compiler::tx8be {

// The engine that runs `op` in a pipeline cycle: RDMA loads (load_var, load_const), WDMA stores
// (store_var), the NE (matmul, conv, attention), the TDMA (channel_norm, transpose and the other
// data movement) and the CGRA (CT) for the rest.
PipelineEngine pipelineEngine(mlir::Operation* op);

// Whether `op` is issued at all: not the yield, nor a load_const its consumer reads in place.
bool isPipelined(mlir::Operation* op);

// A group whose ops work in DDR (group_tag 2): no pipeline, no SPM.
bool worksInDdr(GroupOp group);

}  // namespace tg::compiler::tx8be
