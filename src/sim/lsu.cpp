#include "tilegraph/sim/lsu.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "instruction_util.h"
#include "tilegraph/core/error.h"

namespace tg::sim::lsu {

namespace {

using detail::check_count;
using detail::fail;

constexpr std::initializer_list<Format> kTensorFormats = {Format::FP32, Format::FP16, Format::BF16,
                                                          Format::TF32, Format::INT8, Format::INT32};

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// The geometry of an SPM operand, with the instruction named in a layout error.
LayoutGeometry geometry(const Tile& tile, const std::string& name, Shape4 shape, Format format, MemLayout layout) {
  try {
    return LayoutGeometry(shape, format, layout);
  } catch (const Error& e) {
    fail(tile, name, e.what());
  }
}

void check_slice(const Tile& tile, const std::string& name, const DdrSlice& s) {
  const int64_t whole[] = {s.whole.n, s.whole.h, s.whole.w, s.whole.c};
  const int64_t start[] = {s.start.n, s.start.h, s.start.w, s.start.c};
  const int64_t size[] = {s.slice.n, s.slice.h, s.slice.w, s.slice.c};
  for (int d = 0; d < 4; ++d) {
    if (whole[d] < 0 || start[d] < 0 || size[d] < 0 || start[d] + size[d] > whole[d]) {
      fail(tile, name,
           "slice " + shape_string(s.slice) + " at " + shape_string(s.start) + " does not fit in the tensor " +
               shape_string(s.whole));
    }
  }
}

// Contiguous runs of a dense NHWC slice in its whole tensor: the slice's rows of C merge into
// longer runs while the slice spans whole inner dimensions.
struct Runs {
  int64_t count = 0;
  int64_t elements = 0;  // per run
};
Runs runs_of(const DdrSlice& s) {
  if (s.slice.elements() == 0) return {};
  int64_t run = s.slice.c, count = s.slice.n * s.slice.h * s.slice.w;
  if (s.slice.c == s.whole.c) {
    run *= s.slice.w;
    count /= s.slice.w;
    if (s.slice.w == s.whole.w) {
      run *= s.slice.h;
      count /= s.slice.h;
      if (s.slice.h == s.whole.h) {
        run *= s.slice.n;
        count = 1;
      }
    }
  }
  return {count, run};
}

// Calls fn(ddr_offset_elements, dense_offset_elements, run_elements) for each run of the slice.
template <class Fn>
void for_each_run(const DdrSlice& s, const Runs& runs, Fn fn) {
  const int64_t per_n = s.slice.h * s.slice.w * s.slice.c;
  int64_t dense = 0;
  for (int64_t i = 0; i < runs.count; ++i, dense += runs.elements) {
    // The run's first element in slice coordinates.
    const int64_t n = dense / per_n, rem = dense % per_n;
    const int64_t h = rem / (s.slice.w * s.slice.c), w = rem / s.slice.c % s.slice.w;
    const int64_t whole =
        (((s.start.n + n) * s.whole.h + s.start.h + h) * s.whole.w + s.start.w + w) * s.whole.c + s.start.c;
    fn(whole, dense, runs.elements);
  }
}

Work dma_work(const DmaConfig& dma, uint64_t ddr_bytes) {
  Work work;
  work.latency = uint64_t(dma.latency_cycles);
  work.bytes = double(ddr_bytes);
  work.rate_cap = dma.bytes_per_cycle;
  work.uses_ddr = true;
  return work;
}

std::vector<int32_t> load_indices(Tile& tile, const std::string& name, uint64_t addr, int64_t count, int64_t num_rows) {
  std::vector<int32_t> idx(static_cast<size_t>(count));
  std::memcpy(idx.data(), tile.spm().read_span(name, addr, uint64_t(count) * 4), idx.size() * 4);
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= num_rows) {
      fail(tile, name,
           "index " + std::to_string(i) + " is " + std::to_string(idx[i]) + ", outside [0, " +
               std::to_string(num_rows) + ")");
    }
  }
  return idx;
}

uint64_t tdma_cycles(const ChipConfig& c, uint64_t segments, uint64_t segment_bytes) {
  return uint64_t(c.tdma.latency_cycles) +
         segments * detail::ceil_div(segment_bytes, uint64_t(std::max(1.0, c.tdma.bytes_per_cycle)));
}

}  // namespace

