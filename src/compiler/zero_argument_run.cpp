#include <algorithm>
#include <cstdint>
#include <vector>

#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/error.h"

namespace tg::compiler {

namespace {

constexpr uint64_t kBurst = 64;
uint64_t align_up(uint64_t n) { return (n + kBurst - 1) / kBurst * kBurst; }

}  // namespace

sim::ChipReport run_with_zero_arguments(ChipProgram& program, sim::Chip& chip) {
  DdrBinding binding;
  uint64_t next = 0;
  const auto place = [&](uint64_t bytes) {
    const uint64_t at = next;
    next = align_up(next + bytes);
    if (next > chip.ddr().size()) {
      throw Error("the program's tensors need " + std::to_string(next) + " bytes of DDR; the chip has " +
                  std::to_string(chip.ddr().size()));
    }
    return at;
  };
  // Zeros written through the host, page by page: the DDR refuses to read bytes nothing wrote.
  const std::vector<uint8_t> zeros(1 << 20, 0);
  for (uint64_t bytes : program.argument_bytes()) {
    const uint64_t at = place(bytes);
    for (uint64_t done = 0; done < bytes; done += zeros.size()) {
      chip.ddr().write(at + done, zeros.data(), std::min<uint64_t>(zeros.size(), bytes - done));
    }
    binding.arguments.push_back(at);
  }
  for (uint64_t bytes : program.result_bytes()) binding.results.push_back(place(bytes));
  binding.constant = [](std::string_view) { return sim::kNoAddress; };
  binding.scratch = place(program.scratch_bytes());
  return program.run(chip, binding);
}

}  // namespace tg::compiler
