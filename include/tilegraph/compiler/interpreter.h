#pragma once
// Evaluates a tx8be module on the host through each op's Compute interface (the core reference
// implementation): the oracle for the compiler's passes, which must leave a module's results
// unchanged. Ops run in order; group and subgraph bodies run with their inputs bound to their
// block arguments.
#include <span>
#include <string>
#include <vector>

#include <mlir/IR/BuiltinOps.h>

#include "tilegraph/compiler/constant_data.h"
#include "tilegraph/compiler/host_tensor.h"

namespace tg::compiler {

// The results of function `function` of `module` for `inputs` (one per argument, of its type;
// the data of #tx8be.external constants from `constants`). Throws tg::Error for inputs that do
// not match the arguments, a missing function, an op that cannot be computed (with its
// diagnostic and location) or an op of another dialect.
std::vector<HostTensor> interpret(mlir::ModuleOp module, std::span<const HostTensor> inputs,
                                  const ConstantData& constants = {}, const std::string& function = "main");

}  // namespace tg::compiler
