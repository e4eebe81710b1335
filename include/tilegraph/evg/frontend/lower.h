#pragma once
// From a checked DAG to the C++ source of a JIT kernel that instantiates the EVG templates:
// a TopologicalVisitor over the DAG's nodes, a BlockEpilogue for the target's lanes, the
// Arguments built from the runtime bindings, and the JIT's entry point `run`.
//
// Two kinds of kernel share everything up to `make_arguments`, which describes the epilogue
// alone; they differ in what `run` drives (KernelKind).
#include <string>

#include "tilegraph/evg/frontend/dag.h"

namespace tg::evg::frontend {

// What the generated `run` drives.
enum class KernelKind {
  kEpilogueDriver,  // driver/epilogue_driver.h: applies the epilogue to given AccBlocks
  kGemm,            // driver/gemm_driver.h: D = epilogue(A · B), the CPU GEMM of the target's ISA
};

struct LowerOptions {
  int lanes = 4;              // arch::Cpu<lanes>
  bool fuse_compute = true;   // arch::Cpu (true) or arch::CpuStaged (false)
  int compute_length = 2048;  // BlockEpilogue's ComputeLength
  // `#pragma GCC target` string the kernel is compiled under ("" for the baseline), matching
  // `lanes` (cpu_target.h picks both from the CPU).
  std::string target;
  KernelKind kind = KernelKind::kEpilogueDriver;
  std::string source_text;  // echoed in a comment at the top
};

std::string lower_to_cpp(const EpilogueDag& dag, const LowerOptions& options);

}  // namespace tg::evg::frontend
