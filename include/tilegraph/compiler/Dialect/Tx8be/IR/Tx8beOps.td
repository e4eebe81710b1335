//===- Tx8beOps.td - the tx8be operations ----------------------------------===//
//
// Compute ops mirror the tilegraph core ops (tilegraph/core/ops.h) with value semantics:
// shapes are outermost-first (the reverse of a core tensor's ne[]), axes count from the
// outermost dimension, and a view, permute or KV-cache write yields a new tensor instead of
// aliasing memory. The compiler's own ops (constant, load_const, channel_norm, load_var,
// store_var, group, subgraph) follow the TX8 toolchain's back end.
//
//===----------------------------------------------------------------------===//

#ifndef TILEGRAPH_COMPILER_TX8BE_OPS_TD
#define TILEGRAPH_COMPILER_TX8BE_OPS_TD

include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beBase.td"
include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beAttrs.td"
include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beTypes.td"
include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

// The attributes every op the back end places carries: the middle end's layout string
// ("Unknown" until layout-init; NCHW / NHWC / OIHW / HWOI for CNN ops, Tensor / NTensor for
// the rest), and the chip / tile split and device parameters the later passes decide.
defvar Tx8be_BackendAttrs = (ins
  DefaultValuedStrAttr<StrAttr, "Unknown">:$layout_str,
  OptionalAttr<Tx8be_ParallelAttr>:$chip_parallel,
  OptionalAttr<Tx8be_ParallelAttr>:$tile_parallel,
  OptionalAttr<Tx8be_DevAttr>:$dev_info
);

class Tx8be_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tx8be_Dialect, mnemonic, traits>;

