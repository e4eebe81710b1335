// GGUF value types, the ggml tensor type ids and GgufValue.
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "printable.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf.h"

namespace tg::model {

namespace {

template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {
  using Element = T;
};

}  // namespace

std::string_view gguf_type_name(GgufType type) {
  static constexpr std::string_view kNames[kGgufTypeCount] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                                              "bool", "string", "array", "u64", "i64", "f64"};
  const auto index = uint32_t(type);
  return index < kGgufTypeCount ? kNames[index] : "unknown";
}

uint32_t ggml_type_id(DType type) {
  switch (type) {
    case DType::F32: return 0;
    case DType::F16: return 1;
    case DType::Q4_0: return 2;
    case DType::Q4_1: return 3;
    case DType::Q5_0: return 6;
    case DType::Q5_1: return 7;
    case DType::Q8_0: return 8;
    case DType::Q4_K: return 12;
    case DType::Q5_K: return 13;
    case DType::Q6_K: return 14;
    case DType::I32: return 26;
    case DType::BF16: return 30;
  }
  throw Error("gguf: dtype " + std::to_string(int(type)) + " has no ggml type id");
}

uint64_t tensor_data_alignment(DType type) {
  switch (type) {
    case DType::F32:
    case DType::I32: return 4;
    // The quantized blocks' widest fields are their f16 scales, and every block size is even.
    case DType::F16:
    case DType::BF16:
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return 2;
  }
  return 4;
}

DType dtype_from_ggml(uint32_t id) {
  switch (id) {
    case 0: return DType::F32;
    case 1: return DType::F16;
    case 2: return DType::Q4_0;
    case 3: return DType::Q4_1;
    case 6: return DType::Q5_0;
    case 7: return DType::Q5_1;
    case 8: return DType::Q8_0;
    case 12: return DType::Q4_K;
    case 13: return DType::Q5_K;
    case 14: return DType::Q6_K;
    case 26: return DType::I32;
    case 30: return DType::BF16;
    default: break;
  }
  // ggml's names of the types tilegraph cannot run, so the message says what the file holds.
  static const std::unordered_map<uint32_t, std::string_view> kKnown = {
      {9, "q8_1"},   {10, "q2_K"},   {11, "q3_K"},  {15, "q8_K"},  {16, "iq2_xxs"}, {17, "iq2_xs"}, {18, "iq3_xxs"},
      {19, "iq1_s"}, {20, "iq4_nl"}, {21, "iq3_s"}, {22, "iq2_s"}, {23, "iq4_xs"},  {24, "i8"},     {25, "i16"},
      {27, "i64"},   {28, "f64"},    {29, "iq1_m"}, {34, "tq1_0"}, {35, "tq2_0"},
  };
  const auto known = kKnown.find(id);
  if (known != kKnown.end()) {
    throw Error("unsupported ggml tensor type " + std::to_string(id) + " (" + std::string(known->second) +
                "); supported: f32, f16, bf16, i32, q8_0, q4_0, q4_1, q5_0, q5_1, q4_K, q5_K, q6_K");
  }
  throw Error("unknown ggml tensor type " + std::to_string(id));
}

GgufType GgufValue::type() const {
  return std::visit(
      [](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (IsVector<V>::value) {
          return GgufType::ARRAY;
        } else {
          return GgufTypeOf<V>::value;
        }
      },
      storage_);
}

GgufType GgufValue::element_type() const {
  return std::visit(
      [](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (IsVector<V>::value) {
          return GgufTypeOf<typename IsVector<V>::Element>::value;
        } else {
          return GgufTypeOf<V>::value;
        }
      },
      storage_);
}

size_t GgufValue::array_size() const {
  return std::visit(
      [](const auto& v) -> size_t {
        using V = std::decay_t<decltype(v)>;
        if constexpr (IsVector<V>::value) {
          return v.size();
        } else {
          return 0;
        }
      },
      storage_);
}

int64_t GgufValue::to_int() const {
  return std::visit(
      [this](const auto& v) -> int64_t {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) {
          if constexpr (std::is_same_v<V, uint64_t>) {
            if (v > uint64_t(std::numeric_limits<int64_t>::max())) {
              throw Error("gguf: u64 value " + std::to_string(v) + " is out of range");
            }
          }
          return int64_t(v);
        } else {
          throw Error("gguf: expected an integer, got " + describe());
        }
      },
      storage_);
}

double GgufValue::to_float() const {
  if (const float* f = std::get_if<float>(&storage_)) return *f;
  if (const double* d = std::get_if<double>(&storage_)) return *d;
  throw Error("gguf: expected f32 or f64, got " + describe());
}

std::string GgufValue::describe() const {
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (IsVector<V>::value) {
          return "array of " + std::to_string(v.size()) + " " +
                 std::string(gguf_type_name(GgufTypeOf<typename IsVector<V>::Element>::value));
        } else if constexpr (std::is_same_v<V, std::string>) {
          return "string " + printable(v, '"');
        } else if constexpr (std::is_same_v<V, bool>) {
          return std::string("bool ") + (v ? "true" : "false");
        } else if constexpr (std::is_floating_point_v<V>) {
          char text[32];  // the shortest form that reads back as the same value: 1e-40, not 0.000000
          const auto end = std::to_chars(text, text + sizeof text, v).ptr;
          return std::string(gguf_type_name(GgufTypeOf<V>::value)) + " " + std::string(text, end);
        } else {
          return std::string(gguf_type_name(GgufTypeOf<V>::value)) + " " + std::to_string(v);
        }
      },
      storage_);
}

void GgufValue::type_mismatch(GgufType wanted, bool array) const {
  throw Error("gguf: expected " + std::string(array ? "an array of " : "") + std::string(gguf_type_name(wanted)) +
              ", got " + describe());
}

}  // namespace tg::model
