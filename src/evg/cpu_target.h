#pragma once
// Which vector ISA a generated kernel is compiled for: the lanes of arch::Cpu and the matching
// `#pragma GCC target`, from what this CPU (and its OS) supports.
#include <string>

namespace tg::evg::frontend {

struct CpuTarget {
  int lanes = 4;
  std::string pragma_target;  // "" for the baseline; 1, 2 and 4 lanes add "fma" if the CPU has it
};

// The widest this CPU runs: 16 lanes with AVX-512 (F, BW, VL, DQ), 8 with AVX2 + FMA + F16C, else 4.
CpuTarget native_cpu_target();
// For `lanes` (1, 2, 4, 8, 16); throws tg::Error if the CPU cannot run it.
CpuTarget cpu_target_for_lanes(int lanes);

}  // namespace tg::evg::frontend
