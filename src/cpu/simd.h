#pragma once
// Vector traits: one struct per instruction set with the same static interface, so vectorised
// code is written once (vec_impl.h) and compiled per ISA. The build targets baseline x86-64;
// AVX2 and AVX-512 code is compiled under `#pragma GCC target` regions and only ever called after
// cpu_features() says the CPU and OS support it.
//
// Every member is always_inline: a call from a function compiled for a different target would
// otherwise be an out-of-line call with a mismatched ABI, and GCC refuses to inline across
// incompatible targets, so mistakes show up as compile errors rather than illegal instructions.
// GCC 12's AVX-512 intrinsics initialise their "undefined" operands from themselves, which
// -W(maybe-)uninitialized reports once they are inlined into our code (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
// GCC notes that passing vector types between functions compiled for different targets changes
// the ABI. Every function taking or returning one here is always_inline (lambdas included, once
// inlined), so no such call exists.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <cstdint>
#include <cstring>

#include "interleaved_rows.h"
#include "tilegraph/core/dtype.h"

#define TG_SIMD_INLINE __attribute__((always_inline)) static inline

// The target strings of the two vector ISAs; the AVX-512 one includes the AVX2 features so that
// AVX2-level helpers may be inlined into it.
#define TG_TARGET_AVX2 "avx2,fma,f16c"
#define TG_TARGET_AVX512 "avx512f,avx512bw,avx512vl,avx2,fma,f16c"
#define TG_TARGET_AVX512_VNNI "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c"

// Compiles everything up to TG_END_TARGET for `isa` (one of the strings above).
#define TG_PRAGMA(text) _Pragma(#text)
#define TG_BEGIN_TARGET(isa) _Pragma("GCC push_options") TG_PRAGMA(GCC target(isa))
#define TG_END_TARGET _Pragma("GCC pop_options")

namespace tg::cpu::simd {

// q4_K's and q5_K's 12 bytes of 6-bit sub-block scales and mins (ggml's get_scale_min_k4) for all
// 8 sub-blocks at once, 4 bytes at a time: bytes 0-3 hold scales 0-3 in their low 6 bits and the
// top 2 bits of scales 4-7; bytes 4-7 the same for the mins; bytes 8-11 the low nibbles of scales
// (low) and mins (high) 4-7. sc_m gets the 8 scales, then the 8 mins.
inline void unpack_scales_mins_k(const uint8_t* scales, uint8_t* sc_m) {
  uint32_t packed[3];
  std::memcpy(packed, scales, sizeof packed);
  constexpr uint32_t kLow6 = 0x3F3F3F3F, kLow4 = 0x0F0F0F0F, kBits45 = 0x30303030;
  const uint32_t words[4] = {packed[0] & kLow6, (packed[2] & kLow4) | (packed[0] >> 2 & kBits45), packed[1] & kLow6,
                             (packed[2] >> 4 & kLow4) | (packed[1] >> 2 & kBits45)};
  std::memcpy(sc_m, words, sizeof words);
}

// Integer dot products of 32 quants at a time, for quantized weights (unsigned quants, below 64;
// or q8_0's signed bytes, dot_signed) against 8-bit activations (signed, -127..127; quant.h):
// exact integer sums, with the K types' per-16-element scales applied inside them. One struct per
// ISA family with the same interface; the vector structs name theirs Q32.
struct Quants32Portable {
  static constexpr bool kF16Steps = false;  // Quants32Avx512Vnni::pair_steps
  struct B {
    int16_t v[32];  // bytes, widened: the portable code has no byte lanes to keep them in
  };
  using Acc = int32_t;
  using FAcc = float;

