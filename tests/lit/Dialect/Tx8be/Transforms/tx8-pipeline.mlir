// --tx8-pipeline: the front end, then the back end, on a conv -> batchnorm -> relu block: every
// split group leaves with a pipeline and an SPM placement, the program with its scratch DDR.
// RUN: tilegraph-opt --tx8-pipeline %s | FileCheck %s
// RUN: tilegraph-opt --tx8-pipeline --mlir-print-ir-after-all %s 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: IR Dump After GroupMapping
// ORDER: IR Dump After GroupCost
// ORDER: IR Dump After OptDdr

// CHECK: module attributes {tx8be.const_ddr_offsets = [:i64 {{.*}}], tx8be.scratch_bytes = {{[0-9]+}} : i64
// CHECK: tx8be.group(%arg0) {ddr_offsets = [:i64 {{[0-9]+}}], {{.*}}pipeline = {{.*}}spm_alloc_size = {{[0-9]+}}
// CHECK: tx8be.conv2d {{.*}}mem_addr = [{{[0-9]+}}
// CHECK: tx8be.group(%{{.*}}) {ddr_offsets = [:i64 -1]
module attributes {tx8be.tile_dx = 2 : i32, tx8be.tile_dy = 2 : i32} {
  func.func @block(%x: tensor<1x3x6x6xf32>) -> tensor<8x16xf32> {
    %k = tx8be.constant {value = dense<0.5> : tensor<8x3x3x3xf32>} : tensor<8x3x3x3xf32>
    %c = tx8be.constant {value = dense<1.0> : tensor<8xf32>} : tensor<8xf32>
    %0 = tx8be.conv2d %x, %k {strides = [:i64 1, 1], pads = [:i64 0, 0], dilations = [:i64 1, 1]}
         : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
    %1 = tx8be.batchnorm_inference %0, %c, %c, %c, %c {epsilon = 1.0e-5 : f32}
         : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
    %2 = tx8be.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tx8be.reshape %2 : (tensor<1x8x4x4xf32>) -> tensor<8x16xf32>
    return %3 : tensor<8x16xf32>
  }
}
