// --tx8-backend runs the back-end passes in order on the front end's groups: the sharding search (the
// relu group cut over its 2 x 2 tiles, one 2 x 64 step each), its pipeline and SPM placement
// (the relu in place in its load's buffer), its barrier (the reshape reads its result) and the
// DDR placement of that result; the reshape works in DDR. sw-pipeline rebuilds the pipeline
// group-cost chose, so the search's estimate stays.
// RUN: tilegraph-opt --tx8-backend %s | FileCheck %s
// RUN: tilegraph-opt --tx8-backend --mlir-print-ir-after-all %s 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: IR Dump After GroupCost
// ORDER: IR Dump After SwPipeline
// ORDER: IR Dump After SpmAlloc
// ORDER: IR Dump After OptBarrier
// ORDER: IR Dump After OptDdr

// CHECK: module attributes {tx8be.const_ddr_offsets = [:i64], tx8be.scratch_bytes = 2048 : i64}
// CHECK: tx8be.group(%arg0) {ddr_offsets = [:i64 0], {{.*}}estimated_cycles = {{[0-9]+}} : i64, group_tag = 0 : i32, need_barrier = true,
// CHECK-SAME: pipeline = {{\[}}[:i64 0, 0], [:i64 1, 0], [:i64 2, 0]],
// CHECK-SAME: sharding = [:i32 4, 1], slice = [:i64 2, 64], spm_alloc_size = 512 : i64, spm_lower_bound = 512 : i64, steps = 1
// CHECK: tx8be.load_var {{.*}}mem_addr = [0]>
// CHECK: tx8be.relu {{.*}}mem_addr = [0]>
// CHECK: tx8be.group(%{{.*}}) {ddr_offsets = [:i64 -1], {{.*}}group_tag = 2 : i32, need_barrier = false}
// CHECK-NOT: pipeline
module {
  func.func @main(%x: tensor<8x64xf32>) -> tensor<512xf32> {
    %0 = tx8be.group(%x) {group_tag = 0 : i32, dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 2>} : (tensor<8x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%a: tensor<8x64xf32>):
      %l = tx8be.load_var %a : (tensor<8x64xf32>) -> tensor<8x64xf32>
      %r = tx8be.relu %l : (tensor<8x64xf32>) -> tensor<8x64xf32>
      %o = tx8be.store_var %r : (tensor<8x64xf32>) -> tensor<8x64xf32>
      tx8be.yield %o : tensor<8x64xf32>
    }
    %1 = tx8be.group(%0) {group_tag = 2 : i32, dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 2>} : (tensor<8x64xf32>) -> tensor<512xf32> {
    ^bb0(%b: tensor<8x64xf32>):
      %v = tx8be.reshape %b : (tensor<8x64xf32>) -> tensor<512xf32>
      tx8be.yield %v : tensor<512xf32>
    }
    return %1 : tensor<512xf32>
  }
}