  static B load_u8(const uint8_t* p) {
    B b;
    for (int i = 0; i < 32; ++i) b.v[i] = p[i];
    return b;
  }
  static B load_i8(const int8_t* p) {
    B b;
    for (int i = 0; i < 32; ++i) b.v[i] = p[i];
    return b;
  }
  static void store_u8(uint8_t* p, const B& b) {
    for (int i = 0; i < 32; ++i) p[i] = uint8_t(b.v[i]);
  }
  // (a >> shift) & mask in every byte.
  static B bits(B a, int shift, int mask) {
    for (int16_t& x : a.v) x = int16_t(x >> shift & mask);
    return a;
  }
  // Bits from .. from + width - 1 of every byte, moved to bits to .. to + width - 1 (the rest 0).
  static B bits_to(B a, int from, int width, int to) {
    for (int16_t& x : a.v) x = int16_t((x >> from & ((1 << width) - 1)) << to);
    return a;
  }
  static B or_(B a, B b) {
    for (int i = 0; i < 32; ++i) a.v[i] = int16_t(a.v[i] | b.v[i]);
    return a;
  }
  // The low nibbles of 16 bytes, then their high nibbles.
  static B nibbles16(const uint8_t* p) {
    B b;
    for (int i = 0; i < 16; ++i) {
      b.v[i] = int16_t(p[i] & 0xF);
      b.v[i + 16] = int16_t(p[i] >> 4);
    }
    return b;
  }
  // Byte i is `value` where bit i of `bits` is set, else 0.
  static B bits32(uint32_t bits, int value) {
    B b;
    for (int i = 0; i < 32; ++i) b.v[i] = int16_t(bits >> i & 1u ? value : 0);
    return b;
  }
  // Two rows of a 32-element block type (Quants32Avx2::RowPair: there, both in one pair of
  // registers, here apart) against one token's quants; a row's sum and its f32 accumulator.
  struct RowPair {
    B a, b;
  };
  using XPair = B;
  struct PairAcc {
    int32_t a, b;
  };
  struct PairFAcc {
    float a, b;
  };
  static RowPair nibbles16_pair(const uint8_t* a, const uint8_t* b) { return {nibbles16(a), nibbles16(b)}; }
  static RowPair or_bits32_pair(const RowPair& q, uint32_t qh_a, uint32_t qh_b, int value) {
    return {or_(q.a, bits32(qh_a, value)), or_(q.b, bits32(qh_b, value))};
  }
  static XPair x_pair(const int8_t* x) { return load_i8(x); }
  static RowPair splat_pair(int value) { return {splat(value), splat(value)}; }
  static PairAcc dot_pair(const RowPair& q, const XPair& x) { return {dot(q.a, x), dot(q.b, x)}; }
  // acc + dot_pair(q, x)
  static PairAcc dot_pair_add(PairAcc acc, const RowPair& q, const XPair& x) {
    return {acc.a + dot(q.a, x), acc.b + dot(q.b, x)};
  }
  static PairAcc pair_izero() { return {0, 0}; }
  static PairAcc pair_sub(PairAcc a, PairAcc b) { return {a.a - b.a, a.b - b.b}; }
  // Minus `centre` (q4_0's 8, q5_0's 16) times a token's quants, as one row's part of a PairAcc
  // holds it (both rows' are the same), and the PairAcc whose rows both start from it.
  using PairCentre = int32_t;
  static PairCentre pair_centre(const XPair& x, int centre) { return -dot(splat(centre), x); }
  static PairAcc centre_acc(PairCentre c) { return {c, c}; }
  static PairFAcc pair_fzero() { return {0.0f, 0.0f}; }
  static PairFAcc pair_fmadd(PairAcc a, const float* d_a, const float* d_b, float dx, PairFAcc acc) {
    return {__builtin_fmaf(float(a.a), *d_a * dx, acc.a), __builtin_fmaf(float(a.b), *d_b * dx, acc.b)};
  }
  static void pair_reduce(PairFAcc acc, float* a, float* b) {
    *a = acc.a;
    *b = acc.b;
  }
  static Acc zero() { return 0; }
  // 16 int16, one per 16 elements of a K block.
  struct I16x16 {
    int16_t v[16];
  };
  // A block's 16 scales as dot_add takes them.
  using Scales = I16x16;
  static Scales scales(const I16x16& scale16) { return scale16; }
  // acc + sum_i q[i] * x[i] * scale16[2p + i / 16]: elements 32p .. 32p + 31 of the block.
  static Acc dot_add(Acc acc, const B& q, const B& x, const Scales& s, int p) {
    for (int h = 0; h < 2; ++h) {
      int32_t sum = 0;
      for (int i = 16 * h; i < 16 * h + 16; ++i) sum += q.v[i] * x.v[i];
      acc += sum * s.v[2 * p + h];
    }
    return acc;
  }
  // sum_i q[i] * x[i]
  static Acc dot(const B& q, const B& x) {
    int32_t sum = 0;
    for (int i = 0; i < 32; ++i) sum += q.v[i] * x.v[i];
    return sum;
  }
  // The same for signed q (-128..127).
  static Acc dot_signed(const B& q, const B& x) { return dot(q, x); }
  // Every byte `value`.
  static B splat(int value) {
    B b;
    for (int16_t& v : b.v) v = int16_t(value);
    return b;
  }
  static Acc sub(Acc a, Acc b) { return a - b; }
  // sum_i a[i] * b[i] over 16 int16.
  static Acc dot_i16(const I16x16& a, const int16_t* b) {
    int32_t sum = 0;
    for (int i = 0; i < 16; ++i) sum += a.v[i] * b[i];
    return sum;
  }
  static FAcc fzero() { return 0.0f; }
  static FAcc fmadd(Acc a, float scale, FAcc acc) { return __builtin_fmaf(float(a), scale, acc); }
  static float reduce(FAcc a) { return a; }
  // Each of 8 bytes twice (a scale per 32 elements as one per 16); 16 int8 as they are.
  static I16x16 widen_pairs(const uint8_t* p) {
    I16x16 out;
    for (int i = 0; i < 8; ++i) out.v[2 * i] = out.v[2 * i + 1] = p[i];
    return out;
  }
  static I16x16 widen_i8(const int8_t* p) {
    I16x16 out;
    for (int i = 0; i < 16; ++i) out.v[i] = p[i];
    return out;
  }
  // A q4_K or q5_K block's packed scales and mins (unpack_scales_mins_k) as dot_add and dot_i16
  // take them: each sub-block's scale, and its min, for both of its 16-element halves.
  struct ScalesMinsK {
    Scales scales;
    I16x16 mins;
  };
  static ScalesMinsK scales_mins_k(const uint8_t* packed) {
    uint8_t sc_m[16];
    unpack_scales_mins_k(packed, sc_m);
    return {scales(widen_pairs(sc_m)), widen_pairs(sc_m + 8)};
  }
  // 32 floats to nearest-even int8 of x / d, clamped to -127..127 (quant.h's activation rule).
  static void quantize(const float* x, float d, int8_t* q) {
    for (int i = 0; i < 32; ++i) {
      const float r = __builtin_nearbyintf(x[i] / d);
      q[i] = int8_t(r > 127.0f ? 127 : r < -127.0f ? -127 : int(r));
    }
  }
};

// The integer GEMM of quantized weights (vec_impl_int_gemm.h): one weight row per lane, 4 quants
// of it (unsigned, below 64; q8_0's signed bytes: dot4_signed_add) against 4 activations of one
// token (signed, -127..127) broadcast to every lane, summed exactly to int32 with a per-lane
// int16 scale (maddubs then madd: the scale sits in both 16-bit halves of the lane's scale
// word). One struct per ISA family, named GL in the ISA traits.
struct GemmLanesPortable {
  static constexpr int kLanes = 4;
  // A panel's quants from rows [kLanes][32] (each row's 32 quants of one piece): quads [8][kLanes]
  // of 4 bytes, element 4j + i of row r at (j * kLanes + r) * 4 + i.
  static void interleave_quads(const uint8_t* rows, uint8_t* quads) {
    for (int j = 0; j < 8; ++j) {
      for (int r = 0; r < kLanes; ++r) std::memcpy(quads + (j * kLanes + r) * 4, rows + r * 32 + 4 * j, 4);
    }
  }
  // Tokens per micro-tile (vec_impl_int_gemm_tile.h): as many int32 sums and f32 accumulators as
  // the registers hold beside the weights, the scales and the temporaries.
  static constexpr int kTileTokens = 4;
  // Whether dot4 (4 products summed into int32 in one instruction, without a scale) exists.
  static constexpr bool kDpbusd = false;
  struct W {
    uint8_t v[4 * kLanes];
  };
  struct I {
    int32_t v[kLanes];
  };
  struct F {
    float v[kLanes];
  };
  static W load_w(const uint8_t* p) {
    W w;
    std::memcpy(w.v, p, sizeof w.v);
    return w;
  }
  static I izero() { return {}; }
  static I load_i(const int32_t* p) {
    I a;
    std::memcpy(a.v, p, sizeof a.v);
    return a;
  }
  // Every lane's scale word is 1 in both halves.
  static I ones() {
    I a;
    for (int32_t& v : a.v) v = 0x00010001;
    return a;
  }
  static I dot4_add(I acc, const W& w, const int8_t* x, const I& scales) {
    for (int l = 0; l < kLanes; ++l) {
      const uint8_t* q = w.v + 4 * l;
      const int32_t low = int16_t(scales.v[l] & 0xFFFF), high = int16_t(uint32_t(scales.v[l]) >> 16);
      acc.v[l] += low * (q[0] * x[0] + q[1] * x[1]) + high * (q[2] * x[2] + q[3] * x[3]);
    }
    return acc;
  }
  // Whether dot4_pairs / add_pairs / scale_pairs_add exist: dot4_add in parts, so that pairs of
  // products of several steps are added (as int16 in the vector structs; the caller keeps them
  // in range, QuantGemmLayout::int16_steps) before one multiply by the scales.
  static constexpr bool kInt16Pairs = true;
  struct P {
    int32_t v[2 * kLanes];
  };
  static P dot4_pairs(const W& w, const int8_t* x) {
    P p;
    for (int l = 0; l < kLanes; ++l) {
      const uint8_t* q = w.v + 4 * l;
      p.v[2 * l] = q[0] * x[0] + q[1] * x[1];
      p.v[2 * l + 1] = q[2] * x[2] + q[3] * x[3];
    }
    return p;
  }
  static P add_pairs(P a, const P& b) {
    for (int i = 0; i < 2 * kLanes; ++i) a.v[i] += b.v[i];
    return a;
  }
  static I scale_pairs_add(I acc, const P& p, const I& scales) {
    for (int l = 0; l < kLanes; ++l) {
      const int32_t low = int16_t(scales.v[l] & 0xFFFF), high = int16_t(uint32_t(scales.v[l]) >> 16);
      acc.v[l] += low * p.v[2 * l] + high * p.v[2 * l + 1];
    }
    return acc;
  }
  // q8_0's signed weights (int8 bytes, -128..127), without a scale: the vector structs multiply
  // |w| by x with w's sign, which split_sign prepares once per load for every token.
  using SignedW = W;
  static SignedW split_sign(const W& w) { return w; }
  static I dot4_signed_add(I acc, const SignedW& w, const int8_t* x) {
    for (int l = 0; l < kLanes; ++l) {
      for (int i = 0; i < 4; ++i) acc.v[l] += int8_t(w.v[4 * l + i]) * x[i];
    }
    return acc;
  }
  static F fzero() { return {}; }
  static F load_f(const float* p) {
    F a;
    std::memcpy(a.v, p, sizeof a.v);
    return a;
  }
  // acc + w * x
  static F fmadd(const F& w, float x, F acc) {
    for (int l = 0; l < kLanes; ++l) acc.v[l] = __builtin_fmaf(w.v[l], x, acc.v[l]);
    return acc;
  }
  // acc + sum * (d * dx)
  static F fold(F acc, const I& sum, const F& d, float dx) {
    for (int l = 0; l < kLanes; ++l) acc.v[l] = __builtin_fmaf(float(sum.v[l]), d.v[l] * dx, acc.v[l]);
    return acc;
  }
  // p = a, or p + a when accumulating.
  static void store(float* p, const F& a, bool accumulate) {
    for (int l = 0; l < kLanes; ++l) p[l] = accumulate ? p[l] + a.v[l] : a.v[l];
  }
};

// The lanes of interleaved_rows.h's groups: one lane per weight row, 16 rows, each lane's sum its
// row's alone (so every ISA gives the same bits). sum_nibbles and sum_q8_0 return each row's exact
// integer sum of q x over one block from its chunks and the token's 32 quants: sum_nibbles's q the
// nibble (with kFifth, and its fifth bit from the `fifth` chunk: q5), less `centre` (the caller's
// centre times the token's sum of quants); sum_q8_0's the signed quant, x_sum the token's sum,
// which the tables that multiply q + 128 take back. fmadd_steps: acc + sum * (d * dx), the rows'
// f16 steps d converted exactly; fmadd_offsets: acc + m * s. One struct per ISA family; the
// vector structs name theirs R16.
struct RowLanes16Portable {
  static constexpr int kRows = 16;
  struct I {
    int32_t v[kRows];
  };
  struct F {
    float v[kRows];
  };
  static F fzero() { return F{}; }
  template <bool kFifth>
  static I sum_nibbles(const uint8_t* chunks, const uint8_t* fifth, const int8_t* x, int32_t centre) {
    I s{};
    for (int r = 0; r < kRows; ++r) {
      for (int c = 0; c < 4; ++c) {
        for (int j = 0; j < 4; ++j) {
          const uint8_t q = chunks[64 * c + 4 * r + j];
          int low = q & 0xF, high = q >> 4;
          if constexpr (kFifth) {
            low |= (fifth[4 * r + j] >> c & 1) << 4;
            high |= (fifth[4 * r + j] >> (4 + c) & 1) << 4;
          }
          s.v[r] += low * x[4 * c + j] + high * x[16 + 4 * c + j];
        }
      }
      s.v[r] -= centre;
    }
    return s;
  }
  static I sum_q8_0(const uint8_t* chunks, const int8_t* x, int32_t) {
    I s{};
    for (int r = 0; r < kRows; ++r) {
      for (int c = 0; c < 8; ++c) {
        for (int j = 0; j < 4; ++j) s.v[r] += (int32_t(chunks[64 * c + 4 * r + j]) - 128) * x[4 * c + j];
      }
    }
    return s;
  }
  static F fmadd_steps(const I& sum, const uint16_t* steps, float dx, F acc) {
    for (int r = 0; r < kRows; ++r) {
      acc.v[r] = __builtin_fmaf(float(sum.v[r]), f16_to_f32(f16{steps[r]}) * dx, acc.v[r]);
    }
    return acc;
  }
  static F fmadd_offsets(const uint16_t* m, float s, F acc) {
    for (int r = 0; r < kRows; ++r) acc.v[r] = __builtin_fmaf(f16_to_f32(f16{m[r]}), s, acc.v[r]);
    return acc;
  }
  // A q4_K block of the group (InterleavedAffineK; with kFifth q5_K's) against the token's 256
  // quants, scale dx and the sums of its sub-blocks' quants in pairs (`sub_sums`: sub-blocks 2p and
  // 2p + 1 as the low and high int16 of word p): acc + d dx sum_s sc_s (q . x)_s - dmin dx sum_s
  // m_s sum_s.
  template <bool kFifth>
  static F fold_affine_k(const uint8_t* block, const int8_t* x, const int32_t* sub_sums, float dx, F acc) {
    using L = InterleavedAffineK<kFifth>;
    for (int r = 0; r < kRows; ++r) {
      int32_t sum = 0, mins = 0;
      for (int s = 0; s < 8; ++s) {
        int32_t dot = 0;
        for (int c = 0; c < 8; ++c) {
          for (int j = 0; j < 4; ++j) {
            const uint8_t q = block[L::kChunks + 64 * (8 * (s / 2) + c) + 4 * r + j];
            int quant = s % 2 ? q >> 4 : q & 0xF;
            if constexpr (kFifth) quant |= (block[L::kFifthBits + 64 * c + 4 * r + j] >> s & 1) << 4;
            dot += quant * x[32 * s + 4 * c + j];
          }
        }
        const int16_t sub_sum = int16_t(uint32_t(sub_sums[s / 2]) >> (16 * (s % 2)));
        sum += int32_t(block[L::kScales + kRows * s + r]) * dot;
        mins += int32_t(block[L::kMins + 2 * kRows * (s / 2) + 2 * r + s % 2]) * sub_sum;
      }
      uint16_t d, dmin;
      std::memcpy(&d, block + L::kD + 2 * r, 2);
      std::memcpy(&dmin, block + L::kDmin + 2 * r, 2);
      acc.v[r] = __builtin_fmaf(float(sum), f16_to_f32(f16{d}) * dx, acc.v[r]);
      acc.v[r] = __builtin_fmaf(float(mins), -(f16_to_f32(f16{dmin}) * dx), acc.v[r]);
    }
    return acc;
  }
  // A q6_K block of the group (InterleavedQ6K) against the token's 256 quants, scale dx and its
  // 16-element sums in pairs (`sub_sums` word p: sub-blocks 2p, 2p + 1): acc + d dx (sum_s sc_s
  // (q . x)_s - 32 sum_s sc_s sum_s), q the unsigned 6 bits.
  static F fold_q6_K(const uint8_t* block, const int8_t* x, const int32_t* sub_sums, float dx, F acc) {
    using L = InterleavedQ6K;
    for (int r = 0; r < kRows; ++r) {
      int32_t sum = 0, centre = 0;
      for (int s = 0; s < 16; ++s) {
        const int32_t scale = int8_t(block[L::kScales + 2 * kRows * (s / 2) + 2 * r + s % 2]);
        int32_t dot = 0;
        for (int e = 16 * s; e < 16 * s + 16; ++e) {
          const int h = e / 128, g = e % 128 / 32, l = e % 32;
          const uint8_t* triplet = block + L::kTriplets + L::kTripletBytes * (8 * h + l / 4) + 4 * r + l % 4;
          const uint8_t low = triplet[64 * (g % 2)], high = triplet[128];
          dot += ((g >= 2 ? low >> 4 : low & 0xF) | (high >> (2 * g) & 3) << 4) * x[e];
        }
        sum += scale * dot;
        centre += scale * int16_t(uint32_t(sub_sums[s / 2]) >> (16 * (s % 2)));
      }
      uint16_t d;
      std::memcpy(&d, block + L::kD + 2 * r, 2);
      acc.v[r] = __builtin_fmaf(float(sum - 32 * centre), f16_to_f32(f16{d}) * dx, acc.v[r]);
    }
    return acc;
  }
  static void store(float* out, const F& acc, int rows) {
    for (int r = 0; r < rows; ++r) out[r] = acc.v[r];
  }
};

// The portable path: one lane, plain C++. Kernels instantiated with it are what runs on CPUs
// without AVX2, and the reference for the vector paths in tests.
struct Scalar {
  using F = float;
  static constexpr int kWidth = 1;

