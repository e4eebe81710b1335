#pragma once
// What a compiler asks of an op before it emits it (the TX8 oplib's getOpClockCycle and
// getImmSpSize): the cycles the op costs on one tile and the scratch (imm) SPM it needs, for a
// shape, format and layout, without data.
//
// The cycles come from running the op itself on a one-tile chip whose SPM holds zeros: the same
// instructions, the same costs, so the estimate cannot drift from what the op does. The run's
// host time is the op's functional work on the slice (a slice fits in one SPM).
#include <cstdint>
#include <functional>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

struct OpCost {
  uint64_t cycles = 0;     // the sum of the op's instruction costs, each as if alone
  uint64_t imm_bytes = 0;  // scratch SPM the op needs besides its operands
};

// Hands out 256-byte aligned SPM ranges from address 0 up; throws tg::Error naming the request
// when the SPM is full.
class SpmArena {
 public:
  explicit SpmArena(uint64_t spm_bytes) : size_(spm_bytes) {}
  uint64_t allocate(uint64_t bytes);
  // A tensor holding the whole of `shape`.
  Tsr tensor(Format format, MemLayout layout, const Shape4& shape, int32_t dim = 4);
  uint64_t used() const { return next_; }

 private:
  uint64_t size_;
  uint64_t next_ = 0;
};

// Runs `op` on a fresh one-tile chip of `config` whose SPM is all zeros and returns the cycles it
// returned with `imm_bytes`.
OpCost cost_only_run(const ChipConfig& config, uint64_t imm_bytes, const std::function<uint64_t(Tile&, SpmArena&)>& op);

}  // namespace tg::sim::oplib
