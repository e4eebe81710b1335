//===- Tx8beAttrs.td - tx8be enums and attributes --------------------------===//

#ifndef TILEGRAPH_COMPILER_TX8BE_ATTRS_TD
#define TILEGRAPH_COMPILER_TX8BE_ATTRS_TD

include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

// Where a tensor lives: off-chip DDR, a tile's scratch-pad memory, or the stacked 3D DRAM.
// ("3DDRAM" is spelled DRAM3D: a keyword cannot start with a digit.)
def Tx8be_MemScopeMode : I32EnumAttr<"MemScopeMode", "memory scope of a tensor", [
    I32EnumAttrCase<"DDR", 0>,
    I32EnumAttrCase<"SPM", 1>,
    I32EnumAttrCase<"DRAM3D", 2>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tg::compiler::tx8be";
}
def Tx8be_MemScopeModeAttr : EnumAttr<Tx8be_Dialect, Tx8be_MemScopeMode, "mem_scope"> {
  let assemblyFormat = "`<` $value `>`";
}

// The storage layout on the chip: Tensor/NTensor are packed (NTensor: dim 0 is a batch larger
// than one); Cx/NCx are the NPU's channel-aligned formats (channels padded to 4/8/16/32, or
// split into 64-channel slabs and a remainder above 32 channels).
def Tx8be_LayoutMode : I32EnumAttr<"LayoutMode", "on-chip storage layout", [
    I32EnumAttrCase<"Tensor", 0>,
    I32EnumAttrCase<"NTensor", 1>,
    I32EnumAttrCase<"Cx", 2>,
    I32EnumAttrCase<"NCx", 3>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tg::compiler::tx8be";
}
def Tx8be_LayoutModeAttr : EnumAttr<Tx8be_Dialect, Tx8be_LayoutMode, "layout_mode"> {
  let assemblyFormat = "`<` $value `>`";
}

// How an op is spread over chips or tiles: not at all, data parallel, tensor parallel, or both.
def Tx8be_ParallelMode : I32EnumAttr<"ParallelMode", "parallel mode", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"DP", 1, "dp">,
    I32EnumAttrCase<"TP", 2, "tp">,
    I32EnumAttrCase<"DPTP", 3, "dp_tp">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tg::compiler::tx8be";
}

// The NPU's alignment requirement of an op's operands (OpAttr::alignMode): channel-aligned
// (Cx/NCx) only, compact (Tensor/NTensor) only, or either.
def Tx8be_AlignMode : I32EnumAttr<"AlignMode", "operand alignment requirement", [
    I32EnumAttrCase<"Unknown", 0, "unknown">,
    I32EnumAttrCase<"Any", 1, "any">,
    I32EnumAttrCase<"NpuAlign", 2, "npu_align">,
    I32EnumAttrCase<"Compact", 3, "compact">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tg::compiler::tx8be";
}

