// move-constant: each use of a constant reads it through a load_const of its container id; ids
// put the constants above 4 KiB per tile first; a constant no user loads is bypass_codegen.
// RUN: tilegraph-opt --move-constant --split-input-file -verify-diagnostics %s | FileCheck %s

// With one tile the threshold is 4 KiB: the 8 KiB weight (registered second) gets id 0, the
// 16-byte bias id 1; the bias, used twice, is read by two load_consts of one id.
// CHECK-LABEL: func.func @ids
// CHECK-NOT: tx8be.constant
// CHECK-DAG: %[[W:.*]] = tx8be.load_const {const_map_id = 0 : i64, value = dense<2.500000e-01> : tensor<32x64xf32>}
// CHECK-DAG: %[[B1:.*]] = tx8be.load_const {const_map_id = 1 : i64, layout_str = "Tensor", value = dense<1.000000e+00> : tensor<1x4xf32>}
// CHECK-DAG: %[[B2:.*]] = tx8be.load_const {const_map_id = 1 : i64, layout_str = "Tensor", value = dense<1.000000e+00> : tensor<1x4xf32>}
// CHECK: tx8be.matmul %[[W]], %arg0
module attributes {tx8be.tile_dx = 1 : i32, tx8be.tile_dy = 1 : i32} {
  func.func @ids(%x: tensor<2x64xf32>, %y: tensor<2x4xf32>) -> (tensor<2x32xf32>, tensor<2x4xf32>) {
    %b = tx8be.constant {value = dense<1.0> : tensor<1x4xf32>, layout_str = "Tensor"} : tensor<1x4xf32>
    %w = tx8be.constant {value = dense<0.25> : tensor<32x64xf32>} : tensor<32x64xf32>
    %m = tx8be.matmul %w, %x : (tensor<32x64xf32>, tensor<2x64xf32>) -> tensor<2x32xf32>
    %a = tx8be.add %y, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
    %c = tx8be.mul %a, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
    return %m, %c : tensor<2x32xf32>, tensor<2x4xf32>
  }
}

// -----

// On the default 4x4 mesh the threshold is 64 KiB: both stay in program order.
// CHECK-LABEL: func.func @mesh
// CHECK: tx8be.load_const {const_map_id = 0 : i64, value = dense<1.000000e+00> : tensor<1x4xf32>}
// CHECK: tx8be.load_const {const_map_id = 1 : i64, value = dense<2.500000e-01> : tensor<32x64xf32>}
func.func @mesh(%x: tensor<2x64xf32>, %y: tensor<2x4xf32>) -> (tensor<2x32xf32>, tensor<2x4xf32>) {
  %b = tx8be.constant {value = dense<1.0> : tensor<1x4xf32>} : tensor<1x4xf32>
  %w = tx8be.constant {value = dense<0.25> : tensor<32x64xf32>} : tensor<32x64xf32>
  %m = tx8be.matmul %w, %x : (tensor<32x64xf32>, tensor<2x64xf32>) -> tensor<2x32xf32>
  %a = tx8be.add %y, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %m, %a : tensor<2x32xf32>, tensor<2x4xf32>
}

// -----

// An embedding table is read in DDR by the gather and a reshaped constant by the DMA engine:
// no load is generated for them.
// CHECK-LABEL: func.func @bypass
// CHECK: tx8be.load_const {bypass_codegen = true, const_map_id = 0
// CHECK: tx8be.load_const {bypass_codegen = true, const_map_id = 1
// CHECK: tx8be.gather
func.func @bypass(%i: tensor<3xi32>) -> (tensor<3x4xf32>, tensor<4x4xf32>) {
  %t = tx8be.constant {value = dense<1.0> : tensor<10x4xf32>} : tensor<10x4xf32>
  %u = tx8be.constant {value = dense<1.0> : tensor<16xf32>} : tensor<16xf32>
  %g = tx8be.gather %t, %i : (tensor<10x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  %r = tx8be.reshape %u : (tensor<16xf32>) -> tensor<4x4xf32>
  return %g, %r : tensor<3x4xf32>, tensor<4x4xf32>
}

// -----

// expected-error @+1 {{tx8be.tile_dx must be a positive number of tiles, got 0 : i32}}
module attributes {tx8be.tile_dx = 0 : i32} {
  func.func @bad_mesh(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}
