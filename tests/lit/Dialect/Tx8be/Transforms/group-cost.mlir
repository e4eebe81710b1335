// group-cost: every group's cheapest sharding candidate that fits the SPM, as its plan; a group
// of the same structure as an earlier one reuses its plan (template_id); groups in DDR are left.
// RUN: tilegraph-opt --group-cost %s | FileCheck %s
// RUN: tilegraph-opt --group-cost=chip-config=%S/Inputs/tiny-spm.json %s | FileCheck %s --check-prefix=SMALL

// The first relu group is searched: the plan has a cut, slices, a pipeline, an SPM size and an
// estimate. The second, of the same structure (other ids, its own input), takes the first's
// plan and names group 0. The third differs in its result's type (f16): searched anew. The
// reshape works in DDR: no plan.
// CHECK-LABEL: func.func @layers
// CHECK: tx8be.group{{.*}}estimated_cycles = [[CYCLES:[0-9]+]] : i64, group_id = 0 : i32, group_tag = 0 : i32, pipeline = {{.*}}, sharding = [:i32 [[CUT:[0-9, ]+]]], slice = [:i64 [[SLICE:[0-9, ]+]]], spm_alloc_size = {{[0-9]+}} : i64, spm_lower_bound = {{[0-9]+}} : i64, steps = [[STEPS:[0-9]+]] : i64}
// CHECK-NOT: template_id
// CHECK: tx8be.group{{.*}}estimated_cycles = [[CYCLES]] : i64, group_id = 1 : i32, {{.*}}sharding = [:i32 [[CUT]]], slice = [:i64 [[SLICE]]], {{.*}}steps = [[STEPS]] : i64, template_id = 0 : i32}
// CHECK: tx8be.group{{.*}}group_id = 2 : i32
// CHECK-NOT: template_id
// CHECK-SAME: steps
// The reshape in DDR: one box of 24 KiB loaded and stored on tile 0, each 256 cycles of latency
// and 384 at the DMA engine's 64 bytes a cycle.
// CHECK: tx8be.group{{.*}}estimated_cycles = 1280 : i64, group_id = 3 : i32, group_tag = 2 : i32} :
// With 1 KiB of SPM the same relu needs several steps per tile.
// SMALL-LABEL: func.func @layers
// SMALL: tx8be.group{{.*}}group_id = 0 : i32{{.*}}steps = {{[2-9]|[1-9][0-9]+}} : i64}
// SMALL: tx8be.group{{.*}}group_id = 1 : i32{{.*}}template_id = 0 : i32}
func.func @layers(%x: tensor<64x96xf32>, %y: tensor<64x96xf32>) -> (tensor<64x96xf32>, tensor<64x96xf16>, tensor<6144xf32>) {
  %0 = tx8be.group(%x) {group_id = 0 : i32, group_tag = 0 : i32} : (tensor<64x96xf32>) -> tensor<64x96xf32> {
  ^bb0(%a: tensor<64x96xf32>):
    %l = tx8be.load_var %a : (tensor<64x96xf32>) -> tensor<64x96xf32>
    %r = tx8be.relu %l : (tensor<64x96xf32>) -> tensor<64x96xf32>
    %o = tx8be.store_var %r : (tensor<64x96xf32>) -> tensor<64x96xf32>
    tx8be.yield %o : tensor<64x96xf32>
  }
  %1 = tx8be.group(%y) {group_id = 1 : i32, group_tag = 0 : i32} : (tensor<64x96xf32>) -> tensor<64x96xf32> {
  ^bb0(%a: tensor<64x96xf32>):
    %l = tx8be.load_var %a : (tensor<64x96xf32>) -> tensor<64x96xf32>
    %r = tx8be.relu %l : (tensor<64x96xf32>) -> tensor<64x96xf32>
    %o = tx8be.store_var %r : (tensor<64x96xf32>) -> tensor<64x96xf32>
    tx8be.yield %o : tensor<64x96xf32>
  }
  %2 = tx8be.group(%1) {group_id = 2 : i32, group_tag = 0 : i32} : (tensor<64x96xf32>) -> tensor<64x96xf16> {
  ^bb0(%a: tensor<64x96xf32>):
    %l = tx8be.load_var %a : (tensor<64x96xf32>) -> tensor<64x96xf32>
    %r = tx8be.convert %l : (tensor<64x96xf32>) -> tensor<64x96xf16>
    %o = tx8be.store_var %r : (tensor<64x96xf16>) -> tensor<64x96xf16>
    tx8be.yield %o : tensor<64x96xf16>
  }
  %3 = tx8be.group(%0) {group_id = 3 : i32, group_tag = 2 : i32} : (tensor<64x96xf32>) -> tensor<6144xf32> {
  ^bb0(%b: tensor<64x96xf32>):
    %v = tx8be.reshape %b : (tensor<64x96xf32>) -> tensor<6144xf32>
    tx8be.yield %v : tensor<6144xf32>
  }
  return %0, %2, %3 : tensor<64x96xf32>, tensor<64x96xf16>, tensor<6144xf32>
}
