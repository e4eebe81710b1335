#include "tilegraph/sim/format.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "tilegraph/core/dtype.h"
#include "tilegraph/core/error.h"

namespace tg::sim {

namespace {

constexpr std::string_view kFormatNames[kFormatCount] = {"fp32", "fp16", "bf16", "tf32", "int8", "int32"};
constexpr size_t kFormatBytes[kFormatCount] = {4, 2, 2, 4, 1, 4};
constexpr std::string_view kRoundNames[kRoundModeCount] = {"nearest_even", "toward_zero", "down", "up", "nearest_away"};

char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

// The next representable value of a sign-magnitude 16-bit float (f16 or bf16 bits) toward +inf
// (up) or -inf.
uint16_t step16(uint16_t bits, bool up) {
  const bool negative = bits & 0x8000u;
  const uint16_t magnitude = bits & 0x7fffu;
  if (magnitude == 0) return up ? 0x0001u : 0x8001u;
  return (negative != up) ? uint16_t(bits + 1) : uint16_t(bits - 1);
}

// Rounds x to a 16-bit float under `mode`: the nearest-even result corrected by one step where
// a directed mode needs it (the nearest value is at most one step from the directed one).
template <class ToBits, class ToF32>
uint16_t round16(float x, RoundMode mode, ToBits to_bits, ToF32 to_f32) {
  uint16_t bits = to_bits(x);
  if (std::isnan(x) || mode == RoundMode::NearestEven) return bits;
  const float r = to_f32(bits);
  if (r == x) return bits;
  switch (mode) {
    case RoundMode::TowardZero:
      if (std::fabs(r) > std::fabs(x)) bits = step16(bits, x < 0);
      break;
    case RoundMode::Down:
      if (r > x) bits = step16(bits, false);
      break;
    case RoundMode::Up:
      if (r < x) bits = step16(bits, true);
      break;
    case RoundMode::NearestAway: {
      // A tie rounded to even toward zero moves one step away from zero.
      const uint16_t other = step16(bits, (r < x));
      const float o = to_f32(other);
      if (std::fabs(o - x) == std::fabs(r - x) && std::fabs(o) > std::fabs(r)) bits = other;
      break;
    }
    case RoundMode::NearestEven: break;
  }
  return bits;
}

uint16_t f16_bits(float x) { return f32_to_f16(x).bits; }
float f16_value(uint16_t b) { return f16_to_f32(f16{b}); }
uint16_t bf16_bits(float x) { return f32_to_bf16(x).bits; }
float bf16_value(uint16_t b) { return bf16_to_f32(bf16{b}); }

// f32 to tf32 (10 mantissa bits, stored as f32 with the low 13 bits zero).
float round_tf32(float x, RoundMode mode) {
  if (!std::isfinite(x)) return x;
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t low = u & 0x1fffu;
  uint32_t kept = u & ~0x1fffu;
  if (low == 0) return x;
  const bool negative = u >> 31;
  bool away = false;  // increase the magnitude
  switch (mode) {
    case RoundMode::NearestEven: away = low > 0x1000u || (low == 0x1000u && (kept & 0x2000u)); break;
    case RoundMode::NearestAway: away = low >= 0x1000u; break;
    case RoundMode::TowardZero: away = false; break;
    case RoundMode::Down: away = negative; break;
    case RoundMode::Up: away = !negative; break;
  }
  if (away) kept += 0x2000u;  // may carry into the exponent, up to inf: the right answer
  return std::bit_cast<float>(kept);
}

template <class Int>
Int round_int(float x, RoundMode mode) {
  if (std::isnan(x)) return 0;
  double r;
  switch (mode) {
    case RoundMode::NearestEven: r = std::nearbyint(double(x)); break;  // default FE_TONEAREST
    case RoundMode::NearestAway: r = std::round(double(x)); break;
    case RoundMode::TowardZero: r = std::trunc(double(x)); break;
    case RoundMode::Down: r = std::floor(double(x)); break;
    case RoundMode::Up: r = std::ceil(double(x)); break;
    default: r = 0;
  }
  constexpr double lo = double(std::numeric_limits<Int>::min());
  constexpr double hi = double(std::numeric_limits<Int>::max());
  return Int(r < lo ? lo : r > hi ? hi : r);
}

}  // namespace

std::string_view format_name(Format format) {
  const int i = int(format);
  if (i < 0 || i >= kFormatCount) throw Error("unknown format " + std::to_string(i));
  return kFormatNames[i];
}

std::string_view round_mode_name(RoundMode mode) {
  const int i = int(mode);
  if (i < 0 || i >= kRoundModeCount) throw Error("unknown rounding mode " + std::to_string(i));
  return kRoundNames[i];
}

Format parse_format(std::string_view name) {
  std::string names;
  for (int i = 0; i < kFormatCount; ++i) {
    const std::string_view candidate = kFormatNames[i];
    bool same = candidate.size() == name.size();
    for (size_t j = 0; same && j < name.size(); ++j) same = lower(name[j]) == candidate[j];
    if (same) return Format(i);
    names += (i ? ", " : "") + std::string(candidate);
  }
  throw Error("unknown format '" + std::string(name) + "' (expected one of " + names + ")");
}

size_t format_bytes(Format format) {
  format_name(format);  // validates
  return kFormatBytes[int(format)];
}

bool is_float_format(Format format) { return format != Format::INT8 && format != Format::INT32; }

void to_f32(Format format, const void* src, float* dst, int64_t n) {
  switch (format) {
    case Format::FP32:
    case Format::TF32: std::memcpy(dst, src, size_t(n) * 4); return;
    case Format::FP16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(f16{s[i]});
      return;
    }
    case Format::BF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = std::bit_cast<float>(uint32_t(s[i]) << 16);
      return;
    }
    case Format::INT8: {
      const auto* s = static_cast<const int8_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = float(s[i]);
      return;
    }
    case Format::INT32: {
      const auto* s = static_cast<const int32_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = float(s[i]);
      return;
    }
  }
  throw Error("to_f32: unknown format " + std::to_string(int(format)));
}

