// group-cost's error: a group that fits the SPM at no candidate names the least it would need.
// RUN: tilegraph-opt --group-cost -verify-diagnostics %s

// The matmul loads its 4 MiB weight whole (its default rule) on every tile: with the input, more
// than the TX8's 4 MiB SPM whatever the cut.
func.func @weight_too_large(%x: tensor<4x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<4x1024xf32> {
  // expected-error @+1 {{(group 7) fits no sharding candidate in the tile's SPM of 4194304 bytes: the smallest needs 4202496 bytes}}
  %0 = tx8be.group(%x, %w) {group_id = 7 : i32, group_tag = 0 : i32} : (tensor<4x1024xf32>, tensor<1024x1024xf32>) -> tensor<4x1024xf32> {
  ^bb0(%a: tensor<4x1024xf32>, %k: tensor<1024x1024xf32>):
    %l = tx8be.load_var %a : (tensor<4x1024xf32>) -> tensor<4x1024xf32>
    %lk = tx8be.load_var %k : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %m = tx8be.matmul %lk, %l : (tensor<1024x1024xf32>, tensor<4x1024xf32>) -> tensor<4x1024xf32>
    %o = tx8be.store_var %m : (tensor<4x1024xf32>) -> tensor<4x1024xf32>
    tx8be.yield %o : tensor<4x1024xf32>
  }
  return %0 : tensor<4x1024xf32>
}
