#pragma once
// What CompiledEpilogue and CompiledGemm share: lowering a checked DAG for the CPU's ISA and
// compiling it through the JIT, and putting the caller's named bindings in the kernel's order.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/core/error.h"
#include "tilegraph/evg/block.h"
#include "tilegraph/evg/driver/epilogue_params.h"
#include "tilegraph/evg/frontend/compiled_kernel.h"
#include "tilegraph/evg/frontend/kernel_workspace.h"
#include "tilegraph/evg/frontend/lower.h"
#include "tilegraph/jit/kernel.h"

namespace tg::evg::frontend {

struct BuiltKernel {
  int lanes = 0;
  std::string cpp;
  std::string id;
  jit::EntryFn entry = nullptr;
};

// Throws tg::Error for bad options or a failed compile.
BuiltKernel build_kernel(const EpilogueDag& dag, std::string_view source, const CompileOptions& options,
                         KernelKind kind);

// One binding per DAG operand, in EpilogueDag::operands order, with packed matrices' strides
// resolved for `problem`, held inline for the usual few operands so that a steady run allocates
// nothing. Throws tg::Error for a missing binding or one the signature does not declare.
class OrderedBindings {
 public:
  OrderedBindings(const EpilogueDag& dag, const Signature& signature, const Bindings& bindings,
                  const GemmShape& problem);
  const driver::Binding* data() const { return size_ <= kInline ? inline_.data() : spilled_.data(); }
  int64_t size() const { return int64_t(size_); }

 private:
  static constexpr size_t kInline = 16;
  std::array<driver::Binding, kInline> inline_;
  std::vector<driver::Binding> spilled_;
  size_t size_ = 0;
};

// Runs `entry` on `params` (driver::EpilogueParams or driver::GemmParams) in `workspace`: asks
// the kernel what it needs, prepares that, runs. Throws tg::Error with what the kernel reports.
template <class Params>
void run_kernel(jit::EntryFn entry, uint32_t block_num, const Launcher& launcher, Params& params,
                KernelWorkspace& workspace) {
  char error[512] = "";
  params.call.error = error;
  params.call.error_capacity = sizeof error;
  void* stream = const_cast<Launcher*>(&launcher);
  driver::WorkspaceSizes sizes;
  params.call.mode = driver::KernelMode::kQuery;
  params.call.sizes = &sizes;
  entry(block_num, stream, &params);
  if (error[0]) throw Error(error);
  params.call.mode = driver::KernelMode::kRun;
  params.call.workspace = workspace.prepare(sizes, reinterpret_cast<const void*>(entry));
  params.call.workspace_bytes = workspace.capacity();
  entry(block_num, stream, &params);
  if (error[0]) throw Error(error);
}

}  // namespace tg::evg::frontend
