// estimate's errors: a group without a plan, and one whose plan has no pipeline yet.
// RUN: tilegraph-opt --estimate --split-input-file -verify-diagnostics %s

func.func @no_plan(%x: tensor<8x96xf32>) -> tensor<8x96xf32> {
  // expected-error @+1 {{has no plan: it needs sharding, slice and steps}}
  %0 = tx8be.group(%x) {group_tag = 0 : i32} : (tensor<8x96xf32>) -> tensor<8x96xf32> {
  ^bb0(%a: tensor<8x96xf32>):
    %l = tx8be.load_var %a : (tensor<8x96xf32>) -> tensor<8x96xf32>
    %o = tx8be.store_var %l : (tensor<8x96xf32>) -> tensor<8x96xf32>
    tx8be.yield %o : tensor<8x96xf32>
  }
  return %0 : tensor<8x96xf32>
}

// -----

func.func @no_pipeline(%x: tensor<8x96xf32>) -> tensor<8x96xf32> {
  // expected-error @+1 {{has no pipeline to estimate (run sw-pipeline first)}}
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 1, 1], slice = [:i64 8, 96], steps = 1 : i64} : (tensor<8x96xf32>) -> tensor<8x96xf32> {
  ^bb0(%a: tensor<8x96xf32>):
    %l = tx8be.load_var %a {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [8, 96], source_type = 0, imm_addr = -1, mem_addr = []>,
                            tile_parallel = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>} : (tensor<8x96xf32>) -> tensor<8x96xf32>
    %o = tx8be.store_var %l {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [8, 96], source_type = 2, imm_addr = -1, mem_addr = []>,
                             tile_parallel = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>} : (tensor<8x96xf32>) -> tensor<8x96xf32>
    tx8be.yield %o : tensor<8x96xf32>
  }
  return %0 : tensor<8x96xf32>
}