std::string instruction_name(const LoadVar& in) { return "op_loadVar." + std::string(format_name(in.format)); }
std::string instruction_name(const LoadConst&) { return "op_loadConst"; }
std::string instruction_name(const RdmaGather&) { return "op_rdmaGather"; }
std::string instruction_name(const DmaStore& in) { return "op_dma_store." + std::string(format_name(in.format)); }
std::string instruction_name(const WdmaScatter&) { return "op_wdmaScatter"; }
std::string instruction_name(const Reshape& in) { return "op_reshape." + std::string(format_name(in.format)); }
std::string instruction_name(const GatherScatter&) { return "op_gatherScatter"; }

uint64_t execute(Tile& tile, const LoadVar& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  detail::check_format(tile, name, in.format, kTensorFormats);
  check_slice(tile, name, in.ddr);
  const LayoutGeometry to = geometry(tile, name, in.ddr.slice, in.format, in.layout);
  const uint64_t eb = format_bytes(in.format);
  std::vector<uint8_t> dense(uint64_t(in.ddr.slice.elements()) * eb);
  const Runs runs = runs_of(in.ddr);
  const Ddr& ddr = tile.chip().ddr();
  for_each_run(in.ddr, runs, [&](int64_t whole, int64_t at, int64_t len) {
    ddr.load(name, in.ddr.addr + uint64_t(whole) * eb, dense.data() + uint64_t(at) * eb, uint64_t(len) * eb);
  });
  uint8_t* dst = tile.spm().write_span(name, in.spm_addr, to.total_bytes());
  if (to.aligned()) {
    convert_layout(dense.data(), MemLayout::NTensor, dst, in.layout, in.ddr.slice, in.format);
  } else {
    std::memcpy(dst, dense.data(), dense.size());
  }
  Work work = dma_work(tile.config().rdma,
                       uint64_t(runs.count) * align_up(uint64_t(runs.elements) * eb, tile.config().ddr.burst_bytes));
  work.ddr_read_bytes = dense.size();
  return detail::issue(tile, Engine::RDMA, name, std::move(work));
}

uint64_t execute(Tile& tile, const LoadConst& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  std::vector<uint8_t> bytes(in.bytes);
  tile.chip().ddr().load(name, in.ddr_addr, bytes.data(), in.bytes);
  std::memcpy(tile.spm().write_span(name, in.spm_addr, in.bytes), bytes.data(), in.bytes);
  Work work = dma_work(tile.config().rdma, in.bytes ? align_up(in.bytes, tile.config().ddr.burst_bytes) : 0);
  work.ddr_read_bytes = in.bytes;
  return detail::issue(tile, Engine::RDMA, name, std::move(work));
}

uint64_t execute(Tile& tile, const RdmaGather& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_count(tile, name, "count", in.count);
  check_count(tile, name, "num_rows", in.num_rows);
  const std::vector<int32_t> idx = load_indices(tile, name, in.index_addr, in.count, in.num_rows);
  std::vector<uint8_t> rows(uint64_t(in.count) * in.row_bytes);
  for (size_t i = 0; i < idx.size(); ++i) {
    tile.chip().ddr().load(name, in.ddr_base + uint64_t(idx[i]) * in.ddr_row_stride, rows.data() + i * in.row_bytes,
                           in.row_bytes);
  }
  std::memcpy(tile.spm().write_span(name, in.spm_dst, rows.size()), rows.data(), rows.size());
  Work work = dma_work(tile.config().rdma, uint64_t(in.count) * align_up(in.row_bytes, tile.config().ddr.burst_bytes));
  work.ddr_read_bytes = rows.size();
  return detail::issue(tile, Engine::RDMA, name, std::move(work));
}

uint64_t execute(Tile& tile, const DmaStore& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  detail::check_format(tile, name, in.format, kTensorFormats);
  check_slice(tile, name, in.ddr);
  const LayoutGeometry from = geometry(tile, name, in.ddr.slice, in.format, in.layout);
  const uint64_t eb = format_bytes(in.format);
  const uint8_t* src = tile.spm().read_span(name, in.spm_addr, from.total_bytes());
  std::vector<uint8_t> dense(uint64_t(in.ddr.slice.elements()) * eb);
  if (from.aligned()) {
    convert_layout(src, in.layout, dense.data(), MemLayout::NTensor, in.ddr.slice, in.format);
  } else {
    std::memcpy(dense.data(), src, dense.size());
  }
  const Runs runs = runs_of(in.ddr);
  Ddr& ddr = tile.chip().ddr();
  for_each_run(in.ddr, runs, [&](int64_t whole, int64_t at, int64_t len) {
    ddr.store(name, in.ddr.addr + uint64_t(whole) * eb, dense.data() + uint64_t(at) * eb, uint64_t(len) * eb);
  });
  Work work = dma_work(tile.config().wdma,
                       uint64_t(runs.count) * align_up(uint64_t(runs.elements) * eb, tile.config().ddr.burst_bytes));
  work.ddr_write_bytes = dense.size();
  return detail::issue(tile, Engine::WDMA, name, std::move(work));
}

