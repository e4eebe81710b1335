// The AVX2 + FMA + F16C path (Haswell and later).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "interleaved_rows.h"
#include "simd.h"
#include "tilegraph/evg/fusion/math.h"
#include "vec.h"

namespace tg::cpu {

TG_BEGIN_TARGET(TG_TARGET_AVX2)
namespace avx2 {
constexpr Isa kIsa = Isa::AVX2;
using V = simd::Avx2;
#include "vec_impl.h"
}  // namespace avx2
TG_END_TARGET

const VecKernels& avx2_vec_kernels() { return avx2::kVecKernels; }

}  // namespace tg::cpu
