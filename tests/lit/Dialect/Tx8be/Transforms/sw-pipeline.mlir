// sw-pipeline: each group's pipeline cycles from its plan, as (op index, step) pairs. The load of
// step s + 1 and the store of step s - 1 run beside the compute of step s; a weight is loaded
// once, in the first cycle; engines that meet again in one step's frames hold the next step back.
// RUN: tilegraph-opt --split-input-file --verify-diagnostics --sw-pipeline %s | FileCheck %s

#tp = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>
#tp1 = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1]>
#step = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [2, 64], source_type = 0, imm_addr = -1, mem_addr = []>
#whole = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [64], source_type = 0, imm_addr = -1, mem_addr = []>

// Ops: 0 load_var, 1 load_const (the weight), 2 add, 3 relu, 4 store_var. Cycle 0 loads the weight
// and step 0; cycle 1 computes step 0 and loads step 1; from cycle 2 on every engine is busy.
// CHECK-LABEL: func.func @chain
// CHECK: tx8be.group(%arg0) {group_tag = 0 : i32, pipeline = [
// CHECK-SAME: [:i64 1, 0, 0, 0], [:i64 2, 0, 3, 0, 0, 1], [:i64 4, 0, 2, 1, 3, 1, 0, 2], [:i64 4, 1, 2, 2, 3, 2, 0, 3],
// CHECK-SAME: [:i64 4, 2, 2, 3, 3, 3], [:i64 4, 3]]
// CHECK-SAME: steps = 4
// CHECK: tx8be.load_var {{.*}}source_type = 0
// CHECK: tx8be.add {{.*}}source_type = 1
// CHECK: tx8be.store_var {{.*}}source_type = 2
func.func @chain(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 1, 1], slice = [:i64 2, 64], steps = 4} : (tensor<8x64xf32>) -> tensor<8x64xf32> {
  ^bb0(%a: tensor<8x64xf32>):
    %l = tx8be.load_var %a {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %w = tx8be.load_const {const_map_id = 0 : i64, value = dense<1.0> : tensor<64xf32>, tile_parallel = #tp1, dev_info = #whole, tx8be.step_invariant} : tensor<64xf32>
    %s = tx8be.add %l, %w {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
    %r = tx8be.relu %s {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %o = tx8be.store_var %r {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    tx8be.yield %o : tensor<8x64xf32>
  }
  return %0 : tensor<8x64xf32>
}

// -----

#tp = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>
#x = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [4, 64], source_type = 0, imm_addr = -1, mem_addr = []>
#w = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [64, 64], source_type = 0, imm_addr = -1, mem_addr = []>
#w2 = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [8, 8], source_type = 0, imm_addr = -1, mem_addr = []>
#y = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [64, 4], source_type = 0, imm_addr = -1, mem_addr = []>

// Ops: 0 load x, 1 load w1, 2 load w2, 3 matmul (NE), 4 gelu (CT), 5 matmul (NE), 6 store. One
// step's frames are load, NE, CT, NE, store: the NE meets itself two frames on, so a step starts
// three cycles after the one before.
// CHECK-LABEL: func.func @two_matmuls
// CHECK: pipeline = [
// CHECK-SAME: [:i64 1, 0, 2, 0, 0, 0], [:i64 3, 0], [:i64 4, 0], [:i64 5, 0, 0, 1], [:i64 6, 0, 3, 1], [:i64 4, 1],
// CHECK-SAME: [:i64 5, 1], [:i64 6, 1]]
func.func @two_matmuls(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 1, 1], slice = [:i64 4, 64], steps = 2} : (tensor<8x64xf32>) -> tensor<8x64xf32> {
  ^bb0(%a: tensor<8x64xf32>):
    %l = tx8be.load_var %a {tile_parallel = #tp, dev_info = #x} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %w1 = tx8be.load_const {const_map_id = 0 : i64, value = dense<1.0> : tensor<64x64xf32>, tile_parallel = #tp, dev_info = #w, tx8be.step_invariant} : tensor<64x64xf32>
    %w2 = tx8be.load_const {const_map_id = 1 : i64, value = dense<1.0> : tensor<8x8xf32>, tile_parallel = #tp, dev_info = #w2, tx8be.step_invariant} : tensor<8x8xf32>
    %m = tx8be.matmul %l, %w1 {tile_parallel = #tp, dev_info = #y} : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<64x8xf32>
    %g = tx8be.gelu %m {tile_parallel = #tp, dev_info = #y} : (tensor<64x8xf32>) -> tensor<64x8xf32>
    %n = tx8be.matmul %g, %w2 {tile_parallel = #tp, dev_info = #x} : (tensor<64x8xf32>, tensor<8x8xf32>) -> tensor<8x64xf32>
    %o = tx8be.store_var %n {tile_parallel = #tp, dev_info = #x} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    tx8be.yield %o : tensor<8x64xf32>
  }
  return %0 : tensor<8x64xf32>
}

// -----

// A group working in DDR has no pipeline.
// CHECK-LABEL: func.func @in_ddr
// CHECK: tx8be.group(%arg0) {group_tag = 2 : i32}
// CHECK-NOT: pipeline
func.func @in_ddr(%x: tensor<2x4xf32>) -> tensor<8xf32> {
  %0 = tx8be.group(%x) {group_tag = 2 : i32} : (tensor<2x4xf32>) -> tensor<8xf32> {
  ^bb0(%b: tensor<2x4xf32>):
    %v = tx8be.reshape %b : (tensor<2x4xf32>) -> tensor<8xf32>
    tx8be.yield %v : tensor<8xf32>
  }
  return %0 : tensor<8xf32>
}

// -----

func.func @no_plan(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{has no plan: it needs sharding, slice and steps}}
  %0 = tx8be.group(%x) {group_tag = 0 : i32} : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %l = tx8be.load_var %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %r = tx8be.relu %l : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %o = tx8be.store_var %r : (tensor<2x4xf32>) -> tensor<2x4xf32>
    tx8be.yield %o : tensor<2x4xf32>
  }
  return %0 : tensor<2x4xf32>
}