uint64_t execute(Tile& tile, const WdmaScatter& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_count(tile, name, "count", in.count);
  check_count(tile, name, "num_rows", in.num_rows);
  const std::vector<int32_t> idx = load_indices(tile, name, in.index_addr, in.count, in.num_rows);
  const uint8_t* rows = tile.spm().read_span(name, in.spm_src, uint64_t(in.count) * in.row_bytes);
  for (size_t i = 0; i < idx.size(); ++i) {
    tile.chip().ddr().store(name, in.ddr_base + uint64_t(idx[i]) * in.ddr_row_stride, rows + i * in.row_bytes,
                            in.row_bytes);
  }
  Work work = dma_work(tile.config().wdma, uint64_t(in.count) * align_up(in.row_bytes, tile.config().ddr.burst_bytes));
  work.ddr_write_bytes = uint64_t(in.count) * in.row_bytes;
  return detail::issue(tile, Engine::WDMA, name, std::move(work));
}

uint64_t execute(Tile& tile, const Reshape& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  detail::check_format(tile, name, in.format, kTensorFormats);
  const LayoutGeometry from = geometry(tile, name, in.shape, in.format, in.src_layout);
  const LayoutGeometry to = geometry(tile, name, in.shape, in.format, in.dst_layout);
  if (in.src < in.dst + to.total_bytes() && in.dst < in.src + from.total_bytes()) {
    fail(tile, name, "source and destination overlap");
  }
  const uint8_t* s = tile.spm().read_span(name, in.src, from.total_bytes());
  const std::vector<uint8_t> src(s, s + from.total_bytes());
  convert_layout(src.data(), in.src_layout, tile.spm().write_span(name, in.dst, to.total_bytes()), in.dst_layout,
                 in.shape, in.format);
  // Channel runs: the block width of whichever side is aligned, the whole C otherwise.
  const int64_t run = from.aligned() ? from.block_channels() : to.aligned() ? to.block_channels() : in.shape.c;
  const uint64_t pixels = uint64_t(in.shape.n * in.shape.h * in.shape.w);
  uint64_t cycles = 0;
  for (int64_t c = 0; c < in.shape.c && run > 0; c += run) {
    cycles += detail::ceil_div(uint64_t(std::min(run, in.shape.c - c)) * format_bytes(in.format),
                               uint64_t(std::max(1.0, tile.config().tdma.bytes_per_cycle)));
  }
  Work work;
  work.latency = uint64_t(tile.config().tdma.latency_cycles) + pixels * cycles;
  return detail::issue(tile, Engine::TDMA, name, std::move(work));
}

uint64_t execute(Tile& tile, const GatherScatter& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_count(tile, name, "count", in.count);
  std::vector<uint8_t> segments(uint64_t(in.count) * in.segment_bytes);
  for (int64_t i = 0; i < in.count; ++i) {
    const int64_t at = int64_t(in.src) + i * in.src_stride;
    if (at < 0) fail(tile, name, "segment " + std::to_string(i) + " starts before the SPM");
    std::memcpy(segments.data() + uint64_t(i) * in.segment_bytes,
                tile.spm().read_span(name, uint64_t(at), in.segment_bytes), in.segment_bytes);
  }
  for (int64_t i = 0; i < in.count; ++i) {
    const int64_t at = int64_t(in.dst) + i * in.dst_stride;
    if (at < 0) fail(tile, name, "segment " + std::to_string(i) + " is written before the SPM");
    std::memcpy(tile.spm().write_span(name, uint64_t(at), in.segment_bytes),
                segments.data() + uint64_t(i) * in.segment_bytes, in.segment_bytes);
  }
  Work work;
  work.latency = tdma_cycles(tile.config(), uint64_t(in.count), in.segment_bytes);
  return detail::issue(tile, Engine::TDMA, name, std::move(work));
}

}  // namespace tg::sim::lsu
