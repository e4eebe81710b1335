// --tx8-backend runs the back-end passes in order on groups that carry their data split: the
// chain's pipeline and SPM placement, its barrier (the reshape reads its result) and the DDR
// placement of that result.
// RUN: tilegraph-opt --tx8-backend %s | FileCheck %s
// RUN: tilegraph-opt --tx8-backend --mlir-print-ir-after-all %s 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: IR Dump After SwPipeline
// ORDER: IR Dump After SpmAlloc
// ORDER: IR Dump After OptBarrier
// ORDER: IR Dump After OptDdr

#tp = #tx8be.parallel_attr<parallel = none, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [1, 1]>
#step = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [2, 64], source_type = 0, imm_addr = -1, mem_addr = []>

// CHECK: module attributes {tx8be.const_ddr_offsets = [:i64], tx8be.scratch_bytes = 2048 : i64}
// CHECK: tx8be.group(%arg0) {ddr_offsets = [:i64 0], group_tag = 0 : i32, need_barrier = true,
// CHECK-SAME: pipeline = [
// CHECK-SAME: spm_alloc_size = 1536 : i64, spm_lower_bound = 1536 : i64
// CHECK: tx8be.load_var {{.*}}multi_buf_num = 3, {{.*}}mem_addr = [0, 512, 1024]>
// CHECK: tx8be.group(%{{.*}}) {ddr_offsets = [:i64 -1], group_tag = 2 : i32, need_barrier = false}
module {
  func.func @main(%x: tensor<8x64xf32>) -> tensor<512xf32> {
    %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 1, 1], slice = [:i64 2, 64], steps = 4} : (tensor<8x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%a: tensor<8x64xf32>):
      %l = tx8be.load_var %a {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
      %r = tx8be.relu %l {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
      %o = tx8be.store_var %r {tile_parallel = #tp, dev_info = #step} : (tensor<8x64xf32>) -> tensor<8x64xf32>
      tx8be.yield %o : tensor<8x64xf32>
    }
    %1 = tx8be.group(%0) {group_tag = 2 : i32} : (tensor<8x64xf32>) -> tensor<512xf32> {
    ^bb0(%b: tensor<8x64xf32>):
      %v = tx8be.reshape %b : (tensor<8x64xf32>) -> tensor<512xf32>
      tx8be.yield %v : tensor<512xf32>
    }
    return %1 : tensor<512xf32>
  }
}
