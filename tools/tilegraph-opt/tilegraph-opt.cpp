// tilegraph-opt: mlir-opt for tx8be modules. Parses a module, runs the passes named on the command
// line (each tx8be pass has its own flag; --pass-pipeline takes a textual pipeline) and prints
// the result; --help lists them.
#include <mlir/IR/DialectRegistry.h>
#include <mlir/Tools/mlir-opt/MlirOptMain.h>
#include <mlir/Transforms/Passes.h>

#include "tilegraph/compiler/registration.h"

int main(int argc, char** argv) {
  mlir::DialectRegistry registry;
  tg::compiler::register_dialects(registry);
  tg::compiler::register_passes();
  mlir::registerTransformsPasses();  // canonicalize, cse, ... as in mlir-opt
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tilegraph-opt: the TX8 compiler's pass driver\n", registry));
}
