// group-cost's error: a group that fits the SPM at no candidate names the least it would need.
// RUN: tilegraph-opt --group-cost=k-split=never -verify-diagnostics %s

// With K whole (k-split=never) one output element reads a 2 MiB row of each operand, 4 MiB and
// the result, more than the TX8's 4 MiB SPM at any cut. (A K split fits it:
// group-cost-k-split.mlir.)
func.func @weight_too_large(%x: tensor<1x524288xf32>, %w: tensor<2x524288xf32>) -> tensor<1x2xf32> {
  // expected-error @+1 {{(group 7) fits no sharding candidate in the tile's SPM of 4194304 bytes: the smallest needs 4194308 bytes}}
  %0 = tx8be.group(%x, %w) {group_id = 7 : i32, group_tag = 0 : i32} : (tensor<1x524288xf32>, tensor<2x524288xf32>) -> tensor<1x2xf32> {
  ^bb0(%a: tensor<1x524288xf32>, %k: tensor<2x524288xf32>):
    %l = tx8be.load_var %a : (tensor<1x524288xf32>) -> tensor<1x524288xf32>
    %lk = tx8be.load_var %k : (tensor<2x524288xf32>) -> tensor<2x524288xf32>
    %m = tx8be.matmul %lk, %l : (tensor<2x524288xf32>, tensor<1x524288xf32>) -> tensor<1x2xf32>
    %o = tx8be.store_var %m : (tensor<1x2xf32>) -> tensor<1x2xf32>
    tx8be.yield %o : tensor<1x2xf32>
  }
  return %0 : tensor<1x2xf32>
}
