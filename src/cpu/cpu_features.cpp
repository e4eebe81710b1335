#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tilegraph/cpu/cpu_backend.h"

namespace tg::cpu {

namespace {

struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegs r;
  if (__get_cpuid_max(0, nullptr) < leaf) return r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

bool bit(uint32_t value, int index) { return (value >> index) & 1u; }

// XCR0: which register state the OS saves on context switches. An instruction set is usable only
// if the CPU has it *and* the OS manages its registers.
uint64_t read_xcr0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

// Linux (5.16 and later) enables AMX's 8 KiB of tile data per process only on request: until
// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) succeeds, the first tile instruction
// kills the process with SIGILL, whatever XCR0 says. Asked once, for the whole process.
bool os_grants_tile_data() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

CpuFeatures detect() {
  CpuFeatures f;
  const CpuidRegs leaf0 = cpuid(0, 0);
  char vendor[12];
  std::memcpy(vendor, &leaf0.ebx, 4);
  std::memcpy(vendor + 4, &leaf0.edx, 4);
  std::memcpy(vendor + 8, &leaf0.ecx, 4);
  const std::string_view vendor_id(vendor, sizeof vendor);
  f.vendor = vendor_id == "GenuineIntel"   ? CpuVendor::INTEL
             : vendor_id == "AuthenticAMD" ? CpuVendor::AMD
                                           : CpuVendor::OTHER;
  const CpuidRegs leaf1 = cpuid(1, 0);
  const int base_family = int((leaf1.eax >> 8) & 0xf);
  f.family = base_family == 0xf ? base_family + int((leaf1.eax >> 20) & 0xff) : base_family;
  const CpuidRegs leaf7 = cpuid(7, 0);
  const CpuidRegs leaf7_1 = cpuid(7, 1);

  const bool osxsave = bit(leaf1.ecx, 27);
  const uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  const bool os_ymm = (xcr0 & 0x6) == 0x6;              // XMM and YMM state
  const bool os_zmm = os_ymm && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;      // XTILECFG, XTILEDATA

  f.sse42 = bit(leaf1.ecx, 20);
  f.avx = os_ymm && bit(leaf1.ecx, 28);
  f.fma = f.avx && bit(leaf1.ecx, 12);
  f.f16c = f.avx && bit(leaf1.ecx, 29);
  f.avx2 = f.avx && bit(leaf7.ebx, 5);
  f.avx512f = os_zmm && bit(leaf7.ebx, 16);
  f.avx512bw = f.avx512f && bit(leaf7.ebx, 30);
  f.avx512vl = f.avx512f && bit(leaf7.ebx, 31);
  f.avx512dq = f.avx512f && bit(leaf7.ebx, 17);
  f.avx512_vnni = f.avx512f && bit(leaf7.ecx, 11);
  f.avx512_bf16 = f.avx512f && bit(leaf7_1.eax, 5);
  f.amx_tile = os_amx && bit(leaf7.edx, 24) && os_grants_tile_data();
  f.amx_bf16 = f.amx_tile && bit(leaf7.edx, 22);
  f.amx_int8 = f.amx_tile && bit(leaf7.edx, 25);
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

std::vector<NamedCpuFeature> named_cpu_features() {
  const CpuFeatures& f = cpu_features();
  return {
      {"SSE4.2", "sse42", f.sse42},
      {"AVX", "avx", f.avx},
      {"AVX2", "avx2", f.avx2},
      {"FMA", "fma", f.fma},
      {"F16C", "f16c", f.f16c},
      {"AVX-512F", "avx512f", f.avx512f},
      {"AVX-512BW", "avx512bw", f.avx512bw},
      {"AVX-512VL", "avx512vl", f.avx512vl},
      {"AVX-512DQ", "avx512dq", f.avx512dq},
      {"AVX-512-VNNI", "avx512_vnni", f.avx512_vnni},
      {"AVX-512-BF16", "avx512_bf16", f.avx512_bf16},
      {"AMX-TILE", "amx_tile", f.amx_tile},
      {"AMX-BF16", "amx_bf16", f.amx_bf16},
      {"AMX-INT8", "amx_int8", f.amx_int8},
  };
}

std::string cpu_features_string() {
  std::string out;
  for (const NamedCpuFeature& feature : named_cpu_features()) {
    if (!feature.present) continue;
    if (!out.empty()) out += ' ';
    out += feature.name;
  }
  return out.empty() ? "none" : out;
}

}  // namespace tg::cpu