// The engine an op runs on (OpAttr::engine): the CGRA vector engine, the neural (matrix)
// engine, or DMA only.
def Tx8be_Engine : I32EnumAttr<"Engine", "execution engine", [
    I32EnumAttrCase<"CT", 0, "ct">,
    I32EnumAttrCase<"NE", 1, "ne">,
    I32EnumAttrCase<"DMA", 2, "dma">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tg::compiler::tx8be";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Tx8be_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tx8be_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// `true` / `false` (the default integer parameter would print 1 / 0).
def Tx8be_BoolParameter : AttrOrTypeParameter<"bool", "a boolean"> {
  let parser = [{[&]() -> ::mlir::FailureOr<bool> {
    if (::mlir::succeeded($_parser.parseOptionalKeyword("true"))) return true;
    if (::mlir::succeeded($_parser.parseOptionalKeyword("false"))) return false;
    return {(::mlir::LogicalResult)($_parser.emitError($_parser.getCurrentLocation())
                                    << "expected 'true' or 'false'")};
  }()}];
  let printer = [{$_printer << ($_self ? "true" : "false")}];
}

def Tx8be_ParallelAttr : Tx8be_Attr<"Parallel", "parallel_attr"> {
  let summary = "data / tensor parallel split of an op over chips or tiles";
  let description = [{
    `dp_dim_*` and `tp_dim_*` are the number of data-parallel and tensor-parallel parts along
    the x, y and z axes of the mesh; `is_dp_inner` puts the data-parallel split inside the
    tensor-parallel one. `shape_spatial_sharding` holds the parts per tensor dimension once
    known (`sharding_is_given` says it was given rather than searched).
  }];
  let parameters = (ins
    EnumParameter<Tx8be_ParallelMode>:$parallel,
    Tx8be_BoolParameter:$is_dp_inner,
    "int32_t":$dp_dim_x,
    "int32_t":$dp_dim_y,
    "int32_t":$dp_dim_z,
    "int32_t":$tp_dim_x,
    "int32_t":$tp_dim_y,
    "int32_t":$tp_dim_z,
    Tx8be_BoolParameter:$sharding_is_given,
    "::mlir::DenseI32ArrayAttr":$shape_spatial_sharding
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Tx8be_DevAttr : Tx8be_Attr<"Dev", "dev_attr"> {
  let summary = "an op's parameters on the device";
  let description = [{
    `imm_size`: bytes of scratch (immediate) SPM the op needs; `mem_layout`: its output's
    on-chip layout; `multi_buf_en` / `multi_buf_num`: double (multi) buffering;
    `out_shape_buf_idx`: the run-time shape buffer of each output; `temporal_mem_slice`: the
    shape one tile processes per step; `source_type`: the software-pipeline stage;
    `imm_addr` / `mem_addr`: SPM addresses of the scratch and of each buffer.
  }];
  let parameters = (ins
    "uint64_t":$imm_size,
    EnumParameter<Tx8be_LayoutMode>:$mem_layout,
    Tx8be_BoolParameter:$multi_buf_en,
    "int32_t":$multi_buf_num,
    "::mlir::DenseI64ArrayAttr":$out_shape_buf_idx,
    "::mlir::DenseI64ArrayAttr":$temporal_mem_slice,
    "int32_t":$source_type,
    "int64_t":$imm_addr,
    "::mlir::DenseI64ArrayAttr":$mem_addr
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    // The default device parameters with the given layout: no scratch, single buffered,
    // nothing placed yet.
    static DevAttr getWithLayout(::mlir::MLIRContext *context, LayoutMode layout);
    // This attribute with `mem_layout` replaced.
    DevAttr withLayout(LayoutMode layout) const;
  }];
}

// A weight whose bytes are kept outside the IR (a large or block-quantized constant): `key`
// names it in the ConstantData the importer returns (and, for a model, is its GGUF tensor name),
// `bytes` is its size, `fingerprint` a 64-bit FNV-1a hash of its bytes, so that a store holding
// other data under the same key is refused rather than silently used.
def Tx8be_ExternalDataAttr : Tx8be_Attr<"ExternalData", "external"> {
  let summary = "a reference to constant data held outside the IR";
  let parameters = (ins
    StringRefParameter<"the key of the data">:$key,
    "uint64_t":$bytes,
    "uint64_t":$fingerprint
  );
  let assemblyFormat = "`<` $key `,` `bytes` `=` $bytes `,` `fingerprint` `=` $fingerprint `>`";
}

// The tiles a group runs on: a rectangle of the x/y tile mesh.
def Tx8be_RegionAttr : Tx8be_Attr<"Region", "region"> {
  let summary = "a rectangle of tiles on the mesh";
  let parameters = (ins "int32_t":$x, "int32_t":$y, "int32_t":$width, "int32_t":$height);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif  // TILEGRAPH_COMPILER_TX8BE_ATTRS_TD
