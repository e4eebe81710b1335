#pragma once
// The element types an EVG edge can carry, and how SIMD code holds them: f16 and bf16 travel as
// their 16-bit patterns (no arithmetic happens on them; a VisitorCast converts).
#include <cstdint>

#include "tilegraph/core/dtype.h"

namespace tg::evg {

template <class T>
struct ElementTraits;

template <>
struct ElementTraits<float> {
  using Lane = float;
  static constexpr const char* kName = "f32";
};
template <>
struct ElementTraits<tg::f16> {
  using Lane = uint16_t;
  static constexpr const char* kName = "f16";
};
template <>
struct ElementTraits<tg::bf16> {
  using Lane = uint16_t;
  static constexpr const char* kName = "bf16";
};
template <>
struct ElementTraits<int8_t> {
  using Lane = int8_t;
  static constexpr const char* kName = "i8";
};
template <>
struct ElementTraits<int32_t> {
  using Lane = int32_t;
  static constexpr const char* kName = "i32";
};

template <class T>
concept EvgElement = requires {
  typename ElementTraits<T>::Lane;
};

template <EvgElement T>
using LaneOf = typename ElementTraits<T>::Lane;

static_assert(sizeof(tg::f16) == 2 && sizeof(tg::bf16) == 2, "f16/bf16 are stored as their bit patterns");

}  // namespace tg::evg
