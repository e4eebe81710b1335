#pragma once
// The gemm suite's fused section: D = gelu(A · B + bias[col]) as one JIT-compiled EVG GEMM
// kernel against the same done in separate passes, oneDNN's matmul with post-ops and torch's
// addmm + gelu (gemm_fused.cpp says how each is run).
#include <nlohmann/json.hpp>
#include <vector>

#include "targets.h"

namespace tg::bench {

struct FusedSection {
  nlohmann::json json;  // rows, peers, the kernel's cold compile time
  std::vector<Target> targets;
};

// Prints a table as the rows come unless `quiet`.
FusedSection run_fused_gemm_section(int rounds, bool quiet);

}  // namespace tg::bench