  TG_SIMD_INLINE F zero() { return 0.0f; }
  TG_SIMD_INLINE F set1(float x) { return x; }
  TG_SIMD_INLINE F load(const float* p) { return *p; }
  TG_SIMD_INLINE void store(float* p, F x) { *p = x; }
  TG_SIMD_INLINE F load_f16(const uint16_t* p) { return f16_to_f32(f16{*p}); }
  TG_SIMD_INLINE void store_f16(uint16_t* p, F x) { *p = f32_to_f16(x).bits; }
  TG_SIMD_INLINE F load_bf16(const uint16_t* p) { return bf16_to_f32(bf16{*p}); }
  TG_SIMD_INLINE void store_bf16(uint16_t* p, F x) { *p = f32_to_bf16(x).bits; }
  TG_SIMD_INLINE F load_i8(const int8_t* p) { return float(*p); }
  TG_SIMD_INLINE float f16_scalar(uint16_t bits) { return f16_to_f32(f16{bits}); }

  // Integer lanes, for unpacking quants: bytes widened to 32-bit lanes, bit operations with a
  // scalar operand, and the conversion to float.
  using I = int32_t;
  TG_SIMD_INLINE I load_u8(const uint8_t* p) { return *p; }
  TG_SIMD_INLINE I and_i(I a, int32_t mask) { return a & mask; }
  TG_SIMD_INLINE I or_i(I a, I b) { return a | b; }
  // a | (b & mask)
  TG_SIMD_INLINE I or_masked(I a, I b, int32_t mask) { return a | (b & mask); }
  TG_SIMD_INLINE I srl_i(I a, int count) { return int32_t(uint32_t(a) >> count); }
  TG_SIMD_INLINE I sll_i(I a, int count) { return int32_t(uint32_t(a) << count); }
  // Lane i is `value` where bit first + i of `bits` is set, else 0.
  TG_SIMD_INLINE I select_bits(uint32_t bits, int first, int32_t value) { return (bits >> first & 1u) ? value : 0; }
  TG_SIMD_INLINE F to_float(I a) { return float(a); }
  using Q32 = Quants32Portable;
  using GL = GemmLanesPortable;
  using R16 = RowLanes16Portable;

  TG_SIMD_INLINE F add(F a, F b) { return a + b; }
  TG_SIMD_INLINE F sub(F a, F b) { return a - b; }
  TG_SIMD_INLINE F mul(F a, F b) { return a * b; }
  TG_SIMD_INLINE F div(F a, F b) { return a / b; }
  TG_SIMD_INLINE F fmadd(F a, F b, F c) { return __builtin_fmaf(a, b, c); }
  TG_SIMD_INLINE F fnmadd(F a, F b, F c) { return __builtin_fmaf(-a, b, c); }
  // max returns `b` when either is NaN (as maxps does): pass the data as `b` to keep NaN.
  TG_SIMD_INLINE F max(F a, F b) { return a > b ? a : b; }
  TG_SIMD_INLINE F sqrt(F a) { return __builtin_sqrtf(a); }
  TG_SIMD_INLINE F abs(F a) { return __builtin_fabsf(a); }
  TG_SIMD_INLINE F neg(F a) { return -a; }
  TG_SIMD_INLINE float reduce_add(F a) { return a; }
  TG_SIMD_INLINE void reduce_add_rows(const F v[1], float* out) { out[0] = v[0]; }
  TG_SIMD_INLINE float reduce_max(F a) { return a; }
};

TG_BEGIN_TARGET(TG_TARGET_AVX2)

// RowLanes16Portable's interface on AVX2: rows 0-7 in one register, 8-15 in another. q4_0's
// nibbles go through vpmaddubsw (two products per int16, |q x| <= 15 * 128) and all 8 steps of a
// block add in int16 (at most 30720) before one vpmaddwd widens them; q8_0's signed quants
// multiply as |q| against x with q's sign (vpmaddubsw takes one operand unsigned), widened per step.
struct RowLanes16Avx2 {
  static constexpr int kRows = 16;
  struct I {
    __m256i low, high;
  };
  struct F {
    __m256 low, high;
  };
  TG_SIMD_INLINE __m256i quad(const int8_t* x) {
    int32_t q;
    std::memcpy(&q, x, sizeof q);
    return _mm256_set1_epi32(q);
  }
  TG_SIMD_INLINE F fzero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  // 4-bit quants' products (at most 15 * 128 twice) add in int16 over the whole block (30720),
  // 5-bit ones' over one chunk (31 * 128 four times).
  template <bool kFifth>
  TG_SIMD_INLINE __m256i half_nibbles(const uint8_t* chunks, const uint8_t* fifth, const int8_t* x, int32_t centre) {
    const __m256i mask = _mm256_set1_epi8(0x0F), bit4 = _mm256_set1_epi8(0x10), ones = _mm256_set1_epi16(1);
    const __m256i bits = kFifth ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(fifth)) : _mm256_setzero_si256();
    __m256i pairs = _mm256_setzero_si256(), sum = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(chunks + 64 * c));
      __m256i low = _mm256_and_si256(v, mask), high = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
      if constexpr (kFifth) {
        low = _mm256_or_si256(low, _mm256_and_si256(bit_to_4(bits, c), bit4));
        high = _mm256_or_si256(high, _mm256_and_si256(bit_to_4(bits, 4 + c), bit4));
      }
      pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(low, quad(x + 4 * c)));
      pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(high, quad(x + 16 + 4 * c)));
      if constexpr (kFifth) {
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, ones));
        pairs = _mm256_setzero_si256();
      }
    }
    if constexpr (!kFifth) sum = _mm256_madd_epi16(pairs, ones);
    return _mm256_sub_epi32(sum, _mm256_set1_epi32(centre));
  }
  template <bool kFifth>
  TG_SIMD_INLINE I sum_nibbles(const uint8_t* chunks, const uint8_t* fifth, const int8_t* x, int32_t centre) {
    return {half_nibbles<kFifth>(chunks, fifth, x, centre), half_nibbles<kFifth>(chunks + 32, fifth + 32, x, centre)};
  }
  TG_SIMD_INLINE __m256i half_q8_0(const uint8_t* chunks, const int8_t* x) {
    __m256i sum = _mm256_setzero_si256();
    for (int c = 0; c < 8; ++c) {
      const __m256i q = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(chunks + 64 * c)),
                                         _mm256_set1_epi8(char(0x80)));
      const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(q), _mm256_sign_epi8(quad(x + 4 * c), q));
      sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
    }
    return sum;
  }
  TG_SIMD_INLINE I sum_q8_0(const uint8_t* chunks, const int8_t* x, int32_t) {
    return {half_q8_0(chunks, x), half_q8_0(chunks + 32, x)};
  }
  // v's bit `bit` of each byte at bit 4, the other bits of the byte anywhere but bit 4 (16-bit
  // shifts move no other byte's bits there for these distances).
  TG_SIMD_INLINE __m256i bit_to_4(__m256i v, int bit) {
    return bit < 4 ? _mm256_slli_epi16(v, 4 - bit) : bit > 4 ? _mm256_srli_epi16(v, bit - 4) : v;
  }
  // Rows 8h .. 8h + 7 of fold_affine_k: each sub-block's 8 steps of q4 products added in int16
  // (at most 30720) and widened once (q5's every 4 steps), then multiplied by the rows' scales
  // (vpmulld).
  template <bool kFifth>
  TG_SIMD_INLINE void half_affine_k(const uint8_t* block, const int8_t* x, const int32_t* sub_sums, int h, __m256i& sum,
                                    __m256i& mins) {
    using L = InterleavedAffineK<kFifth>;
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    const __m256i mask = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    sum = _mm256_setzero_si256();
    mins = _mm256_setzero_si256();
    for (int p = 0; p < 4; ++p) {
      __m256i low = _mm256_setzero_si256(), high = _mm256_setzero_si256();
      __m256i low16 = _mm256_setzero_si256(), high16 = _mm256_setzero_si256();
      for (int c = 0; c < 8; ++c) {
        const __m256i v =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + L::kChunks + 64 * (8 * p + c) + 32 * h));
        __m256i ql = _mm256_and_si256(v, mask), qh = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
        if constexpr (kFifth) {
          const __m256i bits =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + L::kFifthBits + 64 * c + 32 * h));
          ql = _mm256_or_si256(ql, _mm256_and_si256(bit_to_4(bits, 2 * p), bit4));
          qh = _mm256_or_si256(qh, _mm256_and_si256(bit_to_4(bits, 2 * p + 1), bit4));
        }
        low16 = _mm256_add_epi16(low16, _mm256_maddubs_epi16(ql, quad(x + 64 * p + 4 * c)));
        high16 = _mm256_add_epi16(high16, _mm256_maddubs_epi16(qh, quad(x + 64 * p + 32 + 4 * c)));
        if (!kFifth ? c == 7 : c % 4 == 3) {
          low = _mm256_add_epi32(low, _mm256_madd_epi16(low16, ones));
          high = _mm256_add_epi32(high, _mm256_madd_epi16(high16, ones));
          low16 = high16 = _mm256_setzero_si256();
        }
      }
      const auto scales = [&](int s) {
        return _mm256_cvtepu8_epi32(
            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + L::kScales + 16 * s + 8 * h)));
      };
      sum = _mm256_add_epi32(sum, _mm256_mullo_epi32(low, scales(2 * p)));
      sum = _mm256_add_epi32(sum, _mm256_mullo_epi32(high, scales(2 * p + 1)));
      const __m256i m =
          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + L::kMins + 32 * p + 16 * h)));
      mins = _mm256_add_epi32(mins, _mm256_madd_epi16(m, _mm256_set1_epi32(sub_sums[p])));
    }
  }
  template <bool kFifth>
  TG_SIMD_INLINE F fold_affine_k(const uint8_t* block, const int8_t* x, const int32_t* sub_sums, float dx, F acc) {
    using L = InterleavedAffineK<kFifth>;
    const __m256 dxv = _mm256_set1_ps(dx);
    __m256 out[2] = {acc.low, acc.high};
    for (int h = 0; h < 2; ++h) {
      __m256i sum, mins;
      half_affine_k<kFifth>(block, x, sub_sums, h, sum, mins);
      const auto steps = [&](size_t at) {
        return _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + at + 16 * h))),
                             dxv);
      };
      out[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), steps(L::kD), out[h]);
      out[h] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(mins), steps(L::kDmin), out[h]);
    }
    return {out[0], out[1]};
  }
  // Rows 8h8 .. 8h8 + 7 of fold_q6_K: two steps of products (at most 2 * 2 * 63 * 127) added in
  // int16 before each widening; the scales sign-extended from their pairs for vpmulld.
  TG_SIMD_INLINE __m256i half_q6_K(const uint8_t* block, const int8_t* x, const int32_t* sub_sums, int h8) {
    using L = InterleavedQ6K;
    const __m256i low4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30), ones = _mm256_set1_epi16(1);
    const auto chunk = [&](size_t at) {
      return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + at + 32 * h8));
    };
    const auto scale_pair = [&](int p) {
      return _mm256_cvtepi8_epi16(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + L::kScales + 32 * p + 16 * h8)));
    };
    __m256i sum = _mm256_setzero_si256(), centre = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 2; ++k) {
        __m256i part[4] = {};
        for (int c = 4 * k; c < 4 * k + 4; c += 2) {
          __m256i pairs[4] = {};
          for (int cc = c; cc < c + 2; ++cc) {
            const size_t triplet = L::kTriplets + L::kTripletBytes * (8 * h + cc);
            const __m256i a = chunk(triplet), b = chunk(triplet + 64), v = chunk(triplet + 128);
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(a, low4), _mm256_and_si256(_mm256_slli_epi16(v, 4), bits45)),
                _mm256_or_si256(_mm256_and_si256(b, low4), _mm256_and_si256(_mm256_slli_epi16(v, 2), bits45)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low4), _mm256_and_si256(v, bits45)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), low4),
                                _mm256_and_si256(_mm256_srli_epi16(v, 2), bits45))};
            for (int g = 0; g < 4; ++g) {
              pairs[g] = _mm256_add_epi16(pairs[g], _mm256_maddubs_epi16(q[g], quad(x + 128 * h + 32 * g + 4 * cc)));
            }
          }
          for (int g = 0; g < 4; ++g) part[g] = _mm256_add_epi32(part[g], _mm256_madd_epi16(pairs[g], ones));
        }
        for (int g = 0; g < 4; ++g) {
          const __m256i sc = scale_pair(4 * h + g);
          const __m256i scale = k ? _mm256_srai_epi32(sc, 16) : _mm256_srai_epi32(_mm256_slli_epi32(sc, 16), 16);
          sum = _mm256_add_epi32(sum, _mm256_mullo_epi32(part[g], scale));
        }
      }
    }
    for (int p = 0; p < 8; ++p)
      centre = _mm256_add_epi32(centre, _mm256_madd_epi16(scale_pair(p), _mm256_set1_epi32(sub_sums[p])));
    return _mm256_sub_epi32(sum, _mm256_slli_epi32(centre, 5));
  }
  TG_SIMD_INLINE F fold_q6_K(const uint8_t* block, const int8_t* x, const int32_t* sub_sums, float dx, F acc) {
    using L = InterleavedQ6K;
    const __m256 dxv = _mm256_set1_ps(dx);
    __m256 out[2] = {acc.low, acc.high};
    for (int h8 = 0; h8 < 2; ++h8) {
      const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + L::kD + 16 * h8)));
      out[h8] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(half_q6_K(block, x, sub_sums, h8)), _mm256_mul_ps(d, dxv), out[h8]);
    }
    return {out[0], out[1]};
  }
  TG_SIMD_INLINE F fmadd_offsets(const uint16_t* m, float s, F acc) {
    const __m256 sv = _mm256_set1_ps(s);
    return {_mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m))), sv, acc.low),
            _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m + 8))), sv, acc.high)};
  }
  TG_SIMD_INLINE F fmadd_steps(I sum, const uint16_t* steps, float dx, F acc) {
    const __m256 dxv = _mm256_set1_ps(dx);
    const __m256 d_low = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(steps)));
    const __m256 d_high = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(steps + 8)));
    return {_mm256_fmadd_ps(_mm256_cvtepi32_ps(sum.low), _mm256_mul_ps(d_low, dxv), acc.low),
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum.high), _mm256_mul_ps(d_high, dxv), acc.high)};
  }
  TG_SIMD_INLINE void store(float* out, F acc, int rows) {
    if (rows == kRows) {
      _mm256_storeu_ps(out, acc.low);
      _mm256_storeu_ps(out + 8, acc.high);
      return;
    }
    float all[kRows];
    _mm256_storeu_ps(all, acc.low);
    _mm256_storeu_ps(all + 8, acc.high);
    std::memcpy(out, all, size_t(rows) * sizeof(float));
  }
};

