// const-norm: a constant is loaded in the layout its channel_norm converted it to, and the
// load_consts of one constant agree on a layout (an aligned one wins; compact users get a
// channel_norm back).
// RUN: tilegraph-opt --const-norm --split-input-file %s | FileCheck %s

// CHECK-LABEL: func.func @fold
// CHECK: %[[K:.*]] = tx8be.load_const {const_map_id = 0 : i64, dev_info = #tx8be.dev_attr<{{.*}}mem_layout = NCx
// CHECK-NOT: tx8be.channel_norm
// CHECK: tx8be.conv2d %arg0, %[[K]]
func.func @fold(%x: tensor<1x2x3x3xf32>) -> tensor<1x4x1x1xf32> {
  %k = tx8be.load_const {const_map_id = 0, value = dense<1.0> : tensor<4x2x3x3xf32>} : tensor<4x2x3x3xf32>
  %kn = tx8be.channel_norm %k {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = NCx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>} : (tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xf32>
  %0 = tx8be.conv2d %x, %kn {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
       : (tensor<1x2x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x1x1xf32>
  return %0 : tensor<1x4x1x1xf32>
}

// -----

// Constant 3 is loaded twice: for the batchnorm (aligned, after the fold) and for the add
// (compact). Cx wins; the add reads it through a channel_norm back to Tensor. Constant 4, with
// one load, is left alone.
// CHECK-LABEL: func.func @multi_use
// CHECK: %[[A:.*]] = tx8be.load_const {const_map_id = 3 : i64, dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Cx
// CHECK: %[[B:.*]] = tx8be.load_const {const_map_id = 3 : i64, dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Cx
// CHECK: %[[BACK:.*]] = tx8be.channel_norm %[[B]] {dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Tensor
// CHECK: tx8be.load_const {const_map_id = 4 : i64, value
// CHECK: tx8be.batchnorm_inference %arg0, %[[A]],
// CHECK: tx8be.add %arg1, %[[BACK]]
func.func @multi_use(%x: tensor<1x4x2x2xf32>, %y: tensor<4xf32>) -> (tensor<1x4x2x2xf32>, tensor<4xf32>) {
  %a = tx8be.load_const {const_map_id = 3, value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %an = tx8be.channel_norm %a {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>} : (tensor<4xf32>) -> tensor<4xf32>
  %b = tx8be.load_const {const_map_id = 3, value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %c = tx8be.load_const {const_map_id = 4, value = dense<2.0> : tensor<4xf32>} : tensor<4xf32>
  %0 = tx8be.batchnorm_inference %x, %an, %c, %c, %c {epsilon = 1.0e-5 : f32}
       : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  %1 = tx8be.add %y, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<1x4x2x2xf32>, tensor<4xf32>
}
