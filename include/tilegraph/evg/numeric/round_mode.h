#pragma once
// Rounding modes of VisitorCast: the IEEE 754 ones plus those Ascend's vector unit offers
// (CAST_ROUND is kNearestAway, CAST_ODD is kToOdd).
#include <string_view>

namespace tg::evg {

enum class RoundMode {
  kNearestEven,   // to nearest, ties to even (IEEE default, C rint)
  kNearestAway,   // to nearest, ties away from zero (C round)
  kTowardZero,    // truncate (C trunc)
  kTowardPosInf,  // up (C ceil)
  kTowardNegInf,  // down (C floor)
  kAwayFromZero,  // any inexact result grows in magnitude
  kToOdd,         // inexact results take the neighbour with an odd last bit (no double rounding)
};

inline constexpr RoundMode kAllRoundModes[] = {
    RoundMode::kNearestEven,  RoundMode::kNearestAway,  RoundMode::kTowardZero, RoundMode::kTowardPosInf,
    RoundMode::kTowardNegInf, RoundMode::kAwayFromZero, RoundMode::kToOdd};

// The short names the string front end uses: rne, rna, rz, ru, rd, ra, ro.
constexpr std::string_view round_mode_name(RoundMode mode) {
  switch (mode) {
    case RoundMode::kNearestEven: return "rne";
    case RoundMode::kNearestAway: return "rna";
    case RoundMode::kTowardZero: return "rz";
    case RoundMode::kTowardPosInf: return "ru";
    case RoundMode::kTowardNegInf: return "rd";
    case RoundMode::kAwayFromZero: return "ra";
    case RoundMode::kToOdd: return "ro";
  }
  return "?";
}

// The C++ spelling, for generated code.
constexpr std::string_view round_mode_cpp(RoundMode mode) {
  switch (mode) {
    case RoundMode::kNearestEven: return "tg::evg::RoundMode::kNearestEven";
    case RoundMode::kNearestAway: return "tg::evg::RoundMode::kNearestAway";
    case RoundMode::kTowardZero: return "tg::evg::RoundMode::kTowardZero";
    case RoundMode::kTowardPosInf: return "tg::evg::RoundMode::kTowardPosInf";
    case RoundMode::kTowardNegInf: return "tg::evg::RoundMode::kTowardNegInf";
    case RoundMode::kAwayFromZero: return "tg::evg::RoundMode::kAwayFromZero";
    case RoundMode::kToOdd: return "tg::evg::RoundMode::kToOdd";
  }
  return "?";
}

}  // namespace tg::evg
