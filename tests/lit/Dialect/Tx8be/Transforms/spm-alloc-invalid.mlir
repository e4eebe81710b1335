// spm-alloc's errors: buffers that do not fit the tile's SPM (spm-bytes), a group without a
// pipeline, a K split (tx8be.k_panel) of a group that is not a lone matmul.
// RUN: tilegraph-opt --split-input-file --verify-diagnostics --spm-alloc="spm-bytes=1024" %s

#tp = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>
#step = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [2, 64], source_type = 0, imm_addr = -1, mem_addr = []>

// Ops 0 load, 1 relu (in place), 2 store at 4 steps: three copies of 512 bytes.
func.func @too_big(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{needs 1536 bytes of SPM (at least 1536 live at once) but a tile has 1024}}
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 1, 1], slice = [:i64 2, 64], steps = 4,
                         pipeline = [[:i64 0, 0], [:i64 1, 0, 0, 1], [:i64 2, 0, 1, 1, 0, 2], [:i64 2, 1, 1, 2, 0, 3],
                                     [:i64 2, 2, 1, 3], [:i64 2, 3]]} : (tensor<8x64xf32>) -> tensor<8x64xf32> {
  ^bb0(%a: tensor<8x64xf32>):
    %l = tx8be.load_var %a {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %r = tx8be.relu %l {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %o = tx8be.store_var %r {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    tx8be.yield %o : tensor<8x64xf32>
  }
  return %0 : tensor<8x64xf32>
}

// -----

#tp = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>
#step = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [2, 64], source_type = 0, imm_addr = -1, mem_addr = []>

func.func @no_pipeline(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{has no pipeline to allocate SPM over (run sw-pipeline first)}}
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 1, 1], slice = [:i64 2, 64], steps = 4} : (tensor<8x64xf32>) -> tensor<8x64xf32> {
  ^bb0(%a: tensor<8x64xf32>):
    %l = tx8be.load_var %a {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %r = tx8be.relu %l {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %o = tx8be.store_var %r {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    tx8be.yield %o : tensor<8x64xf32>
  }
  return %0 : tensor<8x64xf32>
}

// -----

#tp = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>
#step = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [2, 64], source_type = 0, imm_addr = -1, mem_addr = []>

func.func @k_split_of_a_relu(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{has tx8be.k_panel but its K cannot be split: the group is not loads -> one matmul -> store}}
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 1, 1], slice = [:i64 2, 64], steps = 4, tx8be.k_panel = 128 : i64,
                         pipeline = [[:i64 0, 0]]} : (tensor<8x64xf32>) -> tensor<8x64xf32> {
  ^bb0(%a: tensor<8x64xf32>):
    %l = tx8be.load_var %a {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %r = tx8be.relu %l {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %o = tx8be.store_var %r {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    tx8be.yield %o : tensor<8x64xf32>
  }
  return %0 : tensor<8x64xf32>
}
