// group-mapping puts every group on the module's tile mesh and numbers the groups.
// RUN: tilegraph-opt --group-mapping --split-input-file -verify-diagnostics %s | FileCheck %s

// CHECK-LABEL: func.func @mesh
// CHECK: tx8be.group(%arg0) {dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 3>, group_id = 0 : i32}
// CHECK: tx8be.group(%{{.*}}) {dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 3>, group_id = 1 : i32}
module attributes {tx8be.tile_dx = 2 : i32, tx8be.tile_dy = 3 : i32} {
  func.func @mesh(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = tx8be.group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %r = tx8be.relu %a : (tensor<4xf32>) -> tensor<4xf32>
      tx8be.yield %r : tensor<4xf32>
    }
    %1 = tx8be.group(%0) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %r = tx8be.exp %a : (tensor<4xf32>) -> tensor<4xf32>
      tx8be.yield %r : tensor<4xf32>
    }
    return %1 : tensor<4xf32>
  }
}

// -----

// Without mesh attributes: the TX8 chip's 4x4.
// CHECK-LABEL: func.func @default_mesh
// CHECK: dev_region = #tx8be.region<x = 0, y = 0, width = 4, height = 4>
func.func @default_mesh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tx8be.group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = tx8be.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{tx8be.tile_dy must be a positive number of tiles, got "four"}}
module attributes {tx8be.tile_dy = "four"} {
  func.func @bad(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
