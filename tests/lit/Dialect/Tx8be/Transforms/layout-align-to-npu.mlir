// layout-align-to-npu converts values between the compact and the channel-aligned form where
// an op and its user disagree, and records each op's form in dev_info.mem_layout.
// RUN: tilegraph-opt --layout-align-to-npu --split-input-file %s | FileCheck %s

// The argument is compact: a channel_norm aligns it for the conv (and the conv's weight, and
// batchnorm's vectors); the relu follows its aligned input; the reshape needs compact again.
// CHECK-LABEL: func.func @cnn
// CHECK: %[[XA:.*]] = tx8be.channel_norm %arg0 {dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Cx
// CHECK: %[[KA:.*]] = tx8be.channel_norm %arg1 {dev_info = #tx8be.dev_attr<{{.*}}mem_layout = NCx
// CHECK: %[[C:.*]] = tx8be.conv2d %[[XA]], %[[KA]] {dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Cx
// CHECK: %[[R:.*]] = tx8be.relu %[[C]] {dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Cx
// CHECK: %[[RC:.*]] = tx8be.channel_norm %[[R]] {dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Tensor
// CHECK: tx8be.reshape %[[RC]] {dev_info = #tx8be.dev_attr<{{.*}}mem_layout = NTensor
func.func @cnn(%x: tensor<1x3x6x6xf32>, %k: tensor<8x3x3x3xf32>) -> tensor<8x16xf32> {
  %0 = tx8be.conv2d %x, %k {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
       : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
  %1 = tx8be.relu %0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %2 = tx8be.reshape %1 : (tensor<1x8x4x4xf32>) -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// -----

// Ops that take either form and get compact inputs need nothing; an aligned result returned
// from the function goes back to compact; one channel_norm per use.
// CHECK-LABEL: func.func @mixed
// CHECK: tx8be.add %arg0, %arg0 {dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Tensor
// CHECK: tx8be.channel_norm
// CHECK: tx8be.channel_norm
// CHECK: tx8be.batchnorm_inference
// CHECK: %[[BACK:.*]] = tx8be.channel_norm {{.*}}mem_layout = Tensor
// CHECK: return %[[BACK]]
func.func @mixed(%x: tensor<1x4x2x2xf32>, %c: tensor<4xf32>) -> tensor<1x4x2x2xf32> {
  %0 = tx8be.add %x, %x : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %1 = tx8be.batchnorm_inference %0, %c, %c, %c, %c {epsilon = 1.0e-5 : f32}
       : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  return %1 : tensor<1x4x2x2xf32>
}

// -----

// Inside a subgraph: the body's argument is compact, so the conv's input is aligned there.
// CHECK-LABEL: func.func @subgraph
// CHECK: tx8be.subgraph
// CHECK: %[[XA:.*]] = tx8be.channel_norm %{{.*}} {dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Cx
// CHECK: tx8be.conv2d %[[XA]]
func.func @subgraph(%x: tensor<1x3x6x6xf32>, %k: tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %0 = tx8be.subgraph(%x, %k) : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32> {
  ^bb0(%a: tensor<1x3x6x6xf32>, %b: tensor<8x3x3x3xf32>):
    %1 = tx8be.conv2d %a, %b {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
         : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
    tx8be.yield %1 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}