struct Quants32Avx2;
struct GemmLanesAvx2;

struct Avx2 {
  using F = __m256;
  static constexpr int kWidth = 8;

  TG_SIMD_INLINE F zero() { return _mm256_setzero_ps(); }
  TG_SIMD_INLINE F set1(float x) { return _mm256_set1_ps(x); }
  TG_SIMD_INLINE F load(const float* p) { return _mm256_loadu_ps(p); }
  TG_SIMD_INLINE void store(float* p, F x) { _mm256_storeu_ps(p, x); }
  TG_SIMD_INLINE F load_f16(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  TG_SIMD_INLINE void store_f16(uint16_t* p, F x) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
  }
  TG_SIMD_INLINE F load_bf16(const uint16_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  TG_SIMD_INLINE void store_bf16(uint16_t* p, F x) {
    // Round to nearest even; NaNs stay quiet NaNs (as tg::f32_to_bf16).
    const __m256i u = _mm256_castps_si256(x);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    const __m256i is_nan =
        _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
    const __m256i r = _mm256_blendv_epi8(rounded, quiet, is_nan);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed);
  }
  TG_SIMD_INLINE F load_i8(const int8_t* p) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
  }
  TG_SIMD_INLINE float f16_scalar(uint16_t bits) { return _cvtsh_ss(bits); }

  using I = __m256i;
  TG_SIMD_INLINE I load_u8(const uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  TG_SIMD_INLINE I and_i(I a, int32_t mask) { return _mm256_and_si256(a, _mm256_set1_epi32(mask)); }
  TG_SIMD_INLINE I or_i(I a, I b) { return _mm256_or_si256(a, b); }
  TG_SIMD_INLINE I or_masked(I a, I b, int32_t mask) { return or_i(a, and_i(b, mask)); }
  TG_SIMD_INLINE I srl_i(I a, int count) { return _mm256_srli_epi32(a, count); }
  TG_SIMD_INLINE I sll_i(I a, int count) { return _mm256_slli_epi32(a, count); }
  TG_SIMD_INLINE I select_bits(uint32_t bits, int first, int32_t value) {
    const I lanes =
        _mm256_srlv_epi32(_mm256_set1_epi32(int32_t(bits >> first)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return _mm256_and_si256(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_and_si256(lanes, _mm256_set1_epi32(1))),
                            _mm256_set1_epi32(value));
  }
  TG_SIMD_INLINE F to_float(I a) { return _mm256_cvtepi32_ps(a); }
  using Q32 = Quants32Avx2;
  using GL = GemmLanesAvx2;
  using R16 = RowLanes16Avx2;

  TG_SIMD_INLINE F add(F a, F b) { return _mm256_add_ps(a, b); }
  TG_SIMD_INLINE F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  TG_SIMD_INLINE F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  TG_SIMD_INLINE F div(F a, F b) { return _mm256_div_ps(a, b); }
  TG_SIMD_INLINE F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  TG_SIMD_INLINE F fnmadd(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
  TG_SIMD_INLINE F max(F a, F b) { return _mm256_max_ps(a, b); }
  TG_SIMD_INLINE F sqrt(F a) { return _mm256_sqrt_ps(a); }
  TG_SIMD_INLINE F abs(F a) {
    return _mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(a), _mm256_set1_epi32(0x7fffffff)));
  }
  TG_SIMD_INLINE F neg(F a) {
    return _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(a), _mm256_set1_epi32(INT32_MIN)));
  }
  TG_SIMD_INLINE float reduce_add(F a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // out[j] = reduce_add(v[j]) for 8 vectors, bit for bit (the same pairs are added: lanes i and
  // i+4, then i and i+2, then i and i+1), with the rows transposed into lanes as they go.
  TG_SIMD_INLINE void reduce_add_rows(const F v[8], float* out) {
    F w[4], u[2];
    for (int j = 0; j < 4; ++j) {
      w[j] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * j], v[2 * j + 1], 0x20),
                           _mm256_permute2f128_ps(v[2 * j], v[2 * j + 1], 0x31));
    }
    for (int j = 0; j < 2; ++j) {
      u[j] = _mm256_add_ps(_mm256_shuffle_ps(w[2 * j], w[2 * j + 1], 0x44),
                           _mm256_shuffle_ps(w[2 * j], w[2 * j + 1], 0xee));
    }
    // Lane 4c + k now holds row c + 2k.
    const F y = _mm256_add_ps(_mm256_shuffle_ps(u[0], u[1], 0x88), _mm256_shuffle_ps(u[0], u[1], 0xdd));
    _mm256_storeu_ps(out, _mm256_permutevar8x32_ps(y, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  }
  TG_SIMD_INLINE float reduce_max(F a) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
  }
  // [x0, x1, x2, x3, ...] -> [x1, x0, x3, x2, ...], for rotating adjacent pairs.
  TG_SIMD_INLINE F swap_pairs(F a) { return _mm256_permute_ps(a, 0xb1); }
};

