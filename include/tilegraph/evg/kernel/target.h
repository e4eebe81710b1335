#pragma once
// The instruction set the including code is compiled for, as an inline namespace.
//
// The CPU library compiles the same header-only GEMM in several translation units with different
// ISA flags (src/cpu/gemm_{scalar,avx2,avx512,avx512_bf16,amx}.cpp). An inline function or a template that does
// not depend on the ISA would then be defined several times with different machine code, and the
// linker would keep any one of them: an AVX-512 copy could end up called on a CPU without
// AVX-512. Every definition with code in evg/kernel and evg/host therefore lives in
// `inline namespace TG_EVG_TARGET_NAMESPACE`, which gives each ISA its own symbols while the
// source keeps writing tg::evg::... Data-only types shared across ISAs (block.h, operand.h) stay
// outside it.
//
// A JIT kernel compiled under `#pragma GCC target(...)` names its ISA by defining
// TG_EVG_JIT_TARGET_AVX512 (and TG_EVG_JIT_TARGET_BF16_DOT with avx512bf16) or
// TG_EVG_JIT_TARGET_AVX2 first: GCC's C++ front end does not define __AVX512F__ and the like for
// a target pragma.
#if defined(TG_EVG_JIT_TARGET_AVX512) || (defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
                                          defined(__AVX2__) && defined(__FMA__) && defined(__F16C__))
#define TG_EVG_TARGET_AVX512 1
#if defined(__AVX512BF16__) || defined(TG_EVG_JIT_TARGET_BF16_DOT)
// AVX512_BF16's vdpbf16ps: the BlockMmad multiplies bf16 by bf16 as pairs (block_mmad.h).
#define TG_EVG_TARGET_BF16_DOT 1
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
// AMX-BF16's tiles: bf16 activations against bf16 weights on tdpbf16ps (host/amx_bf16_tiles.h).
#define TG_EVG_TARGET_AMX 1
#define TG_EVG_TARGET_NAMESPACE target_amx
#else
#define TG_EVG_TARGET_NAMESPACE target_avx512_bf16
#endif
#else
#define TG_EVG_TARGET_NAMESPACE target_avx512
#endif
#elif defined(TG_EVG_JIT_TARGET_AVX2) || (defined(__AVX2__) && defined(__FMA__) && defined(__F16C__))
#define TG_EVG_TARGET_AVX2 1
#define TG_EVG_TARGET_NAMESPACE target_avx2
#else
#define TG_EVG_TARGET_PORTABLE 1
#define TG_EVG_TARGET_NAMESPACE target_portable
#endif
