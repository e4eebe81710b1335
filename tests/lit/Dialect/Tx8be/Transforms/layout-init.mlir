// layout-init lays out gemm and CNN ops from their kind and leaves the rest "Unknown".
// RUN: tilegraph-opt --layout-init --split-input-file %s | FileCheck %s
// RUN: tilegraph-opt --layout-init=nhwc --split-input-file %s | FileCheck %s --check-prefix=NHWC

// CHECK-LABEL: func.func @gemm
// CHECK: tx8be.matmul {{.*}}layout_str = "NTensor-NTensor-NTensor"
// CHECK: tx8be.relu
// CHECK-NOT: layout_str
// CHECK: return
func.func @gemm(%x: tensor<3x8xf32>) -> tensor<3x4xf32> {
  %w = tx8be.constant {value = dense<0.5> : tensor<1x4x8xf32>} : tensor<1x4x8xf32>
  %wv = tx8be.reshape %w : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
  %y = tx8be.matmul %wv, %x : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<3x4xf32>
  %r = tx8be.relu %y : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @cnn
// CHECK: tx8be.conv2d {{.*}}layout_str = "NCHW-OIHW-NCHW"
// CHECK: tx8be.batchnorm_inference {{.*}}layout_str = "NCHW-NTensor-NTensor-NTensor-NTensor-NCHW"
// CHECK: tx8be.pool2d {{.*}}layout_str = "NCHW-NCHW"
// NHWC-LABEL: func.func @cnn
// NHWC: tx8be.conv2d {{.*}}layout_str = "NHWC-HWOI-NHWC"
// NHWC: tx8be.batchnorm_inference {{.*}}layout_str = "NHWC-NTensor-NTensor-NTensor-NTensor-NHWC"
func.func @cnn(%x: tensor<1x3x6x6xf32>, %k: tensor<8x3x3x3xf32>, %c: tensor<8xf32>) -> tensor<1x8x2x2xf32> {
  %0 = tx8be.conv2d %x, %k {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
       : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
  %1 = tx8be.batchnorm_inference %0, %c, %c, %c, %c {epsilon = 1.0e-5 : f32}
       : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  %2 = tx8be.pool2d %1 {mode = "max", kernel = [:i64 2, 2], strides = [:i64 2, 2], pads = [:i64 0, 0]}
       : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
  return %2 : tensor<1x8x2x2xf32>
}

// -----

// A layout given before is kept.
// CHECK-LABEL: func.func @given
// CHECK: layout_str = "Tensor-Tensor-Tensor"
func.func @given(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x2xf32> {
  %0 = tx8be.matmul %a, %b {layout_str = "Tensor-Tensor-Tensor"} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Ops inside a subgraph (one chip's program) are laid out as the function's.
// CHECK-LABEL: func.func @subgraph
// CHECK: tx8be.subgraph
// CHECK: tx8be.conv2d {{.*}}layout_str = "NCHW-OIHW-NCHW"
// CHECK: tx8be.matmul {{.*}}layout_str = "NTensor-Tensor-Tensor"
// CHECK: tx8be.yield
// NHWC-LABEL: func.func @subgraph
// NHWC: tx8be.conv2d {{.*}}layout_str = "NHWC-HWOI-NHWC"
func.func @subgraph(%x: tensor<1x3x6x6xf32>, %k: tensor<8x3x3x3xf32>, %w: tensor<4x128xf32>) -> tensor<1x4xf32> {
  %0 = tx8be.subgraph(%x, %k, %w) {subgraph_id = 0 : i32}
       : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>, tensor<4x128xf32>) -> tensor<1x4xf32> {
  ^bb0(%a: tensor<1x3x6x6xf32>, %b: tensor<8x3x3x3xf32>, %c: tensor<4x128xf32>):
    %1 = tx8be.conv2d %a, %b {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
         : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
    %2 = tx8be.reshape %1 : (tensor<1x8x4x4xf32>) -> tensor<1x128xf32>
    %3 = tx8be.matmul %c, %2 : (tensor<4x128xf32>, tensor<1x128xf32>) -> tensor<1x4xf32>
    tx8be.yield %3 : tensor<1x4xf32>
  }
  return %0 : tensor<1x4xf32>
}