// An op with a core counterpart and the four TX8 BE interfaces. `opArgs` are its operands and
// own attributes; the back-end attributes are appended.
class Tx8be_ComputeOp<string mnemonic, list<Trait> traits = []>
    : Tx8be_Op<mnemonic, !listconcat(traits, [
        NoSideEffect,
        DeclareOpInterfaceMethods<Tx8be_ShapeInferenceOpInterface>,
        DeclareOpInterfaceMethods<Tx8be_ShardingInterface>,
        DeclareOpInterfaceMethods<Tx8be_OpLibInterface>,
        DeclareOpInterfaceMethods<Tx8be_ComputeInterface, ["buildCoreNode"]>])> {
  dag opArgs = (ins);
  let arguments = !con(opArgs, Tx8be_BackendAttrs);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

def Tx8be_MatMulOp : Tx8be_ComputeOp<"matmul"> {
  let summary = "matrix product with a transposed right-hand side (ggml's mul_mat)";
  let description = [{
    `lhs` [A3, A2, M, K] (float or block-quantized, typically a weight), `rhs` [B3, B2, N, K]
    (float), B2 % A2 == 0 and B3 % A3 == 0 (lhs is broadcast over rhs's batch) -> f32
    [B3, B2, N, M] with r[.., n, m] = sum_k lhs[.., m, k] * rhs[.., n, k]. With a quantized
    lhs, rhs rows are rounded to 8 bits first, as the core does.
  }];
  let opArgs = (ins Tx8be_Tensor:$lhs, Tx8be_FloatTensor:$rhs);
  let results = (outs Tx8be_F32Tensor:$output);
}

def Tx8be_Conv2dOp : Tx8be_ComputeOp<"conv2d"> {
  let summary = "2-D convolution, NCHW input and OIHW kernel";
  let description = [{
    `input` f32 [N, C, H, W], `kernel` [O, C, KH, KW] (f32/f16) -> f32 [N, O, OH, OW] with
    OH = (H + 2 pad[0] - dilation[0] (KH - 1) - 1) / stride[0] + 1, likewise OW. `strides`,
    `pads` and `dilations` are [H, W] pairs.
  }];
  let opArgs = (ins Tx8be_F32Tensor:$input, Tx8be_FloatTensor:$kernel,
                DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                DenseI64ArrayAttr:$dilations);
  let results = (outs Tx8be_F32Tensor:$output);
}

def Tx8be_BatchNormInferenceOp : Tx8be_ComputeOp<"batchnorm_inference"> {
  let summary = "inference batch normalization over one channel axis";
  let description = [{
    y = (x - mean[c]) / sqrt(variance[c] + epsilon) * scale[c] + offset[c], c the index along
    `channel_axis` (default 1, the C of NCHW); scale, offset, mean and variance are f32 [C].
  }];
  let opArgs = (ins Tx8be_F32Tensor:$input, Tx8be_F32Tensor:$scale, Tx8be_F32Tensor:$offset,
                Tx8be_F32Tensor:$mean, Tx8be_F32Tensor:$variance, F32Attr:$epsilon,
                DefaultValuedAttr<I64Attr, "1">:$channel_axis);
  let results = (outs Tx8be_F32Tensor:$output);
}

def Tx8be_Pool2dOp : Tx8be_ComputeOp<"pool2d"> {
  let summary = "2-D max or average pooling over NCHW";
  let description = [{
    `mode` "max" (padding ignored) or "avg" (padding counts as zeros, divided by the window).
    `kernel`, `strides`, `pads` are [H, W] pairs; OH = (H + 2 pad[0] - kernel[0]) / stride[0] + 1.
  }];
  let opArgs = (ins Tx8be_F32Tensor:$input, StrAttr:$mode, DenseI64ArrayAttr:$kernel,
                DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads);
  let results = (outs Tx8be_F32Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// lhs op rhs with rhs repeated to lhs's shape (each lhs dimension a multiple of rhs's, rhs
// padded with leading ones): ggml's broadcast, not numpy's.
class Tx8be_BinaryOp<string mnemonic> : Tx8be_ComputeOp<mnemonic> {
  let summary = "elementwise " # mnemonic # " with the right-hand side repeated";
  let opArgs = (ins Tx8be_FloatTensor:$lhs, Tx8be_FloatTensor:$rhs);
  let results = (outs Tx8be_FloatTensor:$output);
}
def Tx8be_AddOp : Tx8be_BinaryOp<"add">;
def Tx8be_SubOp : Tx8be_BinaryOp<"sub">;
def Tx8be_MulOp : Tx8be_BinaryOp<"mul">;
def Tx8be_DivOp : Tx8be_BinaryOp<"div">;

def Tx8be_ScaleOp : Tx8be_ComputeOp<"scale"> {
  let summary = "input * scale + bias";
  let opArgs = (ins Tx8be_FloatTensor:$input, F32Attr:$scale,
                DefaultValuedAttr<F32Attr, "0.0f">:$bias);
  let results = (outs Tx8be_FloatTensor:$output);
}

// Activations: one op per function, so that group patterns can name them.
class Tx8be_ActivationOp<string mnemonic, string function> : Tx8be_ComputeOp<mnemonic> {
  let summary = "elementwise " # function;
  let opArgs = (ins Tx8be_FloatTensor:$input);
  let results = (outs Tx8be_FloatTensor:$output);
}
def Tx8be_ReluOp : Tx8be_ActivationOp<"relu", "max(x, 0)">;
def Tx8be_GeluOp : Tx8be_ActivationOp<"gelu", "GELU, tanh approximation">;
def Tx8be_GeluErfOp : Tx8be_ActivationOp<"gelu_erf", "GELU, exact (erf) form">;
def Tx8be_SiluOp : Tx8be_ActivationOp<"silu", "x * sigmoid(x)">;
def Tx8be_SigmoidOp : Tx8be_ActivationOp<"sigmoid", "1 / (1 + exp(-x))">;
def Tx8be_TanhOp : Tx8be_ActivationOp<"tanh", "tanh(x)">;
def Tx8be_ExpOp : Tx8be_ActivationOp<"exp", "exp(x)">;
def Tx8be_NegOp : Tx8be_ActivationOp<"neg", "-x">;
def Tx8be_AbsOp : Tx8be_ActivationOp<"abs", "|x|">;
def Tx8be_SqrtOp : Tx8be_ActivationOp<"sqrt", "sqrt(x)">;
def Tx8be_RsqrtOp : Tx8be_ActivationOp<"rsqrt", "1 / sqrt(x)">;

def Tx8be_GluOp : Tx8be_ComputeOp<"glu"> {
  let summary = "gated linear unit: act(x) * g";
  let description = [{
    `kind` "swiglu" (act = silu) or "geglu" (act = gelu, tanh form). With `gate`: x = input,
    g = gate, same shapes. Without: the innermost dimension (even) is halved, x its first half
    and g its second (the other way round when `swapped`).
  }];
  let opArgs = (ins Tx8be_FloatTensor:$input, Optional<Tx8be_FloatTensor>:$gate, StrAttr:$kind,
                DefaultValuedAttr<BoolAttr, "false">:$swapped);
  let results = (outs Tx8be_FloatTensor:$output);
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, position encoding, attention
//===----------------------------------------------------------------------===//

def Tx8be_RmsNormOp : Tx8be_ComputeOp<"rmsnorm"> {
  let summary = "x / sqrt(mean(x^2) + epsilon) over the innermost dimension";
  let opArgs = (ins Tx8be_FloatTensor:$input, F32Attr:$epsilon);
  let results = (outs Tx8be_FloatTensor:$output);
}

def Tx8be_LayerNormOp : Tx8be_ComputeOp<"layernorm"> {
  let summary = "(x - mean) / sqrt(var + epsilon) over the innermost dimension";
  let opArgs = (ins Tx8be_FloatTensor:$input, F32Attr:$epsilon);
  let results = (outs Tx8be_FloatTensor:$output);
}

def Tx8be_SoftmaxOp : Tx8be_ComputeOp<"softmax"> {
  let summary = "softmax(x * scale + slope * mask) over the innermost dimension";
  let description = [{
    `mask` (optional, f32/f16) has the innermost size of `input` and at least as many rows;
    slope is 1 unless max_bias > 0 (ALiBi).
  }];
  let opArgs = (ins Tx8be_FloatTensor:$input, Optional<Tx8be_FloatTensor>:$mask,
                DefaultValuedAttr<F32Attr, "1.0f">:$scale,
                DefaultValuedAttr<F32Attr, "0.0f">:$max_bias);
  let results = (outs Tx8be_FloatTensor:$output);
}

def Tx8be_RopeOp : Tx8be_ComputeOp<"rope"> {
  let summary = "rotary position embedding (ggml's rope_ext)";
  let description = [{
    `input` [1, n_tokens, n_head, head_dim] (f32/f16), `positions` i32 [n_tokens],
    `freq_factors` (optional f32 [n_dims / 2]) divide the per-pair frequencies. `mode` 0
    rotates (x[2i], x[2i+1]), 2 (NEOX) rotates (x[i], x[i + n_dims/2]).
  }];
  let opArgs = (ins Tx8be_FloatTensor:$input, Tx8be_IndexTensor:$positions,
                Optional<Tx8be_F32Tensor>:$freq_factors,
                I32Attr:$n_dims, DefaultValuedAttr<I32Attr, "0">:$mode,
                DefaultValuedAttr<I32Attr, "0">:$n_ctx_orig,
                DefaultValuedAttr<F32Attr, "10000.0f">:$freq_base,
                DefaultValuedAttr<F32Attr, "1.0f">:$freq_scale,
                DefaultValuedAttr<F32Attr, "0.0f">:$ext_factor,
                DefaultValuedAttr<F32Attr, "1.0f">:$attn_factor,
                DefaultValuedAttr<F32Attr, "32.0f">:$beta_fast,
                DefaultValuedAttr<F32Attr, "1.0f">:$beta_slow);
  let results = (outs Tx8be_FloatTensor:$output);
}

def Tx8be_AttentionOp : Tx8be_ComputeOp<"attention"> {
  let summary = "scaled dot-product attention with grouped-query heads";
  let description = [{
    `query` f32 [B, H, n_q, D], `key` [B, Hkv, n_kv, D] and `value` [B, Hkv, n_kv, Dv]
    (f32/f16/bf16), H % Hkv == 0, `mask` (optional) [1|B, 1|H, >= n_q, n_kv] -> f32
    [B, n_q, H, Dv] (heads inside queries, as ggml's flash_attn_ext). Per query:
    s = (q.k) * scale, s = softcap * tanh(s / softcap) if softcap > 0, s += slope * mask,
    r = softmax(s) . v.
  }];
  let opArgs = (ins Tx8be_F32Tensor:$query, Tx8be_FloatTensor:$key, Tx8be_FloatTensor:$value,
                Optional<Tx8be_FloatTensor>:$mask, F32Attr:$scale,
                DefaultValuedAttr<F32Attr, "0.0f">:$max_bias,
                DefaultValuedAttr<F32Attr, "0.0f">:$softcap);
  let results = (outs Tx8be_F32Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Tx8be_SumRowsOp : Tx8be_ComputeOp<"sum_rows"> {
  let summary = "sum over the innermost dimension (kept, of size 1)";
  let opArgs = (ins Tx8be_F32Tensor:$input);
  let results = (outs Tx8be_F32Tensor:$output);
}

def Tx8be_ArgMaxOp : Tx8be_ComputeOp<"argmax"> {
  let summary = "index of the first maximum of each row of a matrix, NaNs skipped";
  let opArgs = (ins Tx8be_F32Tensor:$input);
  let results = (outs Tx8be_IndexTensor:$output);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// Reshape and view regroup elements: no layout of their input carries over (layout-transmit
// stops at them); transpose permutes its input's layout letters.
def Tx8be_ReshapeOp : Tx8be_ComputeOp<"reshape", [
    DeclareOpInterfaceMethods<Tx8be_ShapeInferenceOpInterface, ["inferLayout"]>]> {
  let summary = "the same elements in row-major order under another shape";
  let opArgs = (ins Tx8be_Tensor:$input);
  let results = (outs Tx8be_Tensor:$output);
}

def Tx8be_TransposeOp : Tx8be_ComputeOp<"transpose", [
    DeclareOpInterfaceMethods<Tx8be_ShapeInferenceOpInterface, ["inferLayout"]>]> {
  let summary = "permutes dimensions: output dim i is input dim perm[i]";
  let opArgs = (ins Tx8be_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Tx8be_Tensor:$output);
}

def Tx8be_ViewOp : Tx8be_ComputeOp<"view", [
    DeclareOpInterfaceMethods<Tx8be_ShapeInferenceOpInterface, ["inferLayout"]>]> {
  let summary = "a strided window of the input's row-major elements, as a new tensor";
  let description = [{
    output[i] = flat(input)[offset + sum_d i[d] * strides[d]], strides in elements per output
    dimension. Core views (ggml's view_*d) become this op: a value, not an alias.
  }];
  let opArgs = (ins Tx8be_Tensor:$input, I64Attr:$offset, DenseI64ArrayAttr:$strides);
  let results = (outs Tx8be_Tensor:$output);
}

def Tx8be_BroadcastOp : Tx8be_ComputeOp<"broadcast", [
    DeclareOpInterfaceMethods<Tx8be_ComputeInterface, ["buildCoreNode", "compute"]>,
    DeclareOpInterfaceMethods<Tx8be_ShapeInferenceOpInterface, ["inferShapes", "inferLayout"]>]> {
  let summary = "repeats the input to the result shape (each a multiple of the input's)";
  let opArgs = (ins Tx8be_Tensor:$input);
  let results = (outs Tx8be_Tensor:$output);
  let hasVerifier = 1;
}

def Tx8be_ConcatOp : Tx8be_ComputeOp<"concat"> {
  let summary = "stacks the inputs along `dim`";
  let opArgs = (ins Variadic<Tx8be_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Tx8be_Tensor:$output);
}

def Tx8be_GatherOp : Tx8be_ComputeOp<"gather"> {
  let summary = "rows of a table by index (ggml's get_rows, e.g. a token embedding)";
  let description = [{
    `table` [T3, T2, R, E] (any type), `indices` i32 [T3, T2, n] -> [T3, T2, n, E] (f32, or
    i32 for an i32 table), r[.., i, :] = table[.., indices[.., i], :]. An index outside
    [0, R) is an error when computed.
  }];
  let opArgs = (ins Tx8be_Tensor:$table, Tx8be_IndexTensor:$indices);
  let results = (outs Tx8be_Tensor:$output);
}

def Tx8be_SetRowsOp : Tx8be_ComputeOp<"set_rows"> {
  let summary = "`dest` with rows replaced (a KV-cache write), as a new tensor";
  let description = [{
    `dest` [D3, D2, R, E], `source` f32 [D3, D2, n, E], `indices` i32 [I2, I1, n] with
    D2 % I1 == 0, D3 % I2 == 0: the result is dest with row indices[.., i] of each batch
    replaced by source's row i (converted to dest's type).
  }];
  let opArgs = (ins Tx8be_Tensor:$dest, Tx8be_F32Tensor:$source, Tx8be_IndexTensor:$indices);
  let results = (outs Tx8be_Tensor:$output);
}

def Tx8be_ConvertOp : Tx8be_ComputeOp<"convert"> {
  let summary = "the input's elements in row-major order, converted to the result type";
  let opArgs = (ins Tx8be_Tensor:$input);
  let results = (outs Tx8be_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// The compiler's own ops
//===----------------------------------------------------------------------===//

def Tx8be_ConstantData : AnyAttrOf<[ElementsAttr, Tx8be_ExternalDataAttr]>;

def Tx8be_ConstantOp : Tx8be_ComputeOp<"constant", [
    DeclareOpInterfaceMethods<Tx8be_ComputeInterface, ["buildCoreNode", "compute"]>,
    DeclareOpInterfaceMethods<Tx8be_ShapeInferenceOpInterface, ["inferShapes", "inferLayout"]>]> {
  let summary = "a constant tensor (a weight)";
  let description = [{
    `value` is a dense elements attribute of the result type, or a #tx8be.external reference
    to bytes kept outside the IR (large and block-quantized weights; see ConstantData).
  }];
  let opArgs = (ins Tx8be_ConstantData:$value);
  let results = (outs Tx8be_Tensor:$output);
  let hasVerifier = 1;
  let assemblyFormat = "attr-dict `:` type($output)";
}

def Tx8be_LoadConstOp : Tx8be_ComputeOp<"load_const", [
    DeclareOpInterfaceMethods<Tx8be_ComputeInterface, ["buildCoreNode", "compute"]>,
    DeclareOpInterfaceMethods<Tx8be_ShapeInferenceOpInterface, ["inferShapes", "inferLayout"]>]> {
  let summary = "a constant brought from the constant container to its consumer";
  let description = [{
    `const_map_id` is the constant's id in the container (ids are dense, renumbered by
    move-constant); `value` is its data as on the constant it replaced. `bypass_codegen`:
    the consumer reads it in place, so no load is generated.
  }];
  let opArgs = (ins Tx8be_ConstantData:$value, I64Attr:$const_map_id,
                OptionalAttr<BoolAttr>:$bypass_codegen);
  let results = (outs Tx8be_Tensor:$output);
  let hasVerifier = 1;
  let assemblyFormat = "attr-dict `:` type($output)";
}

// Moves a tensor between layouts (dev_info.mem_layout of the result names the target); the
// values are unchanged, only their placement on the chip.
class Tx8be_IdentityOp<string mnemonic> : Tx8be_ComputeOp<mnemonic, [
    DeclareOpInterfaceMethods<Tx8be_ComputeInterface, ["buildCoreNode", "compute"]>]> {
  let opArgs = (ins Tx8be_Tensor:$input);
  let results = (outs Tx8be_Tensor:$output);
  let hasVerifier = 1;
}

def Tx8be_ChannelNormOp : Tx8be_IdentityOp<"channel_norm"> {
  let summary = "re-lays a tensor out between Tensor/NTensor and the NPU's Cx/NCx";
}

def Tx8be_LoadVarOp : Tx8be_IdentityOp<"load_var"> {
  let summary = "loads a tensor from DDR into a group's SPM";
  let opArgs = (ins Tx8be_Tensor:$input,
                DefaultValuedAttr<Tx8be_MemScopeModeAttr, "MemScopeMode::DDR">:$mem_scope);
}

def Tx8be_StoreVarOp : Tx8be_IdentityOp<"store_var"> {
  let summary = "stores a group's result from SPM to DDR";
  let opArgs = (ins Tx8be_Tensor:$input,
                DefaultValuedAttr<Tx8be_MemScopeModeAttr, "MemScopeMode::DDR">:$mem_scope);
}

def Tx8be_YieldOp : Tx8be_Op<"yield", [NoSideEffect, Terminator, ReturnLike,
                                       ParentOneOf<["GroupOp", "SubgraphOp"]>]> {
  let summary = "returns a group's or subgraph's results";
  let arguments = (ins Variadic<Tx8be_Tensor>:$results);
  // The empty yield an implicit terminator starts with.
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange{}); }]>];
  let assemblyFormat = "attr-dict ($results^ `:` type($results))?";
}

// Shared by group and subgraph: an isolated single-block region whose arguments are the op's
// operands and whose yield gives its results.
class Tx8be_RegionOp<string mnemonic> : Tx8be_Op<mnemonic, [
    IsolatedFromAbove, SingleBlockImplicitTerminator<"YieldOp">]> {
  let results = (outs Variadic<Tx8be_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    // An op with an empty body block whose arguments have the types of `inputs` (add the
    // ops and the yield after).
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes, "::mlir::ValueRange":$inputs)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    YieldOp getYield();
  }];
}

def Tx8be_GroupOp : Tx8be_RegionOp<"group"> {
  let summary = "a group of ops fused to run out of SPM together";
  let description = [{
    The unit of sharding search and SPM allocation. `group_tag` 0: the group loads and stores
    through SPM and is split by the search; 2: its ops work in DDR and are not split (1 splits
    only N/H/T). `group_id` numbers groups (-1: not yet), `template_id` names a group whose
    schedule this one reuses (< 0: none), `need_barrier` synchronizes the tiles after it,
    `dev_region` is the rectangle of tiles it runs on, `spm_alloc_size` its SPM bytes.
    The plan the back-end passes choose (GroupPlan.h): `sharding` (parts per dimension of the
    primary result over the tiles), `slice` (its per-step shape on one tile), `steps` (per
    tile), `pipeline` (per pipeline cycle, the (op index, step) pairs issued together),
    `spm_lower_bound` (the most bytes live at once) and `estimated_cycles`.
  }];
  let arguments = (ins Variadic<Tx8be_Tensor>:$inputs,
                   DefaultValuedAttr<BoolAttr, "false">:$pipeline_parallel,
                   DefaultValuedAttr<I32Attr, "1">:$sp_stage_num,
                   OptionalAttr<Tx8be_RegionAttr>:$dev_region,
                   OptionalAttr<I64Attr>:$spm_alloc_size,
                   OptionalAttr<I32Attr>:$group_tag,
                   DefaultValuedAttr<BoolAttr, "true">:$need_barrier,
                   DefaultValuedAttr<I32Attr, "-1">:$group_id,
                   DefaultValuedAttr<I32Attr, "-1">:$template_id,
                   OptionalAttr<DenseI32ArrayAttr>:$sharding,
                   OptionalAttr<DenseI64ArrayAttr>:$slice,
                   OptionalAttr<I64Attr>:$steps,
                   OptionalAttr<TypedArrayAttrBase<DenseI64ArrayAttr, "pipeline cycles">>:$pipeline,
                   OptionalAttr<I64Attr>:$spm_lower_bound,
                   OptionalAttr<I64Attr>:$estimated_cycles);
}

def Tx8be_SubgraphOp : Tx8be_RegionOp<"subgraph"> {
  let summary = "a part of the graph compiled as one program (one chip's share)";
  let arguments = (ins Variadic<Tx8be_Tensor>:$inputs,
                   DefaultValuedAttr<I32Attr, "0">:$subgraph_id,
                   OptionalAttr<DenseI32ArrayAttr>:$chip_ids);
}

#endif  // TILEGRAPH_COMPILER_TX8BE_OPS_TD
