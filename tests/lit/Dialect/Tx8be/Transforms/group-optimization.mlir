// group-optimization gives every compute op outside a group its own group, with the constants
// only it uses inside; groups formed before are left alone.
// RUN: tilegraph-opt --group-optimization %s | FileCheck %s

// CHECK-LABEL: func.func @singles
// CHECK: %[[A:.*]] = tx8be.group(%arg0) : (tensor<2x8xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<2x8xf32>):
// CHECK-NEXT: %[[W:.*]] = tx8be.load_const
// CHECK-NEXT: %[[M:.*]] = tx8be.matmul %[[W]], %[[X]]
// CHECK-NEXT: tx8be.yield %[[M]]
// CHECK: %[[B:.*]] = tx8be.group(%[[A]], %[[SHARED:.*]]) :
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.add
// CHECK: tx8be.group(%[[B]], %[[SHARED]])
// CHECK: tx8be.group(%{{.*}}) {group_tag = 0 : i32}
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.relu
func.func @singles(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = tx8be.load_const {const_map_id = 0, value = dense<0.5> : tensor<4x8xf32>} : tensor<4x8xf32>
  %s = tx8be.load_const {const_map_id = 1, value = dense<0.5> : tensor<1x4xf32>} : tensor<1x4xf32>
  %0 = tx8be.matmul %w, %x : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x4xf32>
  %1 = tx8be.add %0, %s : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %2 = tx8be.mul %1, %s : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %3 = tx8be.group(%2) {group_tag = 0 : i32} : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %r = tx8be.relu %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
    tx8be.yield %r : tensor<2x4xf32>
  }
  return %3 : tensor<2x4xf32>
}

// A subgraph's ops each get a group inside its body.
// CHECK-LABEL: func.func @subgraph
// CHECK: tx8be.subgraph
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.group
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.exp
// CHECK: tx8be.group
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tx8be.neg
func.func @subgraph(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = tx8be.subgraph(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %1 = tx8be.exp %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %2 = tx8be.neg %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
    tx8be.yield %2 : tensor<2x4xf32>
  }
  return %0 : tensor<2x4xf32>
}
