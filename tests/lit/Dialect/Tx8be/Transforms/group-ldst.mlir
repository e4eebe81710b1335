// group-ldst: loads for the inputs a group's ops load, stores for the results they store;
// group_tag 0 for a group that moves data through SPM, 2 for one working in DDR.
// RUN: tilegraph-opt --group-ldst %s | FileCheck %s

// CHECK-LABEL: func.func @boundaries
// CHECK: tx8be.group(%arg0) {group_tag = 0 : i32}
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<2x4xf32>):
// CHECK-NEXT: %[[L:.*]] = tx8be.load_var %[[A]]
// CHECK-NEXT: %[[R:.*]] = tx8be.relu %[[L]]
// CHECK-NEXT: %[[S:.*]] = tx8be.store_var %[[R]]
// CHECK-NEXT: tx8be.yield %[[S]]
// The reshape works in DDR: no load or store, group_tag 2.
// CHECK: tx8be.group(%{{.*}}) {group_tag = 2 : i32}
// CHECK-NEXT: ^bb0(%[[B:.*]]: tensor<2x4xf32>):
// CHECK-NEXT: %[[V:.*]] = tx8be.reshape %[[B]]
// CHECK-NEXT: tx8be.yield %[[V]]
// The gather loads its indices but reads the table in DDR.
// CHECK: tx8be.group(%{{.*}}, %arg1) {group_tag = 0 : i32}
// CHECK-NEXT: ^bb0(%[[T:.*]]: tensor<8xf32>, %[[I:.*]]: tensor<1x3xi32>):
// CHECK-NEXT: %[[LI:.*]] = tx8be.load_var %[[I]]
// CHECK-NEXT: tx8be.gather %[[T]], %[[LI]]
func.func @boundaries(%x: tensor<2x4xf32>, %i: tensor<1x3xi32>) -> tensor<1x3x8xf32> {
  %0 = tx8be.group(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %r = tx8be.relu %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
    tx8be.yield %r : tensor<2x4xf32>
  }
  %1 = tx8be.group(%0) : (tensor<2x4xf32>) -> tensor<8xf32> {
  ^bb0(%b: tensor<2x4xf32>):
    %v = tx8be.reshape %b : (tensor<2x4xf32>) -> tensor<8xf32>
    tx8be.yield %v : tensor<8xf32>
  }
  %2 = tx8be.group(%1, %i) : (tensor<8xf32>, tensor<1x3xi32>) -> tensor<1x3x8xf32> {
  ^bb0(%t: tensor<8xf32>, %j: tensor<1x3xi32>):
    %g = tx8be.gather %t, %j : (tensor<8xf32>, tensor<1x3xi32>) -> tensor<1x3x8xf32>
    tx8be.yield %g : tensor<1x3x8xf32>
  }
  return %2 : tensor<1x3x8xf32>
}
