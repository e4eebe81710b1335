// layout-transmit spreads the gemm and CNN layouts forwards and backwards, stops at reshape and
// broadcast, and defaults the rest to Tensor / NTensor.
// RUN: tilegraph-opt --layout-init --layout-transmit --split-input-file %s | FileCheck %s
// RUN: tilegraph-opt --layout-transmit --split-input-file %s | FileCheck %s --check-prefix=ALONE

// The relu before the conv takes its input layout (backwards), the add and silu after it the
// output layout (forwards), the bias constant the add's; the reshape stops the spread and what
// follows it gets the default.
// CHECK-LABEL: func.func @cnn
// CHECK: tx8be.relu {{.*}}layout_str = "NCHW"
// CHECK: tx8be.conv2d {{.*}}layout_str = "NCHW-OIHW-NCHW"
// CHECK: tx8be.constant {{.*}}layout_str = "NCHW"
// CHECK: tx8be.add {{.*}}layout_str = "NCHW"
// CHECK: tx8be.silu {{.*}}layout_str = "NCHW"
// CHECK: tx8be.reshape {{.*}}layout_str = "NTensor"
// CHECK: tx8be.exp {{.*}}layout_str = "NTensor"
// ALONE-LABEL: func.func @cnn
// ALONE: tx8be.relu {{.*}}layout_str = "Tensor"
// ALONE: tx8be.conv2d {{.*}}layout_str = "Tensor"
func.func @cnn(%x: tensor<1x3x6x6xf32>, %k: tensor<8x3x3x3xf32>) -> tensor<8x16xf32> {
  %r = tx8be.relu %x : (tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
  %0 = tx8be.conv2d %r, %k {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
       : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
  %b = tx8be.constant {value = dense<0.5> : tensor<1x8x1x1xf32>} : tensor<1x8x1x1xf32>
  %1 = tx8be.add %0, %b : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %2 = tx8be.silu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %3 = tx8be.reshape %2 : (tensor<1x8x4x4xf32>) -> tensor<8x16xf32>
  %4 = tx8be.exp %3 : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %4 : tensor<8x16xf32>
}

// -----

// A broadcast stops the spread too: the add whose first operand it is keeps the default,
// while the relu on the conv takes the conv's layout.
// CHECK-LABEL: func.func @broadcast
// CHECK: tx8be.conv2d {{.*}}layout_str = "NCHW-OIHW-NCHW"
// CHECK: tx8be.relu {{.*}}layout_str = "NCHW"
// CHECK: tx8be.broadcast {{.*}}layout_str = "Tensor"
// CHECK: tx8be.add {{.*}}layout_str = "Tensor"
func.func @broadcast(%x: tensor<1x3x6x6xf32>, %k: tensor<8x3x3x3xf32>, %s: tensor<1x8x1x1xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %0 = tx8be.conv2d %x, %k {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
       : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
  %r = tx8be.relu %0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %b = tx8be.broadcast %s : (tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %a = tx8be.add %b, %0 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r, %a : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// -----

// Layouts spread inside a subgraph's body and across it: the relu inside takes the layout of
// the conv outside that defines its input, the silu the conv's inside; the exp after the
// reshape gets the default.
// CHECK-LABEL: func.func @subgraph
// CHECK: tx8be.conv2d {{.*}}layout_str = "NCHW-OIHW-NCHW"
// CHECK: tx8be.subgraph
// CHECK: tx8be.relu {{.*}}layout_str = "NCHW"
// CHECK: tx8be.conv2d {{.*}}layout_str = "NCHW-OIHW-NCHW"
// CHECK: tx8be.silu {{.*}}layout_str = "NCHW"
// CHECK: tx8be.reshape {{.*}}layout_str = "Tensor"
// CHECK: tx8be.exp {{.*}}layout_str = "Tensor"
func.func @subgraph(%x: tensor<1x3x6x6xf32>, %k: tensor<3x3x1x1xf32>, %k2: tensor<8x3x3x3xf32>) -> tensor<1x128xf32> {
  %0 = tx8be.conv2d %x, %k {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
       : (tensor<1x3x6x6xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x6x6xf32>
  %1 = tx8be.subgraph(%0, %k2) : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x128xf32> {
  ^bb0(%a: tensor<1x3x6x6xf32>, %b: tensor<8x3x3x3xf32>):
    %r = tx8be.relu %a : (tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
    %c = tx8be.conv2d %r, %b {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
         : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
    %s = tx8be.silu %c : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %f = tx8be.reshape %s : (tensor<1x8x4x4xf32>) -> tensor<1x128xf32>
    %e = tx8be.exp %f : (tensor<1x128xf32>) -> tensor<1x128xf32>
    tx8be.yield %e : tensor<1x128xf32>
  }
  return %1 : tensor<1x128xf32>
}