// Quants32Portable's interface on 32-byte vectors, used by the AVX-512 table too: Zen 4 splits
// 512-bit work into 256-bit halves anyway (a 512-bit version might pay on Intel's full-width
// units; not tried).
struct Quants32Avx2 {
  static constexpr bool kF16Steps = false;  // Quants32Avx512Vnni::pair_steps
  using B = __m256i;
  using Acc = __m256i;  // 8 int32 partial sums
  using FAcc = __m256;

  TG_SIMD_INLINE B load_u8(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  TG_SIMD_INLINE B load_i8(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  TG_SIMD_INLINE void store_u8(uint8_t* p, B b) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), b); }
  // 16-bit shifts, then the mask drops what crossed in from the neighbouring byte.
  TG_SIMD_INLINE B bits(B a, int shift, int mask) {
    return _mm256_and_si256(_mm256_srli_epi16(a, shift), _mm256_set1_epi8(char(mask)));
  }
  // One 16-bit shift moves the bits into place (what crosses from the neighbouring byte lands
  // outside them, as from + width <= 8), one mask keeps them.
  TG_SIMD_INLINE B bits_to(B a, int from, int width, int to) {
    const __m256i moved = from < to ? _mm256_slli_epi16(a, to - from) : from > to ? _mm256_srli_epi16(a, from - to) : a;
    return _mm256_and_si256(moved, _mm256_set1_epi8(char(((1 << width) - 1) << to)));
  }
  TG_SIMD_INLINE B or_(B a, B b) { return _mm256_or_si256(a, b); }
  TG_SIMD_INLINE B nibbles16(const uint8_t* p) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(bytes, 4), bytes), _mm256_set1_epi8(0xF));
  }
  // Byte i gets byte i / 8 of `bits` (the shuffle works within 128-bit lanes, each of which holds
  // all four), then the compare keeps bit i % 8 of it.
  TG_SIMD_INLINE B bits32(uint32_t bits, int value) {
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(int32_t(bits)),
                                               _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                                                2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(char(value)));
  }
  // Two rows a and b of a 32-element block type in one pair of registers: `low` holds elements
  // 0-15 of a in its low 128-bit lane and of b in its high lane, `high` elements 16-31, which is
  // how q4_0..q5_1 pack them (byte j: elements j and j + 16). A token's quants are then the same
  // in both lanes (XPair), and one maddubs + madd per pair of blocks leaves a's sums in lanes 0-3
  // and b's in lanes 4-7 (PairAcc): half the multiplies, conversions and FMAs of two rows apart.
  struct RowPair {
    __m256i low, high;
  };
  using XPair = RowPair;
  using PairAcc = __m256i;
  using PairFAcc = __m256;
  TG_SIMD_INLINE RowPair nibbles16_pair(const uint8_t* a, const uint8_t* b) {
    const __m256i bytes = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(b), reinterpret_cast<const __m128i*>(a));
    const __m256i mask = _mm256_set1_epi8(0xF);
    return {_mm256_and_si256(bytes, mask), _mm256_and_si256(_mm256_srli_epi16(bytes, 4), mask)};
  }
  // Or `value` into the bytes whose element has its bit set in qh_a / qh_b (bit i: element i).
  // Both words in every 64-bit lane, then as bits32: byte i of `low` gets bit i % 8 of byte i / 8
  // of a's bits 0-15 (bytes 0-15) and b's (bytes 16-31), `high` of their bits 16-31.
  TG_SIMD_INLINE RowPair or_bits32_pair(RowPair q, uint32_t qh_a, uint32_t qh_b, int value) {
    const __m256i both = _mm256_set1_epi64x(int64_t(uint64_t(qh_b) << 32 | qh_a));
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201));
    const auto spread = [&](__m256i order) {
      const __m256i bytes = _mm256_shuffle_epi8(both, order);
      return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit), _mm256_set1_epi8(char(value)));
    };
    return {_mm256_or_si256(q.low, spread(_mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                                           4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5))),
            _mm256_or_si256(q.high, spread(_mm256_setr_epi8(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,  //
                                                            6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7)))};
  }
  TG_SIMD_INLINE XPair x_pair(const int8_t* x) {
    const __m128i* p = reinterpret_cast<const __m128i*>(x);
    return {_mm256_broadcastsi128_si256(_mm_loadu_si128(p)), _mm256_broadcastsi128_si256(_mm_loadu_si128(p + 1))};
  }
  TG_SIMD_INLINE RowPair splat_pair(int value) { return {splat(value), splat(value)}; }
  // Unsigned quants at most 31 against |x| <= 127: each int16 below 4 * 31 * 127 < 2^15.
  TG_SIMD_INLINE PairAcc dot_pair(RowPair q, XPair x) {
    const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(q.low, x.low), _mm256_maddubs_epi16(q.high, x.high));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
  }
  TG_SIMD_INLINE PairAcc dot_pair_add(PairAcc acc, RowPair q, XPair x) { return _mm256_add_epi32(acc, dot_pair(q, x)); }
  TG_SIMD_INLINE PairAcc pair_izero() { return _mm256_setzero_si256(); }
  TG_SIMD_INLINE PairAcc pair_sub(PairAcc a, PairAcc b) { return _mm256_sub_epi32(a, b); }
  // Row a's 4 lanes of the negated centre (Quants32Portable::pair_centre); row b's are the same,
  // so a broadcast load restores the PairAcc.
  using PairCentre = __m128i;
  TG_SIMD_INLINE PairCentre pair_centre(XPair x, int centre) {
    return _mm256_castsi256_si128(pair_sub(pair_izero(), dot_pair(splat_pair(centre), x)));
  }
  TG_SIMD_INLINE PairAcc centre_acc(PairCentre c) { return _mm256_broadcastsi128_si256(c); }
  TG_SIMD_INLINE PairFAcc pair_fzero() { return _mm256_setzero_ps(); }
  // acc + a * (d_a * dx) in a's lanes and a * (d_b * dx) in b's: the steps broadcast from memory
  // into their lanes (loads, not shuffles).
  TG_SIMD_INLINE PairFAcc pair_fmadd(PairAcc a, const float* d_a, const float* d_b, float dx, PairFAcc acc) {
    const __m256 d = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_broadcast_ss(d_a)), _mm_broadcast_ss(d_b), 1);
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(a), _mm256_mul_ps(d, _mm256_set1_ps(dx)), acc);
  }
  // Row a's sum and row b's, each added as reduce() adds a 4-lane half (lanes i and i + 2, then
  // i and i + 1).
  TG_SIMD_INLINE void pair_reduce(PairFAcc acc, float* a, float* b) {
    const __m256 s = _mm256_add_ps(acc, _mm256_permute_ps(acc, 0x4e));
    const __m256 t = _mm256_add_ps(s, _mm256_permute_ps(s, 0xb1));
    *a = _mm256_cvtss_f32(t);
    *b = _mm_cvtss_f32(_mm256_extractf128_ps(t, 1));
  }
  TG_SIMD_INLINE Acc zero() { return _mm256_setzero_si256(); }
  TG_SIMD_INLINE Acc dot(B q, B x) { return _mm256_madd_epi16(_mm256_maddubs_epi16(q, x), _mm256_set1_epi16(1)); }
  // maddubs takes one operand unsigned: |q| against x with q's sign. |q| <= 128 and |x| <= 127,
  // so its pairs stay below 2^15.
  TG_SIMD_INLINE Acc dot_signed(B q, B x) { return dot(_mm256_abs_epi8(q), _mm256_sign_epi8(x, q)); }
  TG_SIMD_INLINE B splat(int value) { return _mm256_set1_epi8(char(value)); }
  TG_SIMD_INLINE Acc sub(Acc a, Acc b) { return _mm256_sub_epi32(a, b); }
  using I16x16 = __m256i;
  // Scales 0-7 and 8-15 in both 128-bit lanes, for one in-lane shuffle per piece.
  struct Scales {
    __m256i low, high;
  };
  TG_SIMD_INLINE Scales scales(I16x16 scale16) {
    return {_mm256_permute2x128_si256(scale16, scale16, 0x00), _mm256_permute2x128_si256(scale16, scale16, 0x11)};
  }
  // maddubs: unsigned q times signed x, adjacent pairs summed to int16 (at most 2 * 63 * 127, no
  // saturation); madd by the scales: pairs of those summed to int32. Lanes 0-3 cover elements
  // 0-15 (scale 2p), lanes 4-7 elements 16-31 (scale 2p + 1). p is a constant once unrolled.
  TG_SIMD_INLINE Acc dot_add(Acc acc, B q, B x, const Scales& s, int p) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(q, x), piece_scales(s, p)));
  }
  // Scale 2p in the int16 lanes of elements 0-15 of piece p, scale 2p + 1 in those of 16-31.
  TG_SIMD_INLINE __m256i piece_scales(const Scales& s, int p) {
    const char g = char(4 * (p % 4));  // byte offset of scale 2p within its 128-bit lane
    const __m256i spread =
        _mm256_setr_epi8(g, char(g + 1), g, char(g + 1), g, char(g + 1), g, char(g + 1), g, char(g + 1), g, char(g + 1),
                         g, char(g + 1), g, char(g + 1), char(g + 2), char(g + 3), char(g + 2), char(g + 3),
                         char(g + 2), char(g + 3), char(g + 2), char(g + 3), char(g + 2), char(g + 3), char(g + 2),
                         char(g + 3), char(g + 2), char(g + 3), char(g + 2), char(g + 3));
    return _mm256_shuffle_epi8(p < 4 ? s.low : s.high, spread);
  }
  TG_SIMD_INLINE Acc dot_i16(I16x16 a, const int16_t* b) {
    return _mm256_madd_epi16(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
  }
  TG_SIMD_INLINE FAcc fzero() { return _mm256_setzero_ps(); }
  TG_SIMD_INLINE FAcc fmadd(Acc a, float scale, FAcc acc) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(a), _mm256_set1_ps(scale), acc);
  }
  TG_SIMD_INLINE float reduce(FAcc a) { return Avx2::reduce_add(a); }
  TG_SIMD_INLINE I16x16 widen_pairs(const uint8_t* p) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(bytes, bytes));
  }
  TG_SIMD_INLINE I16x16 widen_i8(const int8_t* p) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  struct ScalesMinsK {
    Scales scales;
    I16x16 mins;
  };
  // unpack_scales_mins_k in byte lanes (its scalar form took a fifth of a q4_K block's dot
  // product), then each scale and min widened to both of its 16-element halves. Reads 16 bytes
  // from `packed`: the 12 of the scales and 4 of the block's next field.
  TG_SIMD_INLINE ScalesMinsK scales_mins_k(const uint8_t* packed) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed));
    // Bytes 0-3: scales 0-3 (low 6 bits of bytes 0-3); 4-7: scales 4-7 (low nibbles of bytes 8-11,
    // top 2 bits of bytes 0-3); 8-11: mins 0-3 (bytes 4-7); 12-15: mins 4-7 (high nibbles of bytes
    // 8-11, top 2 bits of bytes 4-7).
    const __m128i low = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    const __m128i top = _mm_shuffle_epi8(v, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    const __m128i sc_m =
        _mm_or_si128(_mm_or_si128(_mm_and_si128(low, _mm_setr_epi32(0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0)),
                                  _mm_and_si128(_mm_srli_epi16(low, 4), _mm_setr_epi32(0, 0, 0, 0x0F0F0F0F))),
                     _mm_and_si128(_mm_srli_epi16(top, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030)));
    const auto widen = [&](__m128i order) { return _mm256_cvtepu8_epi16(_mm_shuffle_epi8(sc_m, order)); };
    return {{widen(_mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3)),
             widen(_mm_setr_epi8(4, 4, 5, 5, 6, 6, 7, 7, 4, 4, 5, 5, 6, 6, 7, 7))},
            widen(_mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15))};
  }
  TG_SIMD_INLINE void quantize(const float* x, float d, int8_t* q) {
    __m256i v[4];
    for (int i = 0; i < 4; ++i) {
      // Converted under the default rounding mode, nearest-even, as nearbyint.
      const __m256i r = _mm256_cvtps_epi32(_mm256_div_ps(_mm256_loadu_ps(x + 8 * i), _mm256_set1_ps(d)));
      v[i] = _mm256_max_epi32(_mm256_min_epi32(r, _mm256_set1_epi32(127)), _mm256_set1_epi32(-127));
    }
    // The packs work within 128-bit lanes: dwords 0-3 of v0, v1, v2, v3, then 4-7 of each.
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
    const __m256i in_order = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), in_order);
  }
};

