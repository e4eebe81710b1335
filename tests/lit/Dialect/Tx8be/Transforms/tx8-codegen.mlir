// tx8-codegen: a planned group's tile program. Two tiles each take two rows of the 4x8 result,
// one row a step, double-buffered: the pipeline loads step 1 while step 0 computes.
// RUN: rm -rf %t && tilegraph-opt --tx8-codegen=codegen-dir=%t %s | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s < %t/group_0.cpp
// RUN: not tilegraph-opt --tx8-codegen --split-input-file %S/Inputs/codegen-errors.mlir 2>&1 | FileCheck %s --check-prefix=ERR

// IR: tx8be.group
// IR-SAME: tx8be.source = "// tx8-codegen: group 0 (add+relu)

// CHECK: // tx8-codegen: group 0 (add+relu), sharding 1x1x2x1, slice 1x1x1x8, 2 steps per tile
// CHECK: #include "tilegraph/compiler/tile_program.h"
// The parts of the sharding grid on the region's tiles; tile 1 starts at row 2.
// CHECK: constexpr int kTiles[kParts] = {0, 1};
// CHECK: constexpr int64_t kSteps[kParts] = {2, 2};
// CHECK: constexpr Window kWindows[kParts][kMaxSteps][kValues] = {
// CHECK-NEXT: {{[{][{][{][{]}}0, 0, 0, 0}, {1, 1, 1, 8}}
// CHECK-NEXT: {{[{][{][{]}}0, 0, 1, 0}, {1, 1, 1, 8}}
// CHECK-NEXT: {{[{][{][{][{]}}0, 0, 2, 0}, {1, 1, 1, 8}}
// CHECK-NEXT: {{[{][{][{]}}0, 0, 3, 0}, {1, 1, 1, 8}}
// The bias row is the same every step: loaded once.
// CHECK: constexpr bool kInvariant[kParts][kValues] = {{[{][{]}}false, false, true, false, false, false}
// In each cycle the items run by step, stores last: load 1 follows compute 0.
// CHECK: constexpr int64_t kPipeline[kItems][2] = {{[{][{]}}0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1}, {2, 1}, {3, 1}, {4, 0}, {4, 1}};
// The buffers at dev_info.mem_addr, two copies each where multi-buffered.
// CHECK: Buffer v1[2] = {{[{][{]}}0x0}, {0x100}};
// CHECK: Buffer v2[1] = {{[{][{]}}0x200}};
// CHECK: void op0(int64_t s) {  // tx8be.load_var
// CHECK: case 1: load(tile, sim::Format::FP32, ddr[0], kWhole[1], w(s, 1), sim::MemLayout::Tensor, v1[1], {&v1[1]}); break;
// CHECK: void op1(int64_t s) {  // tx8be.load_const
// CHECK-NEXT: if (s > 0 && invariant(2)) return;
// CHECK-NEXT: load(tile, sim::Format::FP32, ddr[2], kWhole[2], w(s, 2)
// CHECK: void op2(int64_t s) {  // tx8be.add
// CHECK-NEXT: begin_compute(tile, {&v1[invariant(1) ? 0 : s % 2], &v2[0], &v3[invariant(3) ? 0 : s % 2], &chain});
// CHECK-NEXT: op_binary(tile, cgra::ArithOp::Add,
// CHECK-NEXT: end_compute(
// CHECK: void op3(int64_t s) {  // tx8be.relu
// CHECK: op_activation(tile, cgra::UnaryOp::Relu,
// CHECK: void op4(int64_t s) {  // tx8be.store_var
// CHECK-NEXT: store(tile, sim::Format::FP32, v4[invariant(4) ? 0 : s % 2], sim::MemLayout::Tensor, ddr[1], kWhole[5], w(s, 5));
// CHECK: extern "C" void run(uint32_t tile, void* chip, const void* params) {
// CHECK: for (int i = 0; i < kItems; ++i) {
// CHECK-NEXT: if (kPipeline[i][1] < kSteps[part]) program.item(kPipeline[i][0], kPipeline[i][1]);

// ERR: error: 'tx8be.group' op tx8-codegen: the group has no plan (sharding, slice, steps): run the back-end passes first
// ERR: error: 'tx8be.group' op tx8-codegen: the plan says 3 steps but slice [1, 1, 1, 8] walks tile 0's range in 4
// ERR: error: 'tx8be.load_var' op tx8-codegen: no SPM address (dev_info.mem_addr): run the SPM allocation first
// ERR: error: 'tx8be.gelu_erf' op tx8-codegen: tx8-codegen has no program for tx8be.gelu_erf
// ERR: error: 'tx8be.group' op tx8-codegen: the sharding has 2 parts but the region 1 tiles
module attributes {tx8be.tile_dx = 2 : i32, tx8be.tile_dy = 1 : i32} {
  func.func @main(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
    %0 = tx8be.group(%x) {dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 1>, group_id = 0 : i32, group_tag = 0 : i32,
        sharding = [:i32 1, 1, 2, 1], slice = [:i64 1, 1, 1, 8], steps = 2 : i64,
        pipeline = [[:i64 0, 0, 1, 0], [:i64 0, 1, 2, 0, 3, 0], [:i64 2, 1, 3, 1], [:i64 4, 0], [:i64 4, 1]]} : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
    ^bb0(%a: tensor<1x1x4x8xf32>):
      %l = tx8be.load_var %a {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = true, multi_buf_num = 2, out_shape_buf_idx = [], temporal_mem_slice = [1, 1, 1, 8], source_type = 0, imm_addr = -1, mem_addr = [0, 256]>} : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
      %b = tx8be.load_const {const_map_id = 0 : i64, value = dense<0.25> : tensor<1x1x1x8xf32>, dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [1, 1, 1, 8], source_type = 0, imm_addr = -1, mem_addr = [512]>} : tensor<1x1x1x8xf32>
      %s = tx8be.add %l, %b {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = true, multi_buf_num = 2, out_shape_buf_idx = [], temporal_mem_slice = [1, 1, 1, 8], source_type = 1, imm_addr = -1, mem_addr = [768, 1024]>} : (tensor<1x1x4x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x1x4x8xf32>
      %r = tx8be.relu %s {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = true, multi_buf_num = 2, out_shape_buf_idx = [], temporal_mem_slice = [1, 1, 1, 8], source_type = 1, imm_addr = -1, mem_addr = [1280, 1536]>} : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
      %o = tx8be.store_var %r : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
      tx8be.yield %o : tensor<1x1x4x8xf32>
    }
    return %0 : tensor<1x1x4x8xf32>
  }
}
