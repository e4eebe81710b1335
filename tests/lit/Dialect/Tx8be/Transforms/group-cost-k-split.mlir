// group-cost's K splits of a lone matmul (PanelMatmul.h): K walked in panels with the f32 result
// window accumulated in SPM (tx8be.k_panel), the operand panels loaded once per grid row or column
// and sent to the other tiles over the NoC (tx8be.noc_share), weighed against K whole by the
// estimate. On four tiles a 1024 x 1024 x 2048 bf16 GEMM takes a K split: with K whole each tile
// streams every operand row it multiplies from DDR. A decode GEMV (one activation row) reads each
// weight once either way: K stays whole. k-split=never keeps K whole everywhere; codegen writes
// the K split as panel_matmul's data (tile_program_panels.h).
// RUN: tilegraph-opt --tx8-frontend --group-cost %s | FileCheck %s
// RUN: tilegraph-opt --group-cost %S/group-cost-invalid.mlir | FileCheck %s --check-prefix=LONGK
// RUN: tilegraph-opt --tx8-frontend --group-cost=k-split=never %s | FileCheck %s --check-prefix=NEVER
// RUN: not tilegraph-opt --tx8-frontend --group-cost=k-split=sometimes %s 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: rm -rf %t && tilegraph-opt --tx8-pipeline --tx8-codegen=codegen-dir=%t %s > /dev/null
// RUN: FileCheck %s --check-prefix=CODE < %t/group_0.cpp
// RUN: FileCheck %s --check-prefix=GEMV < %t/group_1.cpp

// CHECK-LABEL: func.func @gemm
// CHECK: tx8be.group{{.*}}steps = 8 : i64, tx8be.k_panel = 512 : i64, tx8be.noc_share}
// CHECK: tx8be.load_var{{.*}}multi_buf_num = 3, {{.*}}temporal_mem_slice = [256, 512]
// CHECK: tx8be.load_var{{.*}}multi_buf_num = 3, {{.*}}temporal_mem_slice = [512, 512]
// CHECK: tx8be.matmul{{.*}}multi_buf_num = 2, {{.*}}temporal_mem_slice = [256, 512]
// CHECK-LABEL: func.func @gemv
// CHECK-NOT: k_panel
// CHECK: return

// A matmul whose K rows do not fit the SPM with K whole (group-cost-invalid.mlir) fits in panels.
// LONGK: tx8be.group{{.*}}tx8be.k_panel = {{[0-9]+}} : i64

// NEVER-NOT: k_panel
// NEVER-NOT: noc_share

// BAD: group-cost: k-split must be search, always or never, got 'sometimes'

// CODE: // tx8-codegen: group 0 (matmul), sharding 4x1, slice 256x512, K in panels of 512 shared over the NoC, 8 steps per tile
// CODE: #include "tilegraph/compiler/tile_program_panels.h"
// CODE: const PanelWindows kWindows[32] = {
// The second step of tile 0: its first result window, K 512..1023 of its 256 activation rows and
// of the 512 weight rows.
// CODE-NEXT: {{[{][{][{]}}0, 0, 0, 0}, {1, 1, 256, 512}}, {{[{][{]}}0, 0, 0, 0}, {1, 1, 512, 512}}, {{[{][{]}}0, 0, 0, 0}, {1, 1, 256, 512}}},
// CODE-NEXT: {{[{][{][{]}}0, 0, 0, 0}, {1, 1, 256, 512}}, {{[{][{]}}0, 0, 0, 512}, {1, 1, 512, 512}}, {{[{][{]}}0, 0, 0, 512}, {1, 1, 256, 512}}},
// CODE: plan.tiles = {0, 1, 2, 3};
// CODE: plan.panels = 4;
// CODE: plan.lhs = PanelTensor{sim::Format::BF16, ddr[0], {1, 1, 1024, 2048}, sim::MemLayout::Tensor, {[[L0:0x[0-9a-f]+]], [[L1:0x[0-9a-f]+]], [[L2:0x[0-9a-f]+]]}};
// CODE: plan.out = PanelTensor{sim::Format::FP32, ddr[2], {1, 1, 1024, 1024}, sim::MemLayout::Tensor, {0x{{[0-9a-f]+}}, 0x{{[0-9a-f]+}}}};
// CODE: plan.share = true;
// CODE: panel_matmul(

// GEMV: // tx8-codegen: group 1 (matmul), sharding 1x4
// GEMV-NOT: panel
// GEMV: matmul(tile,
module attributes {tx8be.tile_dx = 2 : i32, tx8be.tile_dy = 2 : i32} {
  func.func @gemm(%w: tensor<1024x2048xbf16>, %x: tensor<1024x2048xbf16>) -> tensor<1024x1024xf32> {
    %0 = tx8be.matmul %w, %x : (tensor<1024x2048xbf16>, tensor<1024x2048xbf16>) -> tensor<1024x1024xf32>
    return %0 : tensor<1024x1024xf32>
  }
  func.func @gemv(%w: tensor<2048x2048xf16>, %x: tensor<1x2048xf16>) -> tensor<1x2048xf32> {
    %0 = tx8be.matmul %w, %x : (tensor<2048x2048xf16>, tensor<1x2048xf16>) -> tensor<1x2048xf32>
    return %0 : tensor<1x2048xf32>
  }
}
