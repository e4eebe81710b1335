// Every tx8be op parses, verifies and prints back the same.
// RUN: tilegraph-opt %s | tilegraph-opt | FileCheck %s

// CHECK-LABEL: func.func @linear_and_cnn
func.func @linear_and_cnn(%x: tensor<2x64xf32>, %w: tensor<32x64xf16>, %img: tensor<1x3x9x7xf32>,
                          %k: tensor<16x3x3x3xf32>, %c: tensor<16xf32>) -> (tensor<2x32xf32>, tensor<1x16x2x2xf32>) {
  // CHECK: tx8be.matmul %{{.*}}, %{{.*}} : (tensor<32x64xf16>, tensor<2x64xf32>) -> tensor<2x32xf32>
  %0 = tx8be.matmul %w, %x : (tensor<32x64xf16>, tensor<2x64xf32>) -> tensor<2x32xf32>
  // CHECK: tx8be.conv2d {{.*}}dilations = [:i64 1, 1], pads = [:i64 1, 1], strides = [:i64 2, 2]
  %1 = tx8be.conv2d %img, %k {strides = [:i64 2, 2], pads = [:i64 1, 1], dilations = [:i64 1, 1]} : (tensor<1x3x9x7xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x5x4xf32>
  // CHECK: tx8be.batchnorm_inference {{.*}}{epsilon = 9.99999974E-6 : f32, layout_str = "NCHW"}
  %2 = tx8be.batchnorm_inference %1, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, layout_str = "NCHW"} : (tensor<1x16x5x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x5x4xf32>
  // CHECK: tx8be.pool2d {{.*}}mode = "max"
  %3 = tx8be.pool2d %2 {mode = "max", kernel = [:i64 2, 2], strides = [:i64 2, 2], pads = [:i64 0, 0]} : (tensor<1x16x5x4xf32>) -> tensor<1x16x2x2xf32>
  return %0, %3 : tensor<2x32xf32>, tensor<1x16x2x2xf32>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<3x8xf32>, %b: tensor<8xf32>) -> tensor<3x8xf32> {
  // CHECK: tx8be.add
  %0 = tx8be.add %a, %b : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.sub
  %1 = tx8be.sub %0, %b : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.mul
  %2 = tx8be.mul %1, %a : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.div
  %3 = tx8be.div %2, %b : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.scale %{{.*}} {bias = 1.000000e+00 : f32, scale = 5.000000e-01 : f32}
  %4 = tx8be.scale %3 {scale = 0.5 : f32, bias = 1.0 : f32} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.relu
  %5 = tx8be.relu %4 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.gelu
  %6 = tx8be.gelu %5 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.gelu_erf
  %7 = tx8be.gelu_erf %6 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.silu
  %8 = tx8be.silu %7 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.sigmoid
  %9 = tx8be.sigmoid %8 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.tanh
  %10 = tx8be.tanh %9 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.exp
  %11 = tx8be.exp %10 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.neg
  %12 = tx8be.neg %11 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.abs
  %13 = tx8be.abs %12 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.sqrt
  %14 = tx8be.sqrt %13 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.rsqrt
  %15 = tx8be.rsqrt %14 : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.glu %{{.*}} {kind = "swiglu"} : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  %16 = tx8be.glu %15, %a {kind = "swiglu"} : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  // CHECK: tx8be.glu %{{.*}} {kind = "geglu", swapped = true} : (tensor<3x8xf32>) -> tensor<3x4xf32>
  %17 = tx8be.glu %16 {kind = "geglu", swapped = true} : (tensor<3x8xf32>) -> tensor<3x4xf32>
  // CHECK: tx8be.broadcast %{{.*}} : (tensor<3x4xf32>) -> tensor<3x8xf32>
  %18 = tx8be.broadcast %17 : (tensor<3x4xf32>) -> tensor<3x8xf32>
  return %18 : tensor<3x8xf32>
}

// CHECK-LABEL: func.func @attention_block
func.func @attention_block(%x: tensor<1x4x8x16xf32>, %pos: tensor<4xi32>, %kc: tensor<1x2x32x16xf16>,
                           %mask: tensor<4x32xf32>, %rows: tensor<4xi32>, %kv: tensor<4x32xf32>,
                           %cache: tensor<64x32xf16>) -> (tensor<1x4x8x16xf32>, tensor<64x32xf16>) {
  // CHECK: tx8be.rmsnorm
  %0 = tx8be.rmsnorm %x {epsilon = 1.0e-5 : f32} : (tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  // CHECK: tx8be.layernorm
  %1 = tx8be.layernorm %0 {epsilon = 1.0e-5 : f32} : (tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  // CHECK: tx8be.rope {{.*}}mode = 2 : i32, n_dims = 16 : i32
  %2 = tx8be.rope %1, %pos {n_dims = 16 : i32, mode = 2 : i32} : (tensor<1x4x8x16xf32>, tensor<4xi32>) -> tensor<1x4x8x16xf32>
  // CHECK: tx8be.transpose %{{.*}} {perm = [:i64 0, 2, 1, 3]} : (tensor<1x4x8x16xf32>) -> tensor<1x8x4x16xf32>
  %3 = tx8be.transpose %2 {perm = [:i64 0, 2, 1, 3]} : (tensor<1x4x8x16xf32>) -> tensor<1x8x4x16xf32>
  // CHECK: tx8be.attention {{.*}} : (tensor<1x8x4x16xf32>, tensor<1x2x32x16xf16>, tensor<1x2x32x16xf16>, tensor<4x32xf32>) -> tensor<1x4x8x16xf32>
  %4 = tx8be.attention %3, %kc, %kc, %mask {scale = 0.25 : f32} : (tensor<1x8x4x16xf32>, tensor<1x2x32x16xf16>, tensor<1x2x32x16xf16>, tensor<4x32xf32>) -> tensor<1x4x8x16xf32>
  // CHECK: tx8be.softmax {{.*}}scale = 2.500000e-01
  %5 = tx8be.softmax %mask {scale = 0.25 : f32} : (tensor<4x32xf32>) -> tensor<4x32xf32>
  // CHECK: tx8be.set_rows {{.*}} : (tensor<64x32xf16>, tensor<4x32xf32>, tensor<4xi32>) -> tensor<64x32xf16>
  %6 = tx8be.set_rows %cache, %kv, %rows : (tensor<64x32xf16>, tensor<4x32xf32>, tensor<4xi32>) -> tensor<64x32xf16>
  // CHECK: tx8be.view %{{.*}} {offset = 32 : i64, strides = [:i64 32, 1]} : (tensor<64x32xf16>) -> tensor<8x16xf16>
  %7 = tx8be.view %6 {offset = 32 : i64, strides = [:i64 32, 1]} : (tensor<64x32xf16>) -> tensor<8x16xf16>
  // CHECK: tx8be.convert %{{.*}} : (tensor<8x16xf16>) -> tensor<128xf32>
  %8 = tx8be.convert %7 : (tensor<8x16xf16>) -> tensor<128xf32>
  // CHECK: tx8be.reshape %{{.*}} : (tensor<128xf32>) -> tensor<8x16xf32>
  %9 = tx8be.reshape %8 : (tensor<128xf32>) -> tensor<8x16xf32>
  // CHECK: tx8be.sum_rows
  %10 = tx8be.sum_rows %9 : (tensor<8x16xf32>) -> tensor<8x1xf32>
  // CHECK: tx8be.argmax
  %11 = tx8be.argmax %9 : (tensor<8x16xf32>) -> tensor<8xi32>
  // CHECK: tx8be.gather {{.*}} : (tensor<64x32xf16>, tensor<8xi32>) -> tensor<8x32xf32>
  %12 = tx8be.gather %cache, %11 : (tensor<64x32xf16>, tensor<8xi32>) -> tensor<8x32xf32>
  // CHECK: tx8be.concat {{.*}} {dim = 0 : i64} : (tensor<8x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<16x32xf32>
  %13 = tx8be.concat %12, %kv, %kv {dim = 0 : i64} : (tensor<8x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<16x32xf32>
  return %4, %6 : tensor<1x4x8x16xf32>, tensor<64x32xf16>
}
