// data-split: every group cut over its tiles (the group's `sharding`, else the best cut its ops
// accept) and into per-step slices whose buffers fit the SPM.
// RUN: tilegraph-opt --data-split --split-input-file %s | FileCheck %s
// RUN: tilegraph-opt --data-split=chip-config=%S/Inputs/small-spm.json --split-input-file %s | FileCheck %s --check-prefix=SMALL

// Four tiles over the rows; one step (the TX8 SPM holds it all). The bias is loaded whole and
// stays the same every step.
// CHECK-LABEL: func.func @elementwise
// CHECK: tx8be.group{{.*}}sharding = [:i32 4, 1], slice = [:i64 16, 96], steps = 1 : i64
// CHECK: tx8be.load_var %{{.*}}temporal_mem_slice = [16, 96]{{.*}}shape_spatial_sharding = [4, 1]
// CHECK: tx8be.load_var %{{.*}}temporal_mem_slice = [1, 96]{{.*}}shape_spatial_sharding = [1, 1]>, tx8be.step_invariant}
// CHECK: tx8be.add {{.*}}temporal_mem_slice = [16, 96]
// With 8 KiB of SPM the rows are halved until the double-buffered input and sum fit: 4 rows, 4 steps.
// SMALL-LABEL: func.func @elementwise
// SMALL: tx8be.group{{.*}}sharding = [:i32 4, 1], slice = [:i64 4, 96], steps = 4 : i64
// SMALL: tx8be.load_var %{{.*}}temporal_mem_slice = [4, 96]
// SMALL-NOT: tx8be.step_invariant
// SMALL: tx8be.load_var %{{.*}}temporal_mem_slice = [1, 96]{{.*}}tx8be.step_invariant}
module attributes {tx8be.tile_dx = 2 : i32, tx8be.tile_dy = 2 : i32} {
func.func @elementwise(%x: tensor<64x96xf32>, %b: tensor<1x96xf32>) -> tensor<64x96xf32> {
  %0 = tx8be.group(%x, %b) {group_tag = 0 : i32, dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 2>} : (tensor<64x96xf32>, tensor<1x96xf32>) -> tensor<64x96xf32> {
  ^bb0(%a: tensor<64x96xf32>, %c: tensor<1x96xf32>):
    %l = tx8be.load_var %a : (tensor<64x96xf32>) -> tensor<64x96xf32>
    %lc = tx8be.load_var %c : (tensor<1x96xf32>) -> tensor<1x96xf32>
    %s = tx8be.add %l, %lc : (tensor<64x96xf32>, tensor<1x96xf32>) -> tensor<64x96xf32>
    %o = tx8be.store_var %s : (tensor<64x96xf32>) -> tensor<64x96xf32>
    tx8be.yield %o : tensor<64x96xf32>
  }
  return %0 : tensor<64x96xf32>
}
}

// -----

// A row op reads whole rows: the innermost dimension is never cut, over tiles or steps. Three
// rows on four tiles: three tiles, one row each.
// CHECK-LABEL: func.func @rows
// CHECK: tx8be.group{{.*}}sharding = [:i32 3, 1], slice = [:i64 1, 512], steps = 1 : i64
// SMALL-LABEL: func.func @rows
// SMALL: tx8be.group{{.*}}sharding = [:i32 3, 1], slice = [:i64 1, 512], steps = 1 : i64
module attributes {tx8be.tile_dx = 2 : i32, tx8be.tile_dy = 2 : i32} {
func.func @rows(%x: tensor<3x512xf32>) -> tensor<3x512xf32> {
  %0 = tx8be.group(%x) {group_tag = 0 : i32, dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 2>} : (tensor<3x512xf32>) -> tensor<3x512xf32> {
  ^bb0(%a: tensor<3x512xf32>):
    %l = tx8be.load_var %a : (tensor<3x512xf32>) -> tensor<3x512xf32>
    %n = tx8be.rmsnorm %l {epsilon = 1.0e-5 : f32} : (tensor<3x512xf32>) -> tensor<3x512xf32>
    %o = tx8be.store_var %n : (tensor<3x512xf32>) -> tensor<3x512xf32>
    tx8be.yield %o : tensor<3x512xf32>
  }
  return %0 : tensor<3x512xf32>
}
}

// -----

// A given sharding is kept; a group working in DDR is one tile, one step.
// CHECK-LABEL: func.func @given
// CHECK: tx8be.group{{.*}}sharding = [:i32 2, 2], slice = [:i64 4, 48], steps = 1 : i64
// CHECK: tx8be.group{{.*}}group_tag = 2 : i32, sharding = [:i32 1], slice = [:i64 768], steps = 1 : i64
func.func @given(%x: tensor<8x96xf32>) -> tensor<768xf32> {
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 2, 2]} : (tensor<8x96xf32>) -> tensor<8x96xf32> {
  ^bb0(%a: tensor<8x96xf32>):
    %l = tx8be.load_var %a : (tensor<8x96xf32>) -> tensor<8x96xf32>
    %r = tx8be.relu %l : (tensor<8x96xf32>) -> tensor<8x96xf32>
    %o = tx8be.store_var %r : (tensor<8x96xf32>) -> tensor<8x96xf32>
    tx8be.yield %o : tensor<8x96xf32>
  }
  %1 = tx8be.group(%0) {group_tag = 2 : i32} : (tensor<8x96xf32>) -> tensor<768xf32> {
  ^bb0(%b: tensor<8x96xf32>):
    %v = tx8be.reshape %b : (tensor<8x96xf32>) -> tensor<768xf32>
    tx8be.yield %v : tensor<768xf32>
  }
  return %1 : tensor<768xf32>
}

// -----

// The chip a module carries (tx8be.chip, as compile_graph writes CompileOptions' chip): 8 KiB of
// SPM cut the same group into 4 steps without a chip-config option. (With the option, the file's
// chip wins: the same 8 KiB here.)
// CHECK-LABEL: func.func @module_chip
// CHECK: tx8be.group{{.*}}sharding = [:i32 4, 1], slice = [:i64 4, 96], steps = 4 : i64
// SMALL-LABEL: func.func @module_chip
// SMALL: tx8be.group{{.*}}sharding = [:i32 4, 1], slice = [:i64 4, 96], steps = 4 : i64
module attributes {tx8be.chip = "{\"spm_bytes\": 8192}", tx8be.tile_dx = 2 : i32, tx8be.tile_dy = 2 : i32} {
func.func @module_chip(%x: tensor<64x96xf32>, %b: tensor<1x96xf32>) -> tensor<64x96xf32> {
  %0 = tx8be.group(%x, %b) {group_tag = 0 : i32, dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 2>} : (tensor<64x96xf32>, tensor<1x96xf32>) -> tensor<64x96xf32> {
  ^bb0(%a: tensor<64x96xf32>, %c: tensor<1x96xf32>):
    %l = tx8be.load_var %a : (tensor<64x96xf32>) -> tensor<64x96xf32>
    %lc = tx8be.load_var %c : (tensor<1x96xf32>) -> tensor<1x96xf32>
    %s = tx8be.add %l, %lc : (tensor<64x96xf32>, tensor<1x96xf32>) -> tensor<64x96xf32>
    %o = tx8be.store_var %s : (tensor<64x96xf32>) -> tensor<64x96xf32>
    tx8be.yield %o : tensor<64x96xf32>
  }
  return %0 : tensor<64x96xf32>
}
}
