// opt-barrier: a barrier only where a later group reads a group's results and no barrier between
// them synchronizes the tiles already; independent groups run without one.
// RUN: tilegraph-opt --split-input-file --opt-barrier %s | FileCheck %s

// A diamond in layer order: layers {a}, {b, c}, {d}. One barrier after a (b and c read it), one
// after c, the last of the middle layer (d reads b and c); none after b, none after d.
// CHECK-LABEL: func.func @diamond
// CHECK: %[[A:.*]] = tx8be.group(%arg0) {need_barrier = true}
// CHECK: %[[B:.*]] = tx8be.group(%[[A]]) {need_barrier = false}
// CHECK: %[[C:.*]] = tx8be.group(%[[A]]) {need_barrier = true}
// CHECK: tx8be.group(%[[B]], %[[C]]) {need_barrier = false}
func.func @diamond(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = tx8be.group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %r = tx8be.relu %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  %b = tx8be.group(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %r = tx8be.exp %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  %c = tx8be.group(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %r = tx8be.neg %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  %d = tx8be.group(%b, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>, %j: tensor<4xf32>):
    %r = tx8be.add %i, %j : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  return %d : tensor<4xf32>
}

// -----

// A chain: a barrier after every group but the last.
// CHECK-LABEL: func.func @chain
// CHECK: tx8be.group(%arg0) {need_barrier = true}
// CHECK: tx8be.group(%{{.*}}) {need_barrier = true}
// CHECK: tx8be.group(%{{.*}}) {need_barrier = false}
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = tx8be.group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %r = tx8be.relu %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  %b = tx8be.group(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %r = tx8be.exp %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  %c = tx8be.group(%b) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %r = tx8be.neg %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  return %c : tensor<4xf32>
}

// -----

// Two independent groups on disjoint tiles, then one reading both: a single barrier, after the
// second (it covers the first too); a group whose results only the function returns needs none.
// CHECK-LABEL: func.func @independent
// CHECK: tx8be.group(%arg0) {dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 4>, need_barrier = false}
// CHECK: tx8be.group(%arg1) {dev_region = #tx8be.region<x = 2, y = 0, width = 2, height = 4>, need_barrier = true}
// CHECK: tx8be.group(%{{.*}}, %{{.*}}) {need_barrier = false}
// CHECK: tx8be.group(%arg0) {need_barrier = false}
func.func @independent(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = tx8be.group(%x) {dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 4>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %r = tx8be.relu %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  %b = tx8be.group(%y) {dev_region = #tx8be.region<x = 2, y = 0, width = 2, height = 4>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %r = tx8be.exp %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  %c = tx8be.group(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>, %j: tensor<4xf32>):
    %r = tx8be.add %i, %j : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  %d = tx8be.group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %r = tx8be.neg %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  return %c, %d : tensor<4xf32>, tensor<4xf32>
}