void from_f32(Format format, const float* src, void* dst, int64_t n, RoundMode mode) {
  switch (format) {
    case Format::FP32: std::memcpy(dst, src, size_t(n) * 4); return;
    case Format::TF32: {
      auto* d = static_cast<float*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = round_tf32(src[i], mode);
      return;
    }
    case Format::FP16: {
      auto* d = static_cast<uint16_t*>(dst);
      if (mode == RoundMode::NearestEven) {
        for (int64_t i = 0; i < n; ++i) d[i] = f32_to_f16(src[i]).bits;
      } else {
        for (int64_t i = 0; i < n; ++i) d[i] = round16(src[i], mode, f16_bits, f16_value);
      }
      return;
    }
    case Format::BF16: {
      auto* d = static_cast<uint16_t*>(dst);
      if (mode == RoundMode::NearestEven) {
        for (int64_t i = 0; i < n; ++i) d[i] = f32_to_bf16(src[i]).bits;
      } else {
        for (int64_t i = 0; i < n; ++i) d[i] = round16(src[i], mode, bf16_bits, bf16_value);
      }
      return;
    }
    case Format::INT8: {
      auto* d = static_cast<int8_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = round_int<int8_t>(src[i], mode);
      return;
    }
    case Format::INT32: {
      auto* d = static_cast<int32_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = round_int<int32_t>(src[i], mode);
      return;
    }
  }
  throw Error("from_f32: unknown format " + std::to_string(int(format)));
}

float round_to(Format format, float value, RoundMode mode) {
  alignas(8) unsigned char bytes[8];
  from_f32(format, &value, bytes, 1, mode);
  float out;
  to_f32(format, bytes, &out, 1);
  return out;
}

}  // namespace tg::sim
