// The AVX-512 table with AVX512-VNNI's integer GEMM micro-tile and matrix-vector kernels
// (vpdpbusd; Ice Lake, Zen 4 and later). Everything else is the AVX-512 table's: only the integer
// products gain from the instruction. The AVX512_BF16 ISA uses this table too: what it changes is
// the GEMM's (gemm_avx512_bf16.cpp).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>

#include "interleaved_rows.h"
#include "simd.h"
#include "vec.h"

namespace tg::cpu {

TG_BEGIN_TARGET(TG_TARGET_AVX512_VNNI)
namespace avx512_vnni {
using GL = simd::GemmLanesAvx512Vnni;
#include "vec_impl_int_gemm_tile.h"

// dot_q8k_rows and dot_q8_32_rows on Quants32Avx512Vnni, dot_interleaved_rows on RowLanes16Avx512Vnni (the file also
// defines the activation quantizers again, which the table keeps from the AVX-512 one: they do not use the
// instruction).
using V = simd::Avx512Vnni;
constexpr int W = V::kWidth;
using F = V::F;
#include "vec_impl_int_tiles.h"
// (after the tiles, which it uses)
#include "vec_impl_int_dot.h"
#include "vec_impl_interleaved.h"
}  // namespace avx512_vnni
TG_END_TARGET

const VecKernels& avx512_vnni_vec_kernels() {
  static const VecKernels kernels = [] {
    VecKernels k = avx512_vec_kernels();
    k.isa = Isa::AVX512_VNNI;
    k.quant_tile_tokens = avx512_vnni::GL::kTileTokens;
    k.quant_gemm_tiles = avx512_vnni::quant_gemm_tiles;
    k.dot_q8k_rows = avx512_vnni::dot_q8k_rows;
    k.dot_q8_32_rows = avx512_vnni::dot_q8_32_rows;
    k.dot_interleaved_rows = avx512_vnni::dot_interleaved_rows;
    return k;
  }();
  return kernels;
}

const VecKernels& avx512_bf16_vec_kernels() {
  static const VecKernels kernels = [] {
    VecKernels k = avx512_vnni_vec_kernels();
    k.isa = Isa::AVX512_BF16;
    return k;
  }();
  return kernels;
}

}  // namespace tg::cpu
