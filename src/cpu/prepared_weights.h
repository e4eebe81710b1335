#pragma once
// The weight copies that the CPU backends read instead of a weight's stored rows
// (Backend::prepare_weight): interleaved quantized matrices (interleaved_rows.h) for
// decode, found by the address of the weight's data. One registry for the process: the layout is the same on every ISA,
// so every CPU backend reads a copy that any of them made.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels.h"
#include "tilegraph/core/tensor.h"
#include "tilegraph/runtime/backend.h"

namespace tg::cpu {

struct InterleavedMatrix {
  DType type;
  int64_t n, rows;  // elements per row, rows
  size_t stride;    // of the stored rows it copies
  const uint8_t* groups;
};

// The copy made of `a`'s data with a's type and shape, or null.
const InterleavedMatrix* find_interleaved(const Tensor& a);

// An interleaved copy of t (or a share of the one already made of it), laid out on exec's threads
// and registered until the result is destroyed; null when t is not a 2-D matrix of a type
// interleave_rows lays out, or when the system grants no memory for the copy.
std::unique_ptr<PreparedWeight> interleave_weight(const Tensor& t, ExecContext& exec);

}  // namespace tg::cpu
