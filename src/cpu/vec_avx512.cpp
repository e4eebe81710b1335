// The AVX-512 (F, BW, VL) path (Skylake-SP and later).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "interleaved_rows.h"
#include "simd.h"
#include "tilegraph/evg/fusion/math.h"
#include "vec.h"

namespace tg::cpu {

TG_BEGIN_TARGET(TG_TARGET_AVX512)
namespace avx512 {
constexpr Isa kIsa = Isa::AVX512;
using V = simd::Avx512;
#include "vec_impl.h"
}  // namespace avx512
TG_END_TARGET

const VecKernels& avx512_vec_kernels() { return avx512::kVecKernels; }

}  // namespace tg::cpu
