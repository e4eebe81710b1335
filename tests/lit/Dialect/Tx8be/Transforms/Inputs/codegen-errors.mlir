// Groups tx8-codegen refuses (tx8-codegen.mlir checks the messages).
func.func @no_plan(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %0 = tx8be.group(%x) {group_id = 0 : i32, group_tag = 0 : i32} : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  ^bb0(%a: tensor<1x1x4x8xf32>):
    %l = tx8be.load_var %a : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    %o = tx8be.store_var %l : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    tx8be.yield %o : tensor<1x1x4x8xf32>
  }
  return %0 : tensor<1x1x4x8xf32>
}

// -----

func.func @wrong_steps(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %0 = tx8be.group(%x) {group_id = 1 : i32, group_tag = 0 : i32, sharding = [:i32 1, 1, 1, 1], slice = [:i64 1, 1, 1, 8], steps = 3 : i64} : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  ^bb0(%a: tensor<1x1x4x8xf32>):
    %l = tx8be.load_var %a : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    %o = tx8be.store_var %l : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    tx8be.yield %o : tensor<1x1x4x8xf32>
  }
  return %0 : tensor<1x1x4x8xf32>
}

// -----

func.func @not_placed(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %0 = tx8be.group(%x) {group_id = 2 : i32, group_tag = 0 : i32, sharding = [:i32 1, 1, 1, 1], slice = [:i64 1, 1, 4, 8], steps = 1 : i64} : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  ^bb0(%a: tensor<1x1x4x8xf32>):
    %l = tx8be.load_var %a : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    %o = tx8be.store_var %l : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    tx8be.yield %o : tensor<1x1x4x8xf32>
  }
  return %0 : tensor<1x1x4x8xf32>
}

// -----

func.func @unsupported(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %0 = tx8be.group(%x) {group_id = 3 : i32, group_tag = 0 : i32, sharding = [:i32 1, 1, 1, 1], slice = [:i64 1, 1, 4, 8], steps = 1 : i64} : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  ^bb0(%a: tensor<1x1x4x8xf32>):
    %l = tx8be.load_var %a : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    %g = tx8be.gelu_erf %l : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    %o = tx8be.store_var %g : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    tx8be.yield %o : tensor<1x1x4x8xf32>
  }
  return %0 : tensor<1x1x4x8xf32>
}

// -----

func.func @more_parts_than_tiles(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %0 = tx8be.group(%x) {group_id = 4 : i32, group_tag = 0 : i32, sharding = [:i32 1, 1, 2, 1], slice = [:i64 1, 1, 2, 8], steps = 1 : i64} : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  ^bb0(%a: tensor<1x1x4x8xf32>):
    %l = tx8be.load_var %a : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    %o = tx8be.store_var %l : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    tx8be.yield %o : tensor<1x1x4x8xf32>
  }
  return %0 : tensor<1x1x4x8xf32>
}
