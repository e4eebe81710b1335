// tx8be-infer-shapes leaves consistent types as they are (a module that parses is consistent: the
// verifiers check every result type against its operands), inside groups too; the unit test
// test_compiler's InferShapesFollowsAChangedArgument checks that it repairs stale ones.
// RUN: tilegraph-opt --tx8be-infer-shapes %s | FileCheck %s
// RUN: tilegraph-opt --pass-pipeline='func.func(tx8be-infer-shapes)' --mlir-print-ir-after-all %s 2>&1 | FileCheck %s --check-prefix=AFTER

// CHECK-LABEL: func.func @block(%arg0: tensor<2x8xf32>) -> tensor<2x4xf32>
// CHECK: tx8be.rmsnorm %arg0 {{.*}} -> tensor<2x8xf32>
// CHECK: tx8be.group
// CHECK: tx8be.matmul {{.*}} -> tensor<2x4xf32>
// CHECK: tx8be.yield {{.*}} : tensor<2x4xf32>
// CHECK: return {{.*}} : tensor<2x4xf32>
// AFTER: IR Dump After InferShapes
func.func @block(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = tx8be.constant {value = dense<0.5> : tensor<4x8xf32>} : tensor<4x8xf32>
  %n = tx8be.rmsnorm %x {epsilon = 1.0e-5 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = tx8be.group(%w, %n) : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<2x8xf32>):
    %m = tx8be.matmul %a, %b : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x4xf32>
    tx8be.yield %m : tensor<2x4xf32>
  }
  return %g : tensor<2x4xf32>
}
