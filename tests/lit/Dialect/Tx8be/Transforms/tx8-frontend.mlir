// --tx8-frontend runs the layout, constant and grouping passes in order: a conv -> batchnorm ->
// relu block ends as one group with its weights loaded inside, mapped on the mesh.
// RUN: tilegraph-opt --tx8-frontend %s | FileCheck %s
// RUN: tilegraph-opt --tx8-frontend --mlir-print-ir-after-all %s 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: IR Dump After LayoutInit
// ORDER: IR Dump After LayoutTransmit
// ORDER: IR Dump After LayoutAlignToNpu
// ORDER: IR Dump After LayoutAlignOpt
// ORDER: IR Dump After MoveConstant
// ORDER: IR Dump After ConstNorm
// ORDER: IR Dump After GroupPattern
// ORDER: IR Dump After GroupOptimization
// ORDER: IR Dump After GroupLdSt
// ORDER: IR Dump After GroupMapping

// CHECK-LABEL: func.func @block
// The argument is aligned for the conv in a group of its own.
// CHECK: %[[IN:.*]] = tx8be.group(%arg0) {dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 2>, group_id = 0 : i32, group_tag = 0 : i32}
// CHECK: tx8be.channel_norm
// The block: the weights come in aligned through load_const (no channel_norm left for them).
// CHECK: %[[B:.*]] = tx8be.group(%[[IN]]) {dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 2>, group_id = 1 : i32, group_tag = 0 : i32}
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<1x3x6x6xf32>):
// CHECK-NEXT: tx8be.load_var %[[A]]
// CHECK-NEXT: tx8be.load_const {const_map_id = 0 : i64, dev_info = #tx8be.dev_attr<{{.*}}mem_layout = NCx
// One load per use of the batchnorm's vector, each aligned.
// CHECK-COUNT-4: tx8be.load_const {const_map_id = 1 : i64, dev_info = #tx8be.dev_attr<{{.*}}mem_layout = Cx
// CHECK-NEXT: tx8be.conv2d
// CHECK-NEXT: tx8be.batchnorm_inference
// CHECK-NEXT: tx8be.relu
// CHECK-NEXT: tx8be.store_var
// CHECK-NEXT: tx8be.yield
// CHECK: tx8be.group(%[[B]]) {dev_region = #tx8be.region<x = 0, y = 0, width = 2, height = 2>, group_id = 2 : i32, group_tag = 0 : i32}
// CHECK: tx8be.channel_norm
// CHECK: tx8be.reshape
// CHECK-NOT: tx8be.constant
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
