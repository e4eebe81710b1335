// The verifiers reject bad shapes, dtypes and attributes with a message.
// RUN: tilegraph-opt %s --split-input-file -verify-diagnostics

func.func @matmul_inner_mismatch(%a: tensor<4x8xf32>, %b: tensor<2x6xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{mul_mat}}
  %0 = tx8be.matmul %a, %b : (tensor<4x8xf32>, tensor<2x6xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @wrong_result_shape(%a: tensor<2x8xf32>) -> tensor<2x9xf32> {
  // expected-error @+1 {{result type 'tensor<2x9xf32>' does not match the operands: expected 'tensor<2x8xf32>'}}
  %0 = tx8be.relu %a : (tensor<2x8xf32>) -> tensor<2x9xf32>
  return %0 : tensor<2x9xf32>
}

// -----

func.func @gather_float_indices(%t: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer values}}
  %0 = tx8be.gather %t, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @bad_glu_kind(%a: tensor<2x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{glu: kind must be "swiglu" or "geglu", got "reglu"}}
  %0 = tx8be.glu %a {kind = "reglu"} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @bad_group_tag(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{group_tag must be 0 (split), 1 (split N/H/T only) or 2 (not split), got 5}}
  %0 = tx8be.group(%a) {group_tag = 5 : i32} : (tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%b: tensor<2x8xf32>):
    tx8be.yield %b : tensor<2x8xf32>
  }
  return %0 : tensor<2x8xf32>
}

// -----

func.func @bad_broadcast(%a: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{each result dimension must be a multiple of the input's}}
  %0 = tx8be.broadcast %a : (tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @bad_constant() -> tensor<4xf32> {
  // expected-error @+1 {{external data 'w' holds 8 bytes but 'tensor<4xf32>' needs 16}}
  %0 = tx8be.constant {value = #tx8be.external<"w", bytes = 8, fingerprint = 0>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_dev_attr(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{multi_buf_num is 2 but multi_buf_en is false}}
  %0 = tx8be.relu %a {dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 2, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expected-error @+1 {{'q9_9' is not a block-quantized type}}
func.func @bad_quant(%a: tensor<32x!tx8be.q<"q9_9">>) {
  return
}

// -----

func.func @bad_layout(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{layout_str "NCWH" is not a layout}}
  %0 = tx8be.relu %a {layout_str = "NCWH"} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @layout_per_operand_count(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{layout_str "Tensor-Tensor-Tensor" has 3 layouts for 1 operands and a result}}
  %0 = tx8be.relu %a {layout_str = "Tensor-Tensor-Tensor"} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @plan_slice_rank(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{slice has 1 dimensions but sharding has 2}}
  %0 = tx8be.group(%a) {sharding = [:i32 2, 2], slice = [:i64 4]} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>):
    tx8be.yield %x : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @plan_pipeline_item(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{pipeline item (7, 0) names no op of the body or a negative step}}
  %0 = tx8be.group(%a) {pipeline = [[:i64 0, 0], [:i64 7, 0]]} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>):
    tx8be.yield %x : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}
