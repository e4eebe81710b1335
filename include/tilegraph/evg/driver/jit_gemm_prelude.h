#pragma once
// jit_prelude.h plus the standard and intrinsic headers the CPU GEMM uses, included by generated
// fused GEMM kernels before they switch on the target's ISA.
#include <cstdlib>
#include <thread>

// GCC 12's AVX-512 intrinsics trip -W(maybe-)uninitialized once inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "tilegraph/evg/driver/gemm_params.h"
#include "tilegraph/evg/driver/jit_prelude.h"
