// data-split's errors: a given cut an op refuses or that leaves a part empty, and a group whose
// buffers fit the SPM at no slice.
// RUN: tilegraph-opt --data-split --split-input-file -verify-diagnostics %s
// RUN: tilegraph-opt --data-split=chip-config=%S/Inputs/small-spm.json --split-input-file -verify-diagnostics %s

func.func @row_op_across_tiles(%x: tensor<4x512xf32>) -> tensor<4x512xf32> {
  // expected-error @+1 {{cannot be cut as [1, 4]: 'tx8be.rmsnorm' cannot follow it}}
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 1, 4]} : (tensor<4x512xf32>) -> tensor<4x512xf32> {
  ^bb0(%a: tensor<4x512xf32>):
    %l = tx8be.load_var %a : (tensor<4x512xf32>) -> tensor<4x512xf32>
    // expected-note @+1 {{this op}}
    %n = tx8be.rmsnorm %l {epsilon = 1.0e-5 : f32} : (tensor<4x512xf32>) -> tensor<4x512xf32>
    %o = tx8be.store_var %n : (tensor<4x512xf32>) -> tensor<4x512xf32>
    tx8be.yield %o : tensor<4x512xf32>
  }
  return %0 : tensor<4x512xf32>
}

// -----

func.func @empty_part(%x: tensor<5x8xf32>) -> tensor<5x8xf32> {
  // expected-error @+1 {{sharding [4, 1] leaves a part of dimension 0 (of 5) empty}}
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 4, 1]} : (tensor<5x8xf32>) -> tensor<5x8xf32> {
  ^bb0(%a: tensor<5x8xf32>):
    %l = tx8be.load_var %a : (tensor<5x8xf32>) -> tensor<5x8xf32>
    %r = tx8be.relu %l : (tensor<5x8xf32>) -> tensor<5x8xf32>
    %o = tx8be.store_var %r : (tensor<5x8xf32>) -> tensor<5x8xf32>
    tx8be.yield %o : tensor<5x8xf32>
  }
  return %0 : tensor<5x8xf32>
}

// -----

func.func @too_many_tiles(%x: tensor<64x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{sharding [32, 1] needs 32 tiles but the group has 16}}
  %0 = tx8be.group(%x) {group_tag = 0 : i32, sharding = [:i32 32, 1]} : (tensor<64x8xf32>) -> tensor<64x8xf32> {
  ^bb0(%a: tensor<64x8xf32>):
    %l = tx8be.load_var %a : (tensor<64x8xf32>) -> tensor<64x8xf32>
    %r = tx8be.relu %l : (tensor<64x8xf32>) -> tensor<64x8xf32>
    %o = tx8be.store_var %r : (tensor<64x8xf32>) -> tensor<64x8xf32>
    tx8be.yield %o : tensor<64x8xf32>
  }
  return %0 : tensor<64x8xf32>
}

// -----

// A matmul never cuts its reduction: one output element reads a 2 MiB row of each operand,
// 4 MiB and the result, more than the TX8's 4 MiB SPM at any cut (and 8 KiB all the more).
func.func @weight_too_large(%x: tensor<1x524288xf32>, %w: tensor<2x524288xf32>) -> tensor<1x2xf32> {
  // expected-error @+1 {{does not fit the tile's SPM}}
  %0 = tx8be.group(%x, %w) {group_tag = 0 : i32} : (tensor<1x524288xf32>, tensor<2x524288xf32>) -> tensor<1x2xf32> {
  ^bb0(%a: tensor<1x524288xf32>, %k: tensor<2x524288xf32>):
    %l = tx8be.load_var %a : (tensor<1x524288xf32>) -> tensor<1x524288xf32>
    %lk = tx8be.load_var %k : (tensor<2x524288xf32>) -> tensor<2x524288xf32>
    %m = tx8be.matmul %lk, %l : (tensor<2x524288xf32>, tensor<1x524288xf32>) -> tensor<1x2xf32>
    %o = tx8be.store_var %m : (tensor<1x2xf32>) -> tensor<1x2xf32>
    tx8be.yield %o : tensor<1x2xf32>
  }
  return %0 : tensor<1x2xf32>
}

// -----

// expected-error @+1 {{data-split: tx8be.chip is not JSON}}
module attributes {tx8be.chip = "spm_bytes = 8192"} {
func.func @bad_module_chip(%x: tensor<8x96xf32>) -> tensor<8x96xf32> {
  return %x : tensor<8x96xf32>
}
}
