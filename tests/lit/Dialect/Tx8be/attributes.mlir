// The dialect's attributes and types print as they parse: parse, print, parse again and compare.
// RUN: tilegraph-opt %s | tilegraph-opt | FileCheck %s

// CHECK-LABEL: func.func @attributes
func.func @attributes(%x: tensor<1x2x8xf32>) -> tensor<1x2x8xf32> {
  // CHECK: chip_parallel = #tx8be.parallel_attr<parallel = dp_tp, is_dp_inner = true, dp_dim_x = 2, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 4, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 2, 4]>
  // CHECK-SAME: dev_info = #tx8be.dev_attr<imm_size = 256, mem_layout = NCx, multi_buf_en = true, multi_buf_num = 2, out_shape_buf_idx = [0], temporal_mem_slice = [1, 1, 8], source_type = 1, imm_addr = 4096, mem_addr = [0, 2048]>
  // CHECK-SAME: layout_str = "NTensor"
  // CHECK-SAME: tile_parallel = #tx8be.parallel_attr<parallel = none
  %0 = tx8be.relu %x {layout_str = "NTensor",
      chip_parallel = #tx8be.parallel_attr<parallel = dp_tp, is_dp_inner = true, dp_dim_x = 2, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 4, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 2, 4]>,
      tile_parallel = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = true, shape_spatial_sharding = []>,
      dev_info = #tx8be.dev_attr<imm_size = 256, mem_layout = NCx, multi_buf_en = true, multi_buf_num = 2, out_shape_buf_idx = [0], temporal_mem_slice = [1, 1, 8], source_type = 1, imm_addr = 4096, mem_addr = [0, 2048]>}
      : (tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  // CHECK: tx8be.load_var %{{.*}} {mem_scope = #tx8be.mem_scope<SPM>}
  %1 = tx8be.load_var %0 {mem_scope = #tx8be.mem_scope<SPM>} : (tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  // CHECK: tx8be.store_var %{{.*}} {mem_scope = #tx8be.mem_scope<DRAM3D>}
  %2 = tx8be.store_var %1 {mem_scope = #tx8be.mem_scope<DRAM3D>} : (tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  // CHECK: tx8be.channel_norm %{{.*}} {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Cx
  %3 = tx8be.channel_norm %2 {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>} : (tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  return %3 : tensor<1x2x8xf32>
}

// CHECK-LABEL: func.func @types_and_constants
// CHECK-SAME: tensor<4x32x!tx8be.q<"q8_0">>
func.func @types_and_constants(%w: tensor<4x32x!tx8be.q<"q8_0">>, %x: tensor<2x32xf32>) -> tensor<2x4xf32> {
  // CHECK: tx8be.constant {value = #tx8be.external<"blk.0.attn_q.weight", bytes = 136, fingerprint = 42>} : tensor<4x32x!tx8be.q<"q8_0">>
  %q = tx8be.constant {value = #tx8be.external<"blk.0.attn_q.weight", bytes = 136, fingerprint = 42>} : tensor<4x32x!tx8be.q<"q8_0">>
  // CHECK: tx8be.load_const {bypass_codegen = true, const_map_id = 3 : i64, value = dense<5.000000e-01> : tensor<32xf32>} : tensor<32xf32>
  %g = tx8be.load_const {const_map_id = 3, bypass_codegen = true, value = dense<0.5> : tensor<32xf32>} : tensor<32xf32>
  %s = tx8be.mul %x, %g : (tensor<2x32xf32>, tensor<32xf32>) -> tensor<2x32xf32>
  %r = tx8be.matmul %q, %s : (tensor<4x32x!tx8be.q<"q8_0">>, tensor<2x32xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @regions
func.func @regions(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: tx8be.subgraph(%{{.*}}) {chip_ids = [:i32 0, 1], subgraph_id = 1 : i32}
  %0 = tx8be.subgraph(%x) {subgraph_id = 1 : i32, chip_ids = [:i32 0, 1]} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // CHECK: tx8be.group(%{{.*}}) {dev_region = #tx8be.region<x = 0, y = 1, width = 2, height = 2>, group_id = 0 : i32, group_tag = 2 : i32, need_barrier = false, template_id = 3 : i32}
    %1 = tx8be.group(%a) {group_tag = 2 : i32, group_id = 0 : i32, template_id = 3 : i32, need_barrier = false, dev_region = #tx8be.region<x = 0, y = 1, width = 2, height = 2>} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%b: tensor<4x8xf32>):
      // CHECK: tx8be.silu
      %2 = tx8be.silu %b : (tensor<4x8xf32>) -> tensor<4x8xf32>
      // CHECK-NEXT: tx8be.yield %{{.*}} : tensor<4x8xf32>
      tx8be.yield %2 : tensor<4x8xf32>
    }
    tx8be.yield %1 : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}
