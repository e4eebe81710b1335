//===- Tx8beTypes.td - tx8be types ------------------------------------------===//

#ifndef TILEGRAPH_COMPILER_TX8BE_TYPES_TD
#define TILEGRAPH_COMPILER_TX8BE_TYPES_TD

include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8beBase.td"

// The element type of a block-quantized tensor (ggml's layouts: q8_0, q4_K, ...). The tensor's
// shape counts elements; its bytes are whole blocks along the innermost dimension.
def Tx8be_BlockQuantType : TypeDef<Tx8be_Dialect, "BlockQuant"> {
  let mnemonic = "q";
  let summary = "block-quantized element type";
  let parameters = (ins StringRefParameter<"the ggml type name">:$name);
  let assemblyFormat = "`<` $name `>`";
  let genVerifyDecl = 1;
}

// The element types of tensors the ops accept.
def Tx8be_FloatElement : AnyTypeOf<[F32, F16, BF16]>;
def Tx8be_Element : AnyTypeOf<[F32, F16, BF16, I32, Tx8be_BlockQuantType]>;
def Tx8be_Tensor : RankedTensorOf<[Tx8be_Element]>;
def Tx8be_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Tx8be_F32Tensor : RankedTensorOf<[F32]>;
def Tx8be_IndexTensor : RankedTensorOf<[I32]>;

#endif  // TILEGRAPH_COMPILER_TX8BE_TYPES_TD
