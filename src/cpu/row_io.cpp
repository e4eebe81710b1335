#include "row_io.h"

#include <cmath>
#include <cstring>

#include "tilegraph/core/error.h"

namespace tg::cpu {

namespace {

template <class T>
T read_unaligned(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void write_unaligned(char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace

void load_f32(const VecKernels& vec, DType type, const char* src, size_t stride, int64_t n, float* dst) {
  switch (type) {
    case DType::F32:
      if (stride == sizeof(float)) {
        std::memcpy(dst, src, size_t(n) * sizeof(float));
      } else {
        for (int64_t i = 0; i < n; ++i) dst[i] = read_unaligned<float>(src + i * stride);
      }
      return;
    case DType::F16:
    case DType::BF16: {
      const bool half = type == DType::F16;
      if (stride == sizeof(uint16_t)) {
        const auto* p = reinterpret_cast<const uint16_t*>(src);
        half ? vec.f16_to_f32(n, dst, p) : vec.bf16_to_f32(n, dst, p);
      } else {
        for (int64_t i = 0; i < n; ++i) {
          const auto bits = read_unaligned<uint16_t>(src + i * stride);
          dst[i] = half ? f16_to_f32(f16{bits}) : bf16_to_f32(bf16{bits});
        }
      }
      return;
    }
    case DType::I32:
      for (int64_t i = 0; i < n; ++i) dst[i] = float(read_unaligned<int32_t>(src + i * stride));
      return;
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: {
      const DTypeTraits& traits = dtype_traits(type);
      if (stride == traits.type_size) {
        vec.dequantize(type, n, dst, src);
      } else {
        const int64_t block = int64_t(traits.block_size);
        for (int64_t b = 0; b < n / block; ++b) {
          vec.dequantize(type, block, dst + b * block, src + b * stride);
        }
      }
      return;
    }
  }
  throw Error("cpu: cannot read dtype " + std::to_string(int(type)));
}

void store_f32(const VecKernels& vec, DType type, const float* src, char* dst, size_t stride, int64_t n) {
  switch (type) {
    case DType::F32:
      if (stride == sizeof(float)) {
        std::memmove(dst, src, size_t(n) * sizeof(float));
      } else {
        for (int64_t i = 0; i < n; ++i) write_unaligned(dst + i * stride, src[i]);
      }
      return;
    case DType::F16:
    case DType::BF16: {
      const bool half = type == DType::F16;
      if (stride == sizeof(uint16_t)) {
        auto* p = reinterpret_cast<uint16_t*>(dst);
        half ? vec.f32_to_f16(n, p, src) : vec.f32_to_bf16(n, p, src);
      } else {
        for (int64_t i = 0; i < n; ++i) {
          write_unaligned(dst + i * stride, half ? f32_to_f16(src[i]).bits : f32_to_bf16(src[i]).bits);
        }
      }
      return;
    }
    case DType::I32:
      for (int64_t i = 0; i < n; ++i) write_unaligned(dst + i * stride, int32_t(std::lrint(src[i])));
      return;
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: {
      const int64_t block = int64_t(dtype_traits(type).block_size);
      for (int64_t b = 0; b < n / block; ++b) {
        row_from_f32(type, src + b * block, dst + b * stride, block);
      }
      return;
    }
  }
  throw Error("cpu: cannot write dtype " + std::to_string(int(type)));
}

void copy_units(char* dst, size_t dst_stride, const char* src, size_t src_stride, int64_t units, size_t unit_bytes) {
  if (dst_stride == unit_bytes && src_stride == unit_bytes) {
    std::memmove(dst, src, size_t(units) * unit_bytes);
    return;
  }
  for (int64_t u = 0; u < units; ++u) std::memcpy(dst + u * dst_stride, src + u * src_stride, unit_bytes);
}

}  // namespace tg::cpu