// GemmLanesPortable's interface on 256-bit registers (8 weight rows).
// The 8 x 8 transpose of 32-bit words r[0..7] (8 words each, in every 256-bit half of them),
// but for its last step: afterwards r[j] and r[4 + j] hold, in their low 128-bit lanes,
// columns j of rows 0-3 and 4-7, and in their high ones columns j + 4. A macro over the ISA's
// unpack intrinsics (TYPE __m256i and PREFIX _mm256, or __m512i and _mm512), since a function
// shared by two target regions could not inline the wider one's intrinsics.
#define TG_TRANSPOSE_8X8_IN_LANES(r, TYPE, PREFIX)                             \
  do {                                                                         \
    TYPE t_[8];                                                                \
    for (int i_ = 0; i_ < 4; ++i_) {                                           \
      t_[2 * i_] = PREFIX##_unpacklo_epi32(r[2 * i_], r[2 * i_ + 1]);          \
      t_[2 * i_ + 1] = PREFIX##_unpackhi_epi32(r[2 * i_], r[2 * i_ + 1]);      \
    }                                                                          \
    for (int h_ = 0; h_ < 2; ++h_) {                                           \
      r[4 * h_ + 0] = PREFIX##_unpacklo_epi64(t_[4 * h_ + 0], t_[4 * h_ + 2]); \
      r[4 * h_ + 1] = PREFIX##_unpackhi_epi64(t_[4 * h_ + 0], t_[4 * h_ + 2]); \
      r[4 * h_ + 2] = PREFIX##_unpacklo_epi64(t_[4 * h_ + 1], t_[4 * h_ + 3]); \
      r[4 * h_ + 3] = PREFIX##_unpackhi_epi64(t_[4 * h_ + 1], t_[4 * h_ + 3]); \
    }                                                                          \
  } while (false)

struct GemmLanesAvx2 {
  static constexpr int kLanes = 8;
  static constexpr int kTileTokens = 4;
  static constexpr bool kDpbusd = false;
  using W = __m256i;
  using I = __m256i;
  using F = __m256;
  // GemmLanesPortable::interleave_quads: an 8 x 8 transpose of 32-bit words.
  TG_SIMD_INLINE void interleave_quads(const uint8_t* rows, uint8_t* quads) {
    __m256i r[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + 32 * i));
    TG_TRANSPOSE_8X8_IN_LANES(r, __m256i, _mm256);
    auto* out = reinterpret_cast<__m256i*>(quads);
    for (int j = 0; j < 4; ++j) {
      _mm256_storeu_si256(out + j, _mm256_permute2x128_si256(r[j], r[4 + j], 0x20));
      _mm256_storeu_si256(out + 4 + j, _mm256_permute2x128_si256(r[j], r[4 + j], 0x31));
    }
  }
  TG_SIMD_INLINE W load_w(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  TG_SIMD_INLINE I izero() { return _mm256_setzero_si256(); }
  TG_SIMD_INLINE I load_i(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  TG_SIMD_INLINE I ones() { return _mm256_set1_epi16(1); }
  // x[0..3] in every lane.
  TG_SIMD_INLINE I broadcast4(const int8_t* x) {
    int32_t x4;
    std::memcpy(&x4, x, sizeof x4);
    return _mm256_set1_epi32(x4);
  }
  TG_SIMD_INLINE I dot4_add(I acc, W w, const int8_t* x, I scales) {
    const I pairs = _mm256_maddubs_epi16(w, broadcast4(x));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, scales));
  }
  static constexpr bool kInt16Pairs = true;
  using P = __m256i;
  TG_SIMD_INLINE P dot4_pairs(W w, const int8_t* x) { return _mm256_maddubs_epi16(w, broadcast4(x)); }
  TG_SIMD_INLINE P add_pairs(P a, P b) { return _mm256_add_epi16(a, b); }
  TG_SIMD_INLINE I scale_pairs_add(I acc, P pairs, I scales) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, scales));
  }
  // |w| (at most 128, so maddubs's pairs stay below 2^15) and w for the sign.
  struct SignedW {
    W magnitude, sign;
  };
  TG_SIMD_INLINE SignedW split_sign(W w) { return {_mm256_abs_epi8(w), w}; }
  TG_SIMD_INLINE I dot4_signed_add(I acc, const SignedW& w, const int8_t* x) {
    const I pairs = _mm256_maddubs_epi16(w.magnitude, _mm256_sign_epi8(broadcast4(x), w.sign));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones()));
  }
  TG_SIMD_INLINE F fzero() { return _mm256_setzero_ps(); }
  TG_SIMD_INLINE F load_f(const float* p) { return _mm256_loadu_ps(p); }
  TG_SIMD_INLINE F fmadd(F w, float x, F acc) { return _mm256_fmadd_ps(w, _mm256_set1_ps(x), acc); }
  TG_SIMD_INLINE F fold(F acc, I sum, F d, float dx) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(d, _mm256_set1_ps(dx)), acc);
  }
  TG_SIMD_INLINE void store(float* p, F a, bool accumulate) {
    _mm256_storeu_ps(p, accumulate ? _mm256_add_ps(_mm256_loadu_ps(p), a) : a);
  }
};

TG_END_TARGET

TG_BEGIN_TARGET(TG_TARGET_AVX512)

// GemmLanesPortable's interface on 512-bit registers (16 weight rows).
struct GemmLanesAvx512 {
  static constexpr int kLanes = 16;
  static constexpr int kTileTokens = 12;
  static constexpr bool kDpbusd = false;
  // GemmLanesPortable::interleave_quads: rows r and r + 8 in the halves of one register, then
  // GemmLanesAvx2's transpose in both halves at once.
  TG_SIMD_INLINE void interleave_quads(const uint8_t* rows, uint8_t* quads) {
    __m512i r[8];
    for (int i = 0; i < 8; ++i) {
      const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + 32 * i));
      const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + 32 * (i + 8)));
      r[i] = _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
    }
    TG_TRANSPOSE_8X8_IN_LANES(r, __m512i, _mm512);
    // In each 256-bit half: the low 128-bit lanes of r[j] and r[4 + j] (column j), then the high
    // ones (column j + 4).
    const __m512i low_lanes = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const __m512i high_lanes = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    auto* out = reinterpret_cast<__m512i*>(quads);
    for (int j = 0; j < 4; ++j) {
      _mm512_storeu_si512(out + j, _mm512_permutex2var_epi64(r[j], low_lanes, r[4 + j]));
      _mm512_storeu_si512(out + 4 + j, _mm512_permutex2var_epi64(r[j], high_lanes, r[4 + j]));
    }
  }
  // No int16 pair sums (GemmLanesAvx2::kInt16Pairs) here yet: not measured or tested on an AVX-512 CPU.
  static constexpr bool kInt16Pairs = false;
  using W = __m512i;
  using I = __m512i;
  using F = __m512;
  TG_SIMD_INLINE W load_w(const uint8_t* p) { return _mm512_loadu_si512(reinterpret_cast<const __m512i*>(p)); }
  TG_SIMD_INLINE I izero() { return _mm512_setzero_si512(); }
  TG_SIMD_INLINE I load_i(const int32_t* p) { return _mm512_loadu_si512(reinterpret_cast<const __m512i*>(p)); }
  TG_SIMD_INLINE I ones() { return _mm512_set1_epi16(1); }
  // x[0..3] in every lane.
  TG_SIMD_INLINE I broadcast4(const int8_t* x) {
    int32_t x4;
    std::memcpy(&x4, x, sizeof x4);
    return _mm512_set1_epi32(x4);
  }
  TG_SIMD_INLINE I dot4_add(I acc, W w, const int8_t* x, I scales) {
    const I pairs = _mm512_maddubs_epi16(w, broadcast4(x));
    return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, scales));
  }
  // |w| and w's negative bytes as a mask (there is no 512-bit vpsignb).
  struct SignedW {
    W magnitude;
    __mmask64 negative;
  };
  TG_SIMD_INLINE SignedW split_sign(W w) { return {_mm512_abs_epi8(w), _mm512_movepi8_mask(w)}; }
  TG_SIMD_INLINE I dot4_signed_add(I acc, const SignedW& w, const int8_t* x) {
    const __m512i broadcast = broadcast4(x);
    const __m512i signed_x = _mm512_mask_sub_epi8(broadcast, w.negative, _mm512_setzero_si512(), broadcast);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(w.magnitude, signed_x), ones()));
  }
  TG_SIMD_INLINE F fzero() { return _mm512_setzero_ps(); }
  TG_SIMD_INLINE F load_f(const float* p) { return _mm512_loadu_ps(p); }
  TG_SIMD_INLINE F fmadd(F w, float x, F acc) { return _mm512_fmadd_ps(w, _mm512_set1_ps(x), acc); }
  TG_SIMD_INLINE F fold(F acc, I sum, F d, float dx) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(d, _mm512_set1_ps(dx)), acc);
  }
  TG_SIMD_INLINE void store(float* p, F a, bool accumulate) {
    _mm512_storeu_ps(p, accumulate ? _mm512_add_ps(_mm512_loadu_ps(p), a) : a);
  }
};

