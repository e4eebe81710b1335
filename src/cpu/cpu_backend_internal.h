#pragma once
// Construction of the CPU backend with a chosen instruction set, for tests and benchmarks that
// compare the vector paths with each other on one machine.
#include <memory>

#include "tilegraph/runtime/backend.h"
#include "vec.h"

namespace tg::cpu {

// Whether prepare_weight makes interleaved copies: where this CPU decodes them faster
// (decodes_interleaved_copies, vec.h), or always (to test the copies on any CPU).
enum class InterleavedCopies { IF_FASTER, ALWAYS };

// Throws tg::Error if this CPU cannot run `isa` (anything above best_isa()).
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options, Isa isa,
                                          InterleavedCopies copies = InterleavedCopies::IF_FASTER);

}  // namespace tg::cpu
