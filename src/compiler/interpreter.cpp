#include "tilegraph/compiler/interpreter.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/Diagnostics.h>

#include "core_bridge.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/core/error.h"

using namespace mlir;

namespace tg::compiler {

namespace {

std::string location_of(Operation* op) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << op->getLoc();
  return stream.str();
}

// Checks `value` has the type of `expected` (an argument or block argument).
void check_type(const HostTensor& value, Type expected, const std::string& what) {
  auto type = expected.dyn_cast<RankedTensorType>();
  const std::optional<DType> dtype = type ? tx8be::core_dtype(type.getElementType()) : std::nullopt;
  if (!dtype) throw Error("interpret: " + what + " has type " + type_string(expected) + ", which has no core dtype");
  if (value.type() != *dtype || value.shape() != std::vector<int64_t>(type.getShape().begin(), type.getShape().end())) {
    throw Error("interpret: " + what + " is " + type_string(expected) + " but the value given is " + value.describe());
  }
}

class Interpreter {
 public:
  explicit Interpreter(const ConstantData& constants) : constants_(constants) {}

  // Runs `block` with its arguments bound to `arguments`; returns its terminator's operands.
  std::vector<HostTensor> run(Block& block, std::vector<HostTensor> arguments) {
    for (size_t i = 0; i < arguments.size(); ++i) values_[block.getArgument(unsigned(i))] = std::move(arguments[i]);
    for (Operation& op : block.without_terminator()) run(&op);
    std::vector<HostTensor> results;
    for (Value v : block.getTerminator()->getOperands()) results.push_back(get(v));
    return results;
  }

 private:
  const HostTensor& get(Value value) {
    auto it = values_.find(value);
    if (it == values_.end()) throw Error("interpret: a value is used before it is computed");
    return it->second;
  }

  void run(Operation* op) {
    if (isa<tx8be::GroupOp, tx8be::SubgraphOp>(op)) {
      std::vector<HostTensor> inputs;
      for (Value v : op->getOperands()) inputs.push_back(get(v));
      const std::vector<HostTensor> results = run(op->getRegion(0).front(), std::move(inputs));
      for (auto [result, value] : llvm::zip(op->getResults(), results)) values_[result] = value;
      return;
    }
    auto compute = dyn_cast<tx8be::ComputeInterface>(op);
    if (!compute) {
      throw Error("interpret: " + op->getName().getStringRef().str() + " at " + location_of(op) +
                  " cannot be interpreted (not a tx8be compute op)");
    }
    tx8be::ComputeParam param;
    param.constants = &constants_;
    for (Value v : op->getOperands()) param.inputs.push_back(&get(v));
    // Capture the op's diagnostic so that the error says why.
    std::string diagnostic;
    ScopedDiagnosticHandler handler(op->getContext(), [&](Diagnostic& d) {
      diagnostic = d.str();
      return success();
    });
    if (failed(compute.compute(param))) {
      throw Error("interpret: " + op->getName().getStringRef().str() + " at " + location_of(op) + ": " + diagnostic);
    }
    check_type(param.output, op->getResult(0).getType(), op->getName().getStringRef().str() + "'s result");
    values_[op->getResult(0)] = std::move(param.output);
  }

  const ConstantData& constants_;
  llvm::DenseMap<Value, HostTensor> values_;
};

}  // namespace

std::vector<HostTensor> interpret(ModuleOp module, std::span<const HostTensor> inputs, const ConstantData& constants,
                                  const std::string& function) {
  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func || func.isExternal()) throw Error("interpret: the module has no function @" + function + " with a body");
  if (inputs.size() != func.getNumArguments()) {
    throw Error("interpret: @" + function + " takes " + std::to_string(func.getNumArguments()) + " arguments, " +
                std::to_string(inputs.size()) + " given");
  }
  std::vector<HostTensor> arguments;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_type(inputs[i], func.getArgument(unsigned(i)).getType(), "argument " + std::to_string(i));
    arguments.push_back(inputs[i]);
  }
  Interpreter interpreter(constants);
  return interpreter.run(func.getBody().front(), std::move(arguments));
}

}  // namespace tg::compiler