struct Avx512 {
  using F = __m512;
  static constexpr int kWidth = 16;

  TG_SIMD_INLINE F zero() { return _mm512_setzero_ps(); }
  TG_SIMD_INLINE F set1(float x) { return _mm512_set1_ps(x); }
  TG_SIMD_INLINE F load(const float* p) { return _mm512_loadu_ps(p); }
  TG_SIMD_INLINE void store(float* p, F x) { _mm512_storeu_ps(p, x); }
  TG_SIMD_INLINE F load_f16(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  TG_SIMD_INLINE void store_f16(uint16_t* p, F x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
  }
  TG_SIMD_INLINE F load_bf16(const uint16_t* p) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
  TG_SIMD_INLINE void store_bf16(uint16_t* p, F x) {
    const __m512i u = _mm512_castps_si512(x);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i rounded =
        _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
    const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
    const __mmask16 is_nan =
        _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    const __m512i r = _mm512_mask_blend_epi32(is_nan, rounded, quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(r));
  }
  TG_SIMD_INLINE F load_i8(const int8_t* p) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
  }
  TG_SIMD_INLINE float f16_scalar(uint16_t bits) { return _cvtsh_ss(bits); }

  using I = __m512i;
  TG_SIMD_INLINE I load_u8(const uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  TG_SIMD_INLINE I and_i(I a, int32_t mask) { return _mm512_and_si512(a, _mm512_set1_epi32(mask)); }
  TG_SIMD_INLINE I or_i(I a, I b) { return _mm512_or_si512(a, b); }
  // One ternary-logic instruction: 0xF8 is A | (B & C).
  TG_SIMD_INLINE I or_masked(I a, I b, int32_t mask) {
    return _mm512_ternarylogic_epi32(a, b, _mm512_set1_epi32(mask), 0xF8);
  }
  TG_SIMD_INLINE I srl_i(I a, int count) { return _mm512_srli_epi32(a, unsigned(count)); }
  TG_SIMD_INLINE I sll_i(I a, int count) { return _mm512_slli_epi32(a, unsigned(count)); }
  // The 16 bits are a lane mask as they are.
  TG_SIMD_INLINE I select_bits(uint32_t bits, int first, int32_t value) {
    return _mm512_maskz_mov_epi32(__mmask16(bits >> first), _mm512_set1_epi32(value));
  }
  TG_SIMD_INLINE F to_float(I a) { return _mm512_cvtepi32_ps(a); }
  using Q32 = Quants32Avx2;
  using GL = GemmLanesAvx512;
  using R16 = RowLanes16Avx2;
  // Lanes 0-7 `low`, lanes 8-15 `high`.
  TG_SIMD_INLINE F halves(float low, float high) {
    return _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(low), _mm512_set1_ps(high));
  }

  TG_SIMD_INLINE F add(F a, F b) { return _mm512_add_ps(a, b); }
  TG_SIMD_INLINE F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  TG_SIMD_INLINE F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  TG_SIMD_INLINE F div(F a, F b) { return _mm512_div_ps(a, b); }
  TG_SIMD_INLINE F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  TG_SIMD_INLINE F fnmadd(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  TG_SIMD_INLINE F max(F a, F b) { return _mm512_max_ps(a, b); }
  TG_SIMD_INLINE F sqrt(F a) { return _mm512_sqrt_ps(a); }
  TG_SIMD_INLINE F abs(F a) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff)));
  }
  TG_SIMD_INLINE F neg(F a) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
  }
  TG_SIMD_INLINE float reduce_add(F a) {
    const __m256 half =
        _mm256_add_ps(_mm512_castps512_ps256(a), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
    return Avx2::reduce_add(half);
  }
  // out[j] = reduce_add(v[j]) for 16 vectors, bit for bit (the same pairs are added: lanes i and
  // i+8, i+4, i+2, then i+1), with the rows transposed into lanes as they go.
  TG_SIMD_INLINE void reduce_add_rows(const F v[16], float* out) {
    F w[8], u[4], x[2];
    for (int j = 0; j < 8; ++j) {
      w[j] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * j], v[2 * j + 1], 0x44),
                           _mm512_shuffle_f32x4(v[2 * j], v[2 * j + 1], 0xee));
    }
    for (int j = 0; j < 4; ++j) {
      u[j] = _mm512_add_ps(_mm512_shuffle_f32x4(w[2 * j], w[2 * j + 1], 0x88),
                           _mm512_shuffle_f32x4(w[2 * j], w[2 * j + 1], 0xdd));
    }
    for (int j = 0; j < 2; ++j) {
      x[j] = _mm512_add_ps(_mm512_shuffle_ps(u[2 * j], u[2 * j + 1], 0x44),
                           _mm512_shuffle_ps(u[2 * j], u[2 * j + 1], 0xee));
    }
    // Lane 4c + k now holds row c + 4k.
    const F y = _mm512_add_ps(_mm512_shuffle_ps(x[0], x[1], 0x88), _mm512_shuffle_ps(x[0], x[1], 0xdd));
    const __m512i rows_in_order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    _mm512_storeu_ps(out, _mm512_permutexvar_ps(rows_in_order, y));
  }
  TG_SIMD_INLINE float reduce_max(F a) {
    const __m256 half =
        _mm256_max_ps(_mm512_castps512_ps256(a), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
    return Avx2::reduce_max(half);
  }
  TG_SIMD_INLINE F swap_pairs(F a) { return _mm512_permute_ps(a, 0xb1); }
};

TG_END_TARGET

TG_BEGIN_TARGET(TG_TARGET_AVX512_VNNI)

// GemmLanesAvx512 with AVX512-VNNI's vpdpbusd: 4 products summed into int32 in one instruction
// (where maddubs and madd take two), without a scale, so the K types' scales multiply each 16
// elements' sum instead (scale_add). With a third set of int32 sums for that, 8 tokens fill the
// registers.
struct GemmLanesAvx512Vnni : GemmLanesAvx512 {
  static constexpr int kTileTokens = 8;
  static constexpr bool kDpbusd = true;
  // No int16 pair sums (GemmLanesAvx2::kInt16Pairs) here yet: not measured or tested on an AVX-512 CPU.
  static constexpr bool kInt16Pairs = false;
  TG_SIMD_INLINE I dot4(I acc, W w, const int8_t* x) { return _mm512_dpbusd_epi32(acc, w, broadcast4(x)); }
  // sum + part * scale, the scale word's high half (both halves hold the int16 scale).
  TG_SIMD_INLINE I scale_add(I sum, I part, I scale_word) {
    return _mm512_add_epi32(sum, _mm512_mullo_epi32(part, _mm512_srai_epi32(scale_word, 16)));
  }
  // q8_0's signed weights as the unsigned bytes dpbusd takes: w + 128; the tile subtracts 128
  // times the activations' sum afterwards (sub).
  TG_SIMD_INLINE W flip_sign(W w) { return _mm512_xor_si512(w, _mm512_set1_epi8(char(0x80))); }
  TG_SIMD_INLINE I sub(I sum, int32_t x) { return _mm512_sub_epi32(sum, _mm512_set1_epi32(x)); }
};

// Quants32Avx2 with AVX512-VNNI (256-bit EVEX forms, AVX512VL) for the matrix-vector kernels:
// vpdpbusd sums 4 products of unsigned q and signed x into each int32 lane in one instruction,
// where maddubs + madd take two, and vpdpwssd does the K types' madd by the scales and the add in
// one. Every int32 lane gets the sum of the same elements as in Quants32Avx2 (elements 4l .. 4l +
// 3 of each 16, exact either way), so the f32 folds, and every result, are bit for bit the AVX2
// kernels'. q5_0's and q5_1's fifth bits go in through mask registers (AVX512BW) rather than a
// shuffle and a compare.
struct Quants32Avx512Vnni : Quants32Avx2 {
  TG_SIMD_INLINE Acc dot(B q, B x) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), q, x); }
  TG_SIMD_INLINE Acc dot_signed(B q, B x) { return dot(_mm256_abs_epi8(q), _mm256_sign_epi8(x, q)); }
  TG_SIMD_INLINE PairAcc dot_pair_add(PairAcc acc, RowPair q, XPair x) {
    return _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(acc, q.low, x.low), q.high, x.high);
  }
  TG_SIMD_INLINE PairAcc dot_pair(RowPair q, XPair x) { return dot_pair_add(_mm256_setzero_si256(), q, x); }
  // The bits of `value` are clear in q's bytes (4-bit quants, value 16), so adding it is or-ing it.
  TG_SIMD_INLINE RowPair or_bits32_pair(RowPair q, uint32_t qh_a, uint32_t qh_b, int value) {
    const __mmask32 low = __mmask32((qh_a & 0xFFFFu) | qh_b << 16), high = __mmask32(qh_a >> 16 | (qh_b & 0xFFFF0000u));
    const __m256i v = _mm256_set1_epi8(char(value));
    return {_mm256_mask_add_epi8(q.low, low, q.low, v), _mm256_mask_add_epi8(q.high, high, q.high, v)};
  }
  TG_SIMD_INLINE Acc dot_add(Acc acc, B q, B x, const Scales& s, int p) {
    return _mm256_dpwssd_epi32(acc, _mm256_maddubs_epi16(q, x), piece_scales(s, p));
  }
  // The steps of both rows' blocks (kF16Steps), and q4_1's and q5_1's m: the f16 fields that
  // start each block (d, then m; for q4_0 and q5_0 two quant bytes, whose lanes go unused),
  // converted by one vcvtph2ps (exactly, as the f16 table) and spread to the rows' lanes: d
  // [d_a x4, d_b x4] for pair_fmadd's fold, m [m_a x4, m_b x4] for the offsets, which each lane
  // then sums as the other tables' scalar fmaf does. From L2 on one Sapphire Rapids core, q4_1
  // went from ~18 to ~27 GB/s, q5_1 from ~19 to ~24, q4_0 and q5_0 ~1-2 GB/s faster, than with the
  // table's loads, inserts and the offsets' scalar FMAs.
  static constexpr bool kF16Steps = true;
  struct PairSteps {
    __m256 d, m;
  };
  TG_SIMD_INLINE PairSteps pair_steps(const void* a, const void* b) {
    int32_t da_ma, db_mb;
    std::memcpy(&da_ma, a, sizeof da_ma);
    std::memcpy(&db_mb, b, sizeof db_mb);
    const __m256 f = _mm256_castps128_ps256(_mm_cvtph_ps(_mm_insert_epi32(_mm_cvtsi32_si128(da_ma), db_mb, 1)));
    return {_mm256_permutexvar_ps(_mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2), f),
            _mm256_permutexvar_ps(_mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3), f)};
  }
  TG_SIMD_INLINE PairFAcc pair_fmadd_steps(PairAcc a, __m256 d, float dx, PairFAcc acc) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(a), _mm256_mul_ps(d, _mm256_set1_ps(dx)), acc);
  }
  TG_SIMD_INLINE PairFAcc pair_fmadd_offsets(__m256 m, float s, PairFAcc acc) {
    return _mm256_fmadd_ps(m, _mm256_set1_ps(s), acc);
  }
  // Lane 0 (row a) and lane 4 (row b).
  TG_SIMD_INLINE void pair_lanes(PairFAcc acc, float* a, float* b) {
    *a = _mm256_cvtss_f32(acc);
    *b = _mm_cvtss_f32(_mm256_extractf128_ps(acc, 1));
  }
};

