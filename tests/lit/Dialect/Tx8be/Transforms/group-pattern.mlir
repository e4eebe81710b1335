// group-pattern groups chains of ops matching the built-in patterns and a pattern file; the
// longest match wins, each op joins one group, constants only a group uses move inside.
// RUN: tilegraph-opt --group-pattern --split-input-file %s | FileCheck %s
// RUN: tilegraph-opt --pass-pipeline='func.func(group-pattern{pattern-file=%S/Inputs/extra-group-patterns.txt})' --split-input-file %s | FileCheck %s --check-prefix=FILE
// RUN: tilegraph-opt --pass-pipeline='func.func(group-pattern{no-builtin=true pattern-file=%S/Inputs/extra-group-patterns.txt})' --split-input-file %s | FileCheck %s --check-prefix=ONLYFILE
// RUN: not tilegraph-opt --pass-pipeline='func.func(group-pattern{pattern-file=%S/Inputs/bad-group-patterns.txt})' %s 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not tilegraph-opt --pass-pipeline='func.func(group-pattern{pattern-file=%S/Inputs/missing.txt})' %s 2>&1 | FileCheck %s --check-prefix=MISSING
// BAD: bad-group-patterns.txt:2: 'frobnicate' is not a tx8be op
// MISSING: cannot read the pattern file '{{.*}}missing.txt'

// conv -> batchnorm -> relu (priority 4, three ops) beats conv -> relu; the batchnorm's
// vector constants move inside; the pool after it stays out.
// CHECK-LABEL: func.func @cnn
// CHECK: %[[G:.*]] = tx8be.group(%arg0, %arg1)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.constant
// CHECK-NEXT: tx8be.conv2d
// CHECK-NEXT: tx8be.batchnorm_inference
// CHECK-NEXT: tx8be.relu
// CHECK-NEXT: tx8be.yield
// CHECK: tx8be.pool2d %[[G]]
func.func @cnn(%x: tensor<1x3x6x6xf32>, %k: tensor<8x3x3x3xf32>) -> tensor<1x8x2x2xf32> {
  %c = tx8be.constant {value = dense<1.0> : tensor<8xf32>} : tensor<8xf32>
  %0 = tx8be.conv2d %x, %k {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
       : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
  %1 = tx8be.batchnorm_inference %0, %c, %c, %c, %c {epsilon = 1.0e-5 : f32}
       : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  %2 = tx8be.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %3 = tx8be.pool2d %2 {mode = "max", kernel = [:i64 2, 2], strides = [:i64 2, 2], pads = [:i64 0, 0]}
       : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
  return %3 : tensor<1x8x2x2xf32>
}

// -----

// matmul -> add -> silu; the matmul result is also returned, so the group yields it too.
// CHECK-LABEL: func.func @gemm
// CHECK: %[[G:.*]]:2 = tx8be.group(%arg1, %arg0, %arg2)
// CHECK: tx8be.matmul
// CHECK-NEXT: tx8be.add
// CHECK-NEXT: tx8be.silu
// CHECK-NEXT: tx8be.yield
// CHECK: return %[[G]]#{{[01]}}, %[[G]]#{{[01]}}
func.func @gemm(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<1x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = tx8be.matmul %w, %x : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x4xf32>
  %1 = tx8be.add %0, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %2 = tx8be.silu %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2, %0 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// From the file: `exp *` then tanh matches three exps and the tanh (four ops) over the
// built-in `add *`; without the file nothing here matches except the adds.
// FILE-LABEL: func.func @wildcard
// FILE: tx8be.group
// FILE-NEXT: ^bb0(
// FILE-NEXT: tx8be.add
// FILE-NEXT: tx8be.add
// FILE-NEXT: tx8be.yield
// FILE: tx8be.group
// FILE-NEXT: ^bb0(
// FILE-NEXT: tx8be.exp
// FILE-NEXT: tx8be.exp
// FILE-NEXT: tx8be.exp
// FILE-NEXT: tx8be.tanh
// FILE-NEXT: tx8be.yield
// Only the file's patterns: the adds stay ungrouped.
// ONLYFILE-LABEL: func.func @wildcard
// ONLYFILE-NEXT: tx8be.add
// ONLYFILE-NEXT: tx8be.add
// ONLYFILE-NEXT: tx8be.group
// ONLYFILE-NEXT: ^bb0(
// ONLYFILE-NEXT: tx8be.exp
// CHECK-LABEL: func.func @wildcard
// CHECK: tx8be.group
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.add
// CHECK-NEXT: tx8be.add
// CHECK-NEXT: tx8be.yield
// CHECK-NOT: tx8be.group
// CHECK: return
func.func @wildcard(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tx8be.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = tx8be.add %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = tx8be.exp %1 : (tensor<4xf32>) -> tensor<4xf32>
  %3 = tx8be.exp %2 : (tensor<4xf32>) -> tensor<4xf32>
  %4 = tx8be.exp %3 : (tensor<4xf32>) -> tensor<4xf32>
  %5 = tx8be.tanh %4 : (tensor<4xf32>) -> tensor<4xf32>
  return %5 : tensor<4xf32>
}

// -----

// A chain that would leave and re-enter the group is not grouped: rmsnorm -> mul matches, but
// the mul also reads the rmsnorm through the exp outside. The mul alone matches `mul *`.
// CHECK-LABEL: func.func @not_convex
// CHECK: %[[N:.*]] = tx8be.rmsnorm %arg0
// CHECK-NEXT: %[[E:.*]] = tx8be.exp %[[N]]
// CHECK-NEXT: tx8be.group(%[[N]], %[[E]])
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.mul
// CHECK-NEXT: tx8be.yield
func.func @not_convex(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tx8be.rmsnorm %x {epsilon = 1.0e-5 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = tx8be.exp %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = tx8be.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// A subgraph's body is grouped as the function's: conv -> relu inside it becomes a group there,
// the matmul -> add outside one in the function.
// CHECK-LABEL: func.func @subgraph
// CHECK: tx8be.group
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.matmul
// CHECK-NEXT: tx8be.add
// CHECK: tx8be.subgraph
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.group
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.conv2d
// CHECK-NEXT: tx8be.relu
// CHECK-NEXT: tx8be.yield
// CHECK: tx8be.pool2d
func.func @subgraph(%x: tensor<1x3x6x6xf32>, %k: tensor<8x3x3x3xf32>, %w: tensor<4x8xf32>, %v: tensor<2x8xf32>,
                    %b: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<1x8x2x2xf32>) {
  %m = tx8be.matmul %w, %v : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x4xf32>
  %s = tx8be.add %m, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %0 = tx8be.subgraph(%x, %k) : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x2x2xf32> {
  ^bb0(%a: tensor<1x3x6x6xf32>, %c: tensor<8x3x3x3xf32>):
    %1 = tx8be.conv2d %a, %c {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
         : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
    %2 = tx8be.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tx8be.pool2d %2 {mode = "max", kernel = [:i64 2, 2], strides = [:i64 2, 2], pads = [:i64 0, 0]}
         : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
    tx8be.yield %3 : tensor<1x8x2x2xf32>
  }
  return %s, %0 : tensor<2x4xf32>, tensor<1x8x2x2xf32>
}
