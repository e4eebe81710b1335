#pragma once
// Element formats of the TX8 chip and their conversions with the chip's rounding modes. Float
// formats are computed in f32 by every engine; tf32 is stored in 32 bits with the low 13
// mantissa bits zero (a float rounded to 10 mantissa bits); int8 and int32 are two's complement.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tg::sim {

enum class Format : int32_t { FP32, FP16, BF16, TF32, INT8, INT32 };
inline constexpr int kFormatCount = 6;

// How a value that does not fit the destination format is rounded. Float-to-int conversions
// saturate to the integer range; NaN converts to 0.
enum class RoundMode : int32_t {
  NearestEven,  // IEEE default
  TowardZero,   // truncate
  Down,         // toward -inf
  Up,           // toward +inf
  NearestAway,  // ties away from zero
};
inline constexpr int kRoundModeCount = 5;

// "fp32", "fp16", "bf16", "tf32", "int8", "int32".
std::string_view format_name(Format format);
// "nearest_even", "toward_zero", "down", "up", "nearest_away".
std::string_view round_mode_name(RoundMode mode);
// Any letter case; throws tg::Error listing the names.
Format parse_format(std::string_view name);
size_t format_bytes(Format format);
bool is_float_format(Format format);

// n elements of `format` at `src` to f32 (exact for every format but int32 beyond 2^24).
void to_f32(Format format, const void* src, float* dst, int64_t n);
// n f32 values to `format`, rounded with `mode` (int formats saturate).
void from_f32(Format format, const float* src, void* dst, int64_t n, RoundMode mode);
// One value rounded to `format` and back to f32: what storing it and reading it back gives.
float round_to(Format format, float value, RoundMode mode = RoundMode::NearestEven);

}  // namespace tg::sim