// RowLanes16Portable's interface in one register with AVX512-VNNI: each vpdpbusd adds 4 products
// of every row at once against a broadcast of 4 of the token's quants. In a throwaway driver on
// one Zen 4 core, q4_0's loop read ~65 GB/s from L2 and kept up with a plain read from DRAM.
struct RowLanes16Avx512Vnni {
  static constexpr int kRows = 16;
  using I = __m512i;
  using F = __m512;
  TG_SIMD_INLINE __m512i quad(const int8_t* x) {
    int32_t q;
    std::memcpy(&q, x, sizeof q);
    return _mm512_set1_epi32(q);
  }
  TG_SIMD_INLINE F fzero() { return _mm512_setzero_ps(); }
  template <bool kFifth>
  TG_SIMD_INLINE I sum_nibbles(const uint8_t* chunks, const uint8_t* fifth, const int8_t* x, int32_t centre) {
    const __m512i mask = _mm512_set1_epi8(0x0F), bit4 = _mm512_set1_epi8(0x10);
    const __m512i bits = kFifth ? _mm512_loadu_si512(fifth) : _mm512_setzero_si512();
    __m512i low_sum = _mm512_set1_epi32(-centre), high_sum = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) {
      const __m512i v = _mm512_loadu_si512(chunks + 64 * c);
      __m512i low = _mm512_and_si512(v, mask), high = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
      if constexpr (kFifth) {
        // low | (shifted & 0x10) in one instruction each.
        low = _mm512_ternarylogic_epi32(low, bit_to_4(bits, c), bit4, 0xF8);
        high = _mm512_ternarylogic_epi32(high, bit_to_4(bits, 4 + c), bit4, 0xF8);
      }
      low_sum = _mm512_dpbusd_epi32(low_sum, low, quad(x + 4 * c));
      high_sum = _mm512_dpbusd_epi32(high_sum, high, quad(x + 16 + 4 * c));
    }
    return _mm512_add_epi32(low_sum, high_sum);
  }
  TG_SIMD_INLINE F fmadd_offsets(const uint16_t* m, float s, F acc) {
    return _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(m))), _mm512_set1_ps(s),
                           acc);
  }
  TG_SIMD_INLINE I sum_q8_0(const uint8_t* chunks, const int8_t* x, int32_t x_sum) {
    __m512i even = _mm512_set1_epi32(-128 * x_sum), odd = _mm512_setzero_si512();
    for (int c = 0; c < 8; c += 2) {
      even = _mm512_dpbusd_epi32(even, _mm512_loadu_si512(chunks + 64 * c), quad(x + 4 * c));
      odd = _mm512_dpbusd_epi32(odd, _mm512_loadu_si512(chunks + 64 * (c + 1)), quad(x + 4 * (c + 1)));
    }
    return _mm512_add_epi32(even, odd);
  }
  // v's bit `bit` of each byte at bit 4 (as RowLanes16Avx2::bit_to_4).
  TG_SIMD_INLINE __m512i bit_to_4(__m512i v, int bit) {
    return bit < 4 ? _mm512_slli_epi16(v, unsigned(4 - bit)) : bit > 4 ? _mm512_srli_epi16(v, unsigned(bit - 4)) : v;
  }
  template <bool kFifth>
  TG_SIMD_INLINE F fold_affine_k(const uint8_t* block, const int8_t* x, const int32_t* sub_sums, float dx, F acc) {
    using L = InterleavedAffineK<kFifth>;
    const __m512i mask = _mm512_set1_epi8(0x0F), bit4 = _mm512_set1_epi8(0x10);
    __m512i sum = _mm512_setzero_si512(), mins = _mm512_setzero_si512();
    for (int p = 0; p < 4; ++p) {
      __m512i low = _mm512_setzero_si512(), high = _mm512_setzero_si512();
      for (int c = 0; c < 8; ++c) {
        const __m512i v = _mm512_loadu_si512(block + L::kChunks + 64 * (8 * p + c));
        __m512i ql = _mm512_and_si512(v, mask), qh = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
        if constexpr (kFifth) {
          const __m512i bits = _mm512_loadu_si512(block + L::kFifthBits + 64 * c);
          ql = _mm512_ternarylogic_epi32(ql, bit_to_4(bits, 2 * p), bit4, 0xF8);  // ql | (.. & 0x10)
          qh = _mm512_ternarylogic_epi32(qh, bit_to_4(bits, 2 * p + 1), bit4, 0xF8);
        }
        low = _mm512_dpbusd_epi32(low, ql, quad(x + 64 * p + 4 * c));
        high = _mm512_dpbusd_epi32(high, qh, quad(x + 64 * p + 32 + 4 * c));
      }
      const auto scales = [&](int s) {
        return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + L::kScales + 16 * s)));
      };
      sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(low, scales(2 * p)));
      sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(high, scales(2 * p + 1)));
      const __m512i m =
          _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + L::kMins + 32 * p)));
      mins = _mm512_dpwssd_epi32(mins, m, _mm512_set1_epi32(sub_sums[p]));
    }
    const __m512 dxv = _mm512_set1_ps(dx);
    const auto steps = [&](size_t at) {
      return _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + at))), dxv);
    };
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), steps(L::kD), acc);
    return _mm512_fnmadd_ps(_mm512_cvtepi32_ps(mins), steps(L::kDmin), acc);
  }
  TG_SIMD_INLINE F fold_q6_K(const uint8_t* block, const int8_t* x, const int32_t* sub_sums, float dx, F acc) {
    using L = InterleavedQ6K;
    const __m512i low4 = _mm512_set1_epi8(0x0F), bits45 = _mm512_set1_epi8(0x30);
    const auto chunk = [&](size_t at) { return _mm512_loadu_si512(block + at); };
    // (x & 0x0F) | (y & 0x30) in one instruction: x's low nibble, y's bits 4-5.
    const auto merge = [&](__m512i x_low, __m512i y) { return _mm512_ternarylogic_epi32(x_low, y, bits45, 0xF8); };
    const auto scale_pair = [&](int p) {
      return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + L::kScales + 32 * p)));
    };
    __m512i sum = _mm512_setzero_si512(), centre = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 2; ++k) {
        __m512i part[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                           _mm512_setzero_si512()};
        for (int c = 4 * k; c < 4 * k + 4; ++c) {
          const size_t triplet = L::kTriplets + L::kTripletBytes * (8 * h + c);
          const __m512i a = chunk(triplet), b = chunk(triplet + 64), v = chunk(triplet + 128);
          const __m512i q[4] = {merge(_mm512_and_si512(a, low4), _mm512_slli_epi16(v, 4)),
                                merge(_mm512_and_si512(b, low4), _mm512_slli_epi16(v, 2)),
                                merge(_mm512_and_si512(_mm512_srli_epi16(a, 4), low4), v),
                                merge(_mm512_and_si512(_mm512_srli_epi16(b, 4), low4), _mm512_srli_epi16(v, 2))};
          for (int g = 0; g < 4; ++g) part[g] = _mm512_dpbusd_epi32(part[g], q[g], quad(x + 128 * h + 32 * g + 4 * c));
        }
        for (int g = 0; g < 4; ++g) {
          const __m512i sc = scale_pair(4 * h + g);
          const __m512i scale = k ? _mm512_srai_epi32(sc, 16) : _mm512_srai_epi32(_mm512_slli_epi32(sc, 16), 16);
          sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(part[g], scale));
        }
      }
    }
    for (int p = 0; p < 8; ++p) centre = _mm512_dpwssd_epi32(centre, scale_pair(p), _mm512_set1_epi32(sub_sums[p]));
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + L::kD)));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(sum, _mm512_slli_epi32(centre, 5))),
                           _mm512_mul_ps(d, _mm512_set1_ps(dx)), acc);
  }
  TG_SIMD_INLINE F fmadd_steps(I sum, const uint16_t* steps, float dx, F acc) {
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(steps)));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(d, _mm512_set1_ps(dx)), acc);
  }
  TG_SIMD_INLINE void store(float* out, F acc, int rows) {
    _mm512_mask_storeu_ps(out, __mmask16((1u << rows) - 1), acc);
  }
};

// The AVX-512 traits with the VNNI matrix-vector kernels (vec_avx512_vnni.cpp).
struct Avx512Vnni : Avx512 {
  using Q32 = Quants32Avx512Vnni;
  using GL = GemmLanesAvx512Vnni;
  using R16 = RowLanes16Avx512Vnni;
};

TG_END_TARGET

}  // namespace tg::cpu::simd
