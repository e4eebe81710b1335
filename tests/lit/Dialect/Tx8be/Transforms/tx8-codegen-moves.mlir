// tx8-codegen of a group working in DDR: each move is one copy_box call with its element strides
// on both sides; the program deals the moves' DMA boxes to every tile of the chip (MoveQueue).
// RUN: rm -rf %t && tilegraph-opt --tx8-codegen=codegen-dir=%t %s -o /dev/null
// RUN: FileCheck %s < %t/group_0.cpp

// CHECK: // tx8-codegen: group 0 (view+transpose+concat)
// CHECK: extern "C" void run(uint32_t tile, void* chip, const void* params) {
// CHECK: MoveQueue queue{t, c.tile_count()};
// A KV-cache view: [positions, heads, dims] read as [heads, positions, dims], from element 64 (128
// bytes of f16) on.
// CHECK-NEXT: copy_box(queue, ddr[0] + 128, {0, 64, 256, 1}, ddr[3] + 0, {2048, 512, 64, 1}, {1, 4, 8, 64}, 2);  // tx8be.view
// A transpose of [5, 7]: the source's rows become columns.
// CHECK-NEXT: copy_box(queue, ddr[1] + 0, {0, 0, 1, 7}, ddr[4] + 0, {35, 35, 5, 1}, {1, 1, 7, 5}, 4);  // tx8be.transpose
// A concat along rows: the second operand after the first's 5 rows (140 bytes).
// CHECK-NEXT: copy_box(queue, ddr[1] + 0, {35, 35, 7, 1}, ddr[5] + 0, {63, 63, 7, 1}, {1, 1, 5, 7}, 4);  // tx8be.concat
// CHECK-NEXT: copy_box(queue, ddr[2] + 0, {28, 28, 7, 1}, ddr[5] + 140, {63, 63, 7, 1}, {1, 1, 4, 7}, 4);  // tx8be.concat
func.func @moves(%cache: tensor<9x4x64xf16>, %a: tensor<5x7xf32>, %b: tensor<4x7xf32>) -> (tensor<4x8x64xf16>, tensor<7x5xf32>, tensor<9x7xf32>) {
  %0:3 = tx8be.group(%cache, %a, %b) {group_id = 0 : i32, group_tag = 2 : i32} : (tensor<9x4x64xf16>, tensor<5x7xf32>, tensor<4x7xf32>) -> (tensor<4x8x64xf16>, tensor<7x5xf32>, tensor<9x7xf32>) {
  ^bb0(%c: tensor<9x4x64xf16>, %x: tensor<5x7xf32>, %y: tensor<4x7xf32>):
    %k = tx8be.view %c {offset = 64 : i64, strides = [:i64 64, 256, 1]} : (tensor<9x4x64xf16>) -> tensor<4x8x64xf16>
    %t = tx8be.transpose %x {perm = [:i64 1, 0]} : (tensor<5x7xf32>) -> tensor<7x5xf32>
    %j = tx8be.concat %x, %y {dim = 0 : i64} : (tensor<5x7xf32>, tensor<4x7xf32>) -> tensor<9x7xf32>
    tx8be.yield %k, %t, %j : tensor<4x8x64xf16>, tensor<7x5xf32>, tensor<9x7xf32>
  }
  return %0#0, %0#1, %0#2 : tensor<4x8x64xf16>, tensor<7x5xf32>, tensor<9x7xf32>
}
