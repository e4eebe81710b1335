// The portable path: plain C++ for any x86-64 (the compiler may still use SSE2).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "interleaved_rows.h"
#include "simd.h"
#include "tilegraph/evg/fusion/math.h"
#include "vec.h"

namespace tg::cpu {
namespace scalar {
constexpr Isa kIsa = Isa::SCALAR;
using V = simd::Scalar;
#include "vec_impl.h"
}  // namespace scalar

const VecKernels& scalar_vec_kernels() { return scalar::kVecKernels; }

}  // namespace tg::cpu
