#pragma once
// What every instruction's implementation shares: checked operand access in the issuing tile's
// SPM, conversions to the f32 the engines compute in, and issuing to the tile's timeline.
#include <cstdint>
#include <string>
#include <vector>

#include "chip_state.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/format.h"

namespace tg::sim::detail {

inline uint64_t issue(Tile& tile, Engine engine, std::string name, Work work) {
  return tile.chip().state().issue(tile.index(), engine, std::move(name), std::move(work));
}

// Starts an instruction: forgets SPM accesses an instruction that failed left in the log.
inline std::string begin(Tile& tile, std::string name) {
  tile.chip().state().accesses.clear();
  return name;
}

// "<name> on tile <t>: <what>" as a tg::Error.
[[noreturn]] void fail(const Tile& tile, const std::string& name, const std::string& what);
void check_count(const Tile& tile, const std::string& name, const char* what, int64_t n);
// Fails unless `format` is one of `allowed`.
void check_format(const Tile& tile, const std::string& name, Format format, std::initializer_list<Format> allowed);

// n elements of `format` at `addr` of the tile's SPM as f32 (bounds and initialisation checked).
std::vector<float> load_f32(Tile& tile, const std::string& name, uint64_t addr, int64_t n, Format format);
void store_f32(Tile& tile, const std::string& name, uint64_t addr, const float* values, int64_t n, Format format,
               RoundMode rnd);
// Integer formats by value.
std::vector<int64_t> load_int(Tile& tile, const std::string& name, uint64_t addr, int64_t n, Format format);
// Saturates to the format's range.
void store_int(Tile& tile, const std::string& name, uint64_t addr, const int64_t* values, int64_t n, Format format);

uint64_t ceil_div(uint64_t a, uint64_t b);

}  // namespace tg::sim::detail
