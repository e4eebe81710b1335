// opt-ddr: scratch DDR for group results that are not function results (ddr_offsets, -1 for a
// function result), reusing the bytes of results no later group reads; dense constants at the
// bottom (tx8be.const_ddr_offsets by const_map_id, -1 for an external one, bound by key); all
// aligned to the chip's DDR burst (64 bytes, 256 with burst-256.json); tx8be.scratch_bytes the
// total.
// RUN: tilegraph-opt --split-input-file --opt-ddr %s | FileCheck %s
// RUN: tilegraph-opt --split-input-file --opt-ddr=chip-config=%S/Inputs/burst-256.json %s | FileCheck %s --check-prefix=BURST

// Constant 0 (64 floats, 256 bytes) at 0, constant 1 external, constant 2 (3 floats, 12 bytes,
// rounded up to 64) at 256; results from 320: a (2 KiB) until b reads it, b while c reads it, c
// in a's bytes again, d returned.
// CHECK: module attributes {tx8be.const_ddr_offsets = [:i64 0, -1, 256], tx8be.scratch_bytes = 4416 : i64}
// CHECK: tx8be.group(%arg0) {ddr_offsets = [:i64 320]}
// CHECK: tx8be.group(%{{.*}}) {ddr_offsets = [:i64 2368]}
// CHECK: tx8be.group(%{{.*}}) {ddr_offsets = [:i64 320]}
// CHECK: tx8be.group(%{{.*}}) {ddr_offsets = [:i64 -1]}
// With 256-byte bursts: constant 2 at 256, results from 512.
// BURST: module attributes {tx8be.const_ddr_offsets = [:i64 0, -1, 256], tx8be.scratch_bytes = 4608 : i64}
// BURST: tx8be.group(%arg0) {ddr_offsets = [:i64 512]}
// BURST: tx8be.group(%{{.*}}) {ddr_offsets = [:i64 2560]}
// BURST: tx8be.group(%{{.*}}) {ddr_offsets = [:i64 512]}
module {
  func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %a = tx8be.group(%x) : (tensor<8x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%i: tensor<8x64xf32>):
      %w = tx8be.load_const {const_map_id = 0 : i64, value = dense<1.0> : tensor<64xf32>} : tensor<64xf32>
      %r = tx8be.add %i, %w : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
      tx8be.yield %r : tensor<8x64xf32>
    }
    %b = tx8be.group(%a) : (tensor<8x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%i: tensor<8x64xf32>):
      %w = tx8be.load_const {const_map_id = 1 : i64, value = #tx8be.external<"blk.0.w", bytes = 256, fingerprint = 7>} : tensor<64xf32>
      %r = tx8be.mul %i, %w : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
      tx8be.yield %r : tensor<8x64xf32>
    }
    %c = tx8be.group(%b) : (tensor<8x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%i: tensor<8x64xf32>):
      %r = tx8be.exp %i : (tensor<8x64xf32>) -> tensor<8x64xf32>
      tx8be.yield %r : tensor<8x64xf32>
    }
    %d = tx8be.group(%c) : (tensor<8x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%i: tensor<8x64xf32>):
      %w = tx8be.load_const {const_map_id = 2 : i64, value = dense<2.0> : tensor<1x3xf32>} : tensor<1x3xf32>
      %r = tx8be.neg %i : (tensor<8x64xf32>) -> tensor<8x64xf32>
      tx8be.yield %r : tensor<8x64xf32>
    }
    return %d : tensor<8x64xf32>
  }
}

// -----

// Nothing to place: no scratch.
// CHECK: module attributes {tx8be.const_ddr_offsets = [:i64], tx8be.scratch_bytes = 0 : i64}
// CHECK: tx8be.group(%arg0) {ddr_offsets = [:i64 -1]}
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = tx8be.group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%i: tensor<4xf32>):
      %r = tx8be.relu %i : (tensor<4xf32>) -> tensor<4xf32>
      tx8be.yield %r : tensor<4xf32>
    }
    return %a : tensor<4xf32>
  }
}
