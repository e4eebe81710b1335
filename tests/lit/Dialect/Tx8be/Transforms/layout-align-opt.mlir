// layout-align-opt: ConstChannelNormErase stores a vector constant aligned instead of converting
// it; RedundantChannelNormErase reuses an earlier conversion of the same value.
// RUN: tilegraph-opt --layout-align-opt --split-input-file %s | FileCheck %s

// CHECK-LABEL: func.func @vector_constant
// CHECK: %[[C:.*]] = tx8be.constant {dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Cx
// CHECK-NOT: tx8be.channel_norm
// CHECK: tx8be.batchnorm_inference %arg0, %[[C]], %[[C]]
func.func @vector_constant(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %c = tx8be.constant {value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %cn = tx8be.channel_norm %c {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>} : (tensor<4xf32>) -> tensor<4xf32>
  %d = tx8be.constant {value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %dn = tx8be.channel_norm %d {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>} : (tensor<4xf32>) -> tensor<4xf32>
  %0 = tx8be.batchnorm_inference %x, %cn, %cn, %dn, %dn {epsilon = 1.0e-5 : f32}
       : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

// A matrix constant (two dimensions above 1) keeps its conversion; the second conversion of
// %x to Cx reuses the first, the one to Tensor stays.
// CHECK-LABEL: func.func @redundant
// CHECK: tx8be.constant {value
// CHECK-NEXT: tx8be.channel_norm
// CHECK: %[[A:.*]] = tx8be.channel_norm %arg0 {{.*}}mem_layout = Cx
// CHECK-NOT: tx8be.channel_norm %arg0 {{.*}}mem_layout = Cx
// CHECK: tx8be.channel_norm %arg0 {{.*}}mem_layout = Tensor
// CHECK: tx8be.add %[[A]], %[[A]]
func.func @redundant(%x: tensor<1x4x2x2xf32>) -> (tensor<1x4x2x2xf32>, tensor<4x4xf32>, tensor<1x4x2x2xf32>) {
  %k = tx8be.constant {value = dense<1.0> : tensor<4x4xf32>} : tensor<4x4xf32>
  %kn = tx8be.channel_norm %k {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = NCx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = tx8be.channel_norm %x {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %b = tx8be.channel_norm %x {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %t = tx8be.channel_norm %x {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %s = tx8be.add %a, %b : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %s, %kn, %t : tensor<1x4x2x2xf32>, tensor<4x4xf32>, tensor<1x4x2x2xf32>
}
