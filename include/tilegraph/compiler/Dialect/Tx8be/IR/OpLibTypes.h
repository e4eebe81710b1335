#pragma once
// The parameter and result structs of the TX8 BE op interfaces (Tx8beInterfaces.td), as the TX8
// toolchain's back end names them. No MLIR types here.
#include <cstdint>
#include <string>
#include <vector>

#include "tilegraph/compiler/host_tensor.h"

namespace tg::compiler {
class ConstantData;
}

namespace tg::compiler::tx8be {

enum class AlignMode : uint32_t;
enum class Engine : uint32_t;

// Run-time shape buffers for ops with dynamic shapes; every shape is static for now, so
// inferShapes reads only the operand types.
struct DynamicShapeParam {
  std::vector<int64_t> shapeBufferIndex;
};

// Parts per dimension of a tensor: spatial (over tiles) and temporal (steps on a tile). An
// empty vector means "not split".
struct ShardingSplitParam {
  std::vector<int32_t> outSharding;
  std::vector<int32_t> outSplit;
};

// The shape one tile handles in one step.
struct SliceParam {
  std::vector<int64_t> shape;
};

// A window of a tensor: its first index and size per dimension.
struct WindowParam {
  std::vector<int64_t> start;
  std::vector<int64_t> size;
};

// Names of the C variables genOpCode's statement uses.
struct OpCodeParam {
  std::string param;                  // the op's parameter struct
  std::vector<std::string> operands;  // one TSR per operand
  std::string imm;                    // the scratch TSR
  std::string output;                 // the output TSR
};

// What the layout, constant and grouping passes ask of an op (queryOpAttr).
struct OpAttr {
  AlignMode alignMode{};                // NpuAlign (Cx/NCx), Compact (Tensor/NTensor) or Any
  std::string defaultLayout{"Tensor"};  // Tensor, or NTensor when dim 0 is a batch
  bool needPresetToNPU = false;         // its instructions take an NHWC (Cx) configuration
  Engine engine{};                      // CT (vector), NE (matrix) or DMA
  bool memInplace = false;              // the output may reuse operand 0's memory
  uint64_t needLoad = ~uint64_t(0);     // bit i: operand i is loaded into SPM
  uint64_t needStore = ~uint64_t(0);    // bit i: result i is stored to DDR
  bool parallel = true;                 // may be split over tiles
  bool alignCx = true;                  // the innermost split is to 64 (128 for i8) channels
};

// The host tensors of one evaluation: the operands (absent optional operands left out), the
// data of #tx8be.external constants, and the result the op writes.
struct ComputeParam {
  std::vector<const HostTensor*> inputs;
  const ConstantData* constants = nullptr;
  HostTensor output;
};

}  // namespace tg::compiler::tx8be
