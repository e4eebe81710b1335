#pragma once
// Random core graphs for the compiler's tests: DAGs of the ops the importer maps, on random shapes
// whose channel counts straddle the NPU's alignments (1, primes, 31..33, 63..65, 127..129), with
// weights (kFlagParam, sometimes f16 or q8_0) and inputs (kFlagInput) filled. Interpreting the
// imported graph must give the reference's results; a pass must not change them.
#include <cstdint>
#include <vector>

#include "common/tensor_utils.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/tensor.h"

namespace tg::test {

struct RandomGraphOptions {
  int min_ops = 3;
  int max_ops = 12;
};

// A graph input (kFlagInput) or weight (kFlagParam) of `type` and shape `ne`, filled uniformly in
// [lo, hi).
Tensor* random_input(Context& ctx, Rng& rng, DType type, std::initializer_list<int64_t> ne, float lo = -1.0f,
                     float hi = 1.0f);
Tensor* random_weight(Context& ctx, Rng& rng, DType type, std::initializer_list<int64_t> ne, float lo = -1.0f,
                      float hi = 1.0f);

// The outputs of a random graph built in `ctx` (an allocating context); the same seed gives the
// same graph.
std::vector<Tensor*> random_graph(Context& ctx, uint32_t seed, const RandomGraphOptions& options = {});

}  // namespace tg::test
