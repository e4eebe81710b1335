// tx8-codegen on matmuls whose weights are not of the activations' type, through the whole
// pipeline on two tiles (each takes 24 of the 48 weight rows): f16 weights round the f32
// activations into the op's scratch (5 rows x K 65 in f16: 650 bytes), q8_0 weights are their
// blocks' bytes (K 64: two blocks of 34 a row) and go to op_gemm_q8_0 without scratch.
// RUN: rm -rf %t && tilegraph-opt --tx8-pipeline --tx8-codegen=codegen-dir=%t %s > /dev/null
// RUN: FileCheck %s --check-prefix=F16 < %t/group_0.cpp
// RUN: FileCheck %s --check-prefix=Q8 < %t/group_1.cpp

// F16: // tx8-codegen: group 0 (matmul), sharding 1x2, slice 5x24, 1 steps per tile
// F16: Buffer imm0{0x{{[0-9a-f]+}}};  // 650 bytes
// F16: load(tile, sim::Format::FP16, ddr[0]
// F16: matmul(tile, tsr(sim::Format::FP16, {{.*}}, tsr(sim::Format::FP32, {{.*}}, tsr(sim::Format::FP32, {{.*}}, imm_tsr(imm0.addr, 650));

// Q8: // tx8-codegen: group 1 (matmul), sharding 1x2, slice 5x24, 1 steps per tile
// Q8: constexpr Dims kWhole[kValues] = {{[{][{]}}1, 1, 48, 68}, {1, 1, 5, 64},
// Q8-NOT: Buffer imm
// Q8: load(tile, sim::Format::INT8, ddr[0]
// Q8: matmul(tile, tsr(sim::Format::INT8, {{.*}}, tsr(sim::Format::FP32, {{.*}}, tsr(sim::Format::FP32, {{.*}}, w(s, 4)));{{$}}
module attributes {tx8be.tile_dx = 2 : i32, tx8be.tile_dy = 1 : i32} {
  func.func @mixed(%w: tensor<48x65xf16>, %x: tensor<5x65xf32>) -> tensor<5x48xf32> {
    %0 = tx8be.matmul %w, %x : (tensor<48x65xf16>, tensor<5x65xf32>) -> tensor<5x48xf32>
    return %0 : tensor<5x48xf32>
  }
  func.func @q8(%w: tensor<48x64x!tx8be.q<"q8_0">>, %x: tensor<5x64xf32>) -> tensor<5x48xf32> {
    %0 = tx8be.matmul %w, %x : (tensor<48x64x!tx8be.q<"q8_0">>, tensor<5x64xf32>) -> tensor<5x48xf32>
    return %0 : tensor<5x48xf32>
  }
}
