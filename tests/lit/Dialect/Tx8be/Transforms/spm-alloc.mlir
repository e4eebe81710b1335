// spm-alloc: each group's SPM buffers placed over its pipeline (after sw-pipeline). Offsets are
// 256-byte aligned; a value with several steps in flight gets one copy per step (mem_addr lists
// them), an in-place op writes its operand's buffer, an op's scratch has its own.
// RUN: tilegraph-opt --split-input-file --sw-pipeline --spm-alloc %s | FileCheck %s

#tp = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>
#tp1 = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1]>
#step = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [2, 64], source_type = 0, imm_addr = -1, mem_addr = []>
#whole = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [64], source_type = 0, imm_addr = -1, mem_addr = []>

// The load, the add and the relu (both in place) share one 512-byte buffer, three copies: step
// s is loaded in cycle s, computed in s + 1, stored in s + 2. The weight is loaded once.
// CHECK-LABEL: func.func @chain
// CHECK: spm_alloc_size = 1792 : i64, spm_lower_bound = 1792 : i64
// CHECK: tx8be.load_var {{.*}}multi_buf_en = true, multi_buf_num = 3, {{.*}}mem_addr = [0, 512, 1024]>
// CHECK: tx8be.load_const {{.*}}multi_buf_en = false, multi_buf_num = 1, {{.*}}mem_addr = [1536]>
// CHECK: tx8be.add {{.*}}multi_buf_num = 3, {{.*}}mem_addr = [0, 512, 1024]>
// CHECK: tx8be.relu {{.*}}multi_buf_num = 3, {{.*}}mem_addr = [0, 512, 1024]>
// The store's result is in DDR.
// CHECK: tx8be.store_var {{.*}}multi_buf_num = 1, {{.*}}mem_addr = []>
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
#step = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [2, 64], source_type = 0, imm_addr = -1, mem_addr = []>

// An f16 softmax needs scratch (getImmSpSize, the op library's figure for the whole op, scaled to
// the 2 x 64 window: 1280 bytes), live in the cycles the softmax runs (1 to 4); its input and
// output are double-buffered (two steps in flight).
// CHECK-LABEL: func.func @scratch
// CHECK: spm_alloc_size = 2304 : i64, spm_lower_bound = 2304 : i64
// CHECK: tx8be.load_var {{.*}}multi_buf_en = true, multi_buf_num = 2, {{.*}}imm_addr = -1, mem_addr = [1280, 1536]>
// CHECK: tx8be.softmax {{.*}}imm_size = 1280, {{.*}}multi_buf_num = 2, {{.*}}imm_addr = 0, mem_addr = [1792, 2048]>
func.func @scratch(%x: tensor<8x64xf16>) -> tensor<8x64xf16> {
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 1, 1], slice = [:i64 2, 64], steps = 4} : (tensor<8x64xf16>) -> tensor<8x64xf16> {
  ^bb0(%a: tensor<8x64xf16>):
    %l = tx8be.load_var %a {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf16>) -> tensor<8x64xf16>
    %s = tx8be.softmax %l {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf16>) -> tensor<8x64xf16>
    %o = tx8be.store_var %s {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf16>) -> tensor<8x64xf16>
    tx8be.yield %o : tensor<8x64xf16>
  }
  return %0 : tensor<8x64xf16>
}
