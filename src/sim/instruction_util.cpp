#include "instruction_util.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "tilegraph/core/error.h"

namespace tg::sim::detail {

void fail(const Tile& tile, const std::string& name, const std::string& what) {
  throw Error(name + " on tile " + std::to_string(tile.index()) + ": " + what);
}

void check_count(const Tile& tile, const std::string& name, const char* what, int64_t n) {
  if (n < 0) fail(tile, name, std::string(what) + " = " + std::to_string(n) + " is negative");
}

void check_format(const Tile& tile, const std::string& name, Format format, std::initializer_list<Format> allowed) {
  if (std::find(allowed.begin(), allowed.end(), format) != allowed.end()) return;
  std::string names;
  for (Format f : allowed) names += (names.empty() ? "" : ", ") + std::string(format_name(f));
  fail(tile, name, "unsupported format " + std::string(format_name(format)) + " (takes " + names + ")");
}

std::vector<float> load_f32(Tile& tile, const std::string& name, uint64_t addr, int64_t n, Format format) {
  std::vector<float> out(static_cast<size_t>(n));
  const uint8_t* p = tile.spm().read_span(name, addr, uint64_t(n) * format_bytes(format));
  to_f32(format, p, out.data(), n);
  return out;
}

void store_f32(Tile& tile, const std::string& name, uint64_t addr, const float* values, int64_t n, Format format,
               RoundMode rnd) {
  uint8_t* p = tile.spm().write_span(name, addr, uint64_t(n) * format_bytes(format));
  from_f32(format, values, p, n, rnd);
}

std::vector<int64_t> load_int(Tile& tile, const std::string& name, uint64_t addr, int64_t n, Format format) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  const uint8_t* p = tile.spm().read_span(name, addr, uint64_t(n) * format_bytes(format));
  if (format == Format::INT8) {
    for (int64_t i = 0; i < n; ++i) out[size_t(i)] = int8_t(p[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      out[size_t(i)] = v;
    }
  }
  return out;
}

void store_int(Tile& tile, const std::string& name, uint64_t addr, const int64_t* values, int64_t n, Format format) {
  uint8_t* p = tile.spm().write_span(name, addr, uint64_t(n) * format_bytes(format));
  if (format == Format::INT8) {
    for (int64_t i = 0; i < n; ++i) p[i] = uint8_t(int8_t(std::clamp<int64_t>(values[i], -128, 127)));
  } else {
    constexpr int64_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
    for (int64_t i = 0; i < n; ++i) {
      const int32_t v = int32_t(std::clamp<int64_t>(values[i], lo, hi));
      std::memcpy(p + 4 * i, &v, 4);
    }
  }
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace tg::sim::detail
