// estimate: estimated_cycles from a group's plan: the C-model's schedule of the group's program
// on tile 0 (Estimate.cpp), on the TX8 defaults (RDMA and WDMA 64 B/cycle with 256 cycles of
// latency, DDR 204.8 B/cycle shared by the group's tiles, 64-byte bursts). The plans have no SPM
// placement: the estimate places them (double-buffered load and relu).
// RUN: tilegraph-opt --estimate --split-input-file %s | FileCheck %s

// Four tiles, two steps of 8 x 96 f32 (3072 contiguous bytes, 48 bursts) each: a tile's share
// of the DDR is 204.8 / 4 = 51.2 B/cycle, below the DMA's 64, so a load alone takes
// 256 + 3072 / 51.2 = 316 cycles; the relu of a step 28 (the op library's cycles). Load 0 ends
// at 316, relu 0 at 344; load 1 starts at 316, store 0 at 344, and from 600 they share the
// tile's 51.2 B/cycle: load 1 ends at 664, store 0 at 692; relu 1 runs 664-692, store 1 alone
// 692-1008.
// CHECK-LABEL: func.func @four_tiles
// CHECK: tx8be.group{{.*}}estimated_cycles = 1008 : i64
func.func @four_tiles(%x: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 4, 1], slice = [:i64 8, 96], steps = 2 : i64,
                        pipeline = [[:i64 0, 0], [:i64 1, 0, 0, 1], [:i64 2, 0, 1, 1], [:i64 2, 1]]} : (tensor<64x96xf32>) -> tensor<64x96xf32> {
  ^bb0(%a: tensor<64x96xf32>):
    %l = tx8be.load_var %a {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [8, 96], source_type = 0, imm_addr = -1, mem_addr = []>,
                            tile_parallel = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [4, 1]>} : (tensor<64x96xf32>) -> tensor<64x96xf32>
    %r = tx8be.relu %l {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [8, 96], source_type = 1, imm_addr = -1, mem_addr = []>,
                        tile_parallel = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [4, 1]>} : (tensor<64x96xf32>) -> tensor<64x96xf32>
    %o = tx8be.store_var %r {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [8, 96], source_type = 2, imm_addr = -1, mem_addr = []>,
                             tile_parallel = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [4, 1]>} : (tensor<64x96xf32>) -> tensor<64x96xf32>
    tx8be.yield %o : tensor<64x96xf32>
  }
  return %0 : tensor<64x96xf32>
}

// -----

// One tile: the DMA's 64 B/cycle bound each transfer (two at once take 128 of the DDR's 204.8),
// 256 + 3072 / 64 = 304 cycles each. Load 0 ends at 304, load 1 (beside relu 0 and store 0) at
// 608, relu 1 at 636, store 1 at 940.
// CHECK-LABEL: func.func @one_tile
// CHECK: tx8be.group{{.*}}estimated_cycles = 940 : i64
func.func @one_tile(%x: tensor<16x96xf32>) -> tensor<16x96xf32> {
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 1, 1], slice = [:i64 8, 96], steps = 2 : i64,
                        pipeline = [[:i64 0, 0], [:i64 1, 0, 0, 1], [:i64 2, 0, 1, 1], [:i64 2, 1]]} : (tensor<16x96xf32>) -> tensor<16x96xf32> {
  ^bb0(%a: tensor<16x96xf32>):
    %l = tx8be.load_var %a {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [8, 96], source_type = 0, imm_addr = -1, mem_addr = []>,
                            tile_parallel = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>} : (tensor<16x96xf32>) -> tensor<16x96xf32>
    %r = tx8be.relu %l {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [8, 96], source_type = 1, imm_addr = -1, mem_addr = []>,
                        tile_parallel = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>} : (tensor<16x96xf32>) -> tensor<16x96xf32>
    %o = tx8be.store_var %r {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [8, 96], source_type = 2, imm_addr = -1, mem_addr = []>,
                             tile_parallel = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>} : (tensor<16x96xf32>) -> tensor<16x96xf32>
    tx8be.yield %o : tensor<16x96xf32>
  }
  return %0 : tensor<16x96xf32>
}
