#pragma once
// The LSU's instructions, the TX8 oplib's names: RDMA (DDR -> SPM: op_loadVar, op_loadConst,
// op_rdmaGather), WDMA (SPM -> DDR: op_dma_store, op_wdmaScatter) and TDMA (SPM -> SPM within the
// tile: op_reshape, op_gatherScatter).
//
// A DDR tensor is dense NHWC; a tile works on a slice of it (the toolchain's G_SHAPE / L_SHAPE:
// the whole shape, the slice's start and size) and holds it in SPM in any MemLayout, which the
// DMA converts to on the way (padding of Cx/NCx written as zeros).
//
// Cost of a DMA: latency + bytes / bandwidth, where each contiguous run in DDR is rounded up to
// whole DDR bursts and the bandwidth is the engine's own, shared on the schedule with every other
// DDR transfer on the chip. TDMA: latency + sum over runs of ceil(run / bytes-per-cycle).
#include <cstdint>
#include <string>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/format.h"
#include "tilegraph/sim/layout.h"

namespace tg::sim::lsu {

// A slice of a dense NHWC tensor in DDR.
struct DdrSlice {
  uint64_t addr = 0;  // the whole tensor's first byte
  Shape4 whole;
  Shape4 start{0, 0, 0, 0};  // n, h, w, c of the slice's first element
  Shape4 slice;
};

// op_loadVar: a slice of a DDR tensor into SPM at spm_addr in `layout`.
struct LoadVar {
  Format format = Format::FP32;
  DdrSlice ddr;
  uint64_t spm_addr = 0;
  MemLayout layout = MemLayout::NTensor;
};
// op_loadConst: bytes of a constant (weights, tables) as they are in DDR.
struct LoadConst {
  uint64_t ddr_addr = 0, spm_addr = 0, bytes = 0;
};
// op_rdmaGather: dst row i = DDR row index[i] (rows of row_bytes, ddr_row_stride apart), the
// indices int32 in SPM; an index outside [0, num_rows) is an error. An embedding lookup.
struct RdmaGather {
  uint64_t ddr_base = 0;
  uint64_t row_bytes = 0, ddr_row_stride = 0;
  int64_t num_rows = 0;
  uint64_t index_addr = 0;
  int64_t count = 0;
  uint64_t spm_dst = 0;
};
// op_dma_store: the SPM slice (in `layout`) back to its place in a DDR tensor.
struct DmaStore {
  Format format = Format::FP32;
  uint64_t spm_addr = 0;
  MemLayout layout = MemLayout::NTensor;
  DdrSlice ddr;
};
// op_wdmaScatter: DDR row index[i] = SPM row i.
struct WdmaScatter {
  uint64_t spm_src = 0;
  uint64_t row_bytes = 0;
  uint64_t index_addr = 0;
  int64_t count = 0;
  uint64_t ddr_base = 0, ddr_row_stride = 0;
  int64_t num_rows = 0;
};
// op_reshape: a tensor from one layout to another within the SPM (src and dst must not overlap).
struct Reshape {
  Format format = Format::FP32;
  Shape4 shape;
  uint64_t src = 0;
  MemLayout src_layout = MemLayout::NTensor;
  uint64_t dst = 0;
  MemLayout dst_layout = MemLayout::NCx;
};
// op_gatherScatter: `count` segments of segment_bytes, segment i read at src + i*src_stride and
// written at dst + i*dst_stride (as if all were read first). The fp16 -> fp32 widening recipe
// moves the n packed fp16 values to the upper half of the 4n-byte fp32 buffer (one segment), then
// converts in place with cgra::ConvertV from there to the buffer's start.
struct GatherScatter {
  uint64_t src = 0, dst = 0;
  uint64_t segment_bytes = 0;
  int64_t count = 1;
  int64_t src_stride = 0, dst_stride = 0;  // bytes
};

uint64_t execute(Tile& tile, const LoadVar& instr);
uint64_t execute(Tile& tile, const LoadConst& instr);
uint64_t execute(Tile& tile, const RdmaGather& instr);
uint64_t execute(Tile& tile, const DmaStore& instr);
uint64_t execute(Tile& tile, const WdmaScatter& instr);
uint64_t execute(Tile& tile, const Reshape& instr);
uint64_t execute(Tile& tile, const GatherScatter& instr);

std::string instruction_name(const LoadVar& instr);        // "op_loadVar.fp16"
std::string instruction_name(const LoadConst& instr);      // "op_loadConst"
std::string instruction_name(const RdmaGather& instr);     // "op_rdmaGather"
std::string instruction_name(const DmaStore& instr);       // "op_dma_store.fp16"
std::string instruction_name(const WdmaScatter& instr);    // "op_wdmaScatter"
std::string instruction_name(const Reshape& instr);        // "op_reshape.fp16"
std::string instruction_name(const GatherScatter& instr);  // "op_gatherScatter"

}  // namespace tg::sim::lsu
