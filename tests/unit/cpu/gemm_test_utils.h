#pragma once
// Shared by the GEMM tests: random operands in any element type and storage order, the
// double-precision reference, and the rounding bound results are held to.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tilegraph/core/dtype.h"
#include "tilegraph/evg/block.h"
#include "tilegraph/evg/kernel/operand.h"

namespace tg::test {

inline std::string element_name(evg::ElementType t) {
  switch (t) {
    case evg::ElementType::F32: return "f32";
    case evg::ElementType::F16: return "f16";
    case evg::ElementType::BF16: return "bf16";
  }
  return "?";
}

// A rows x cols matrix stored in `type`, row- or column-major with `pad` unused elements after
// each storage line; `value` holds the stored values exactly, in logical row-major order.
class TestMatrix {
 public:
  TestMatrix(std::mt19937& rng, evg::ElementType type, int64_t rows, int64_t cols, bool transposed, int64_t pad)
      : type_(type),
        rows_(rows),
        cols_(cols),
        transposed_(transposed),
        ld_((transposed ? rows : cols) + pad),
        value_(size_t(rows * cols)) {
    const int64_t lines = transposed ? cols : rows;
    // Never empty, so that even a 0 x n operand has a valid pointer; padding holds NaN, which
    // would poison any result that reads it.
    const size_t storage = size_t(std::max<int64_t>(1, lines * ld_));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    if (type == evg::ElementType::F32) {
      f32_.assign(storage, std::nanf(""));
    } else {
      const uint16_t nan_bits = type == evg::ElementType::F16 ? 0x7e00 : 0x7fc0;
      bits_.assign(storage, nan_bits);
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const size_t at = size_t(transposed ? c * ld_ + r : r * ld_ + c);
        const float x = dist(rng);
        float stored = x;
        if (type == evg::ElementType::F32) {
          f32_[at] = x;
        } else if (type == evg::ElementType::F16) {
          bits_[at] = f32_to_f16(x).bits;
          stored = f16_to_f32(f16{bits_[at]});
        } else {
          bits_[at] = f32_to_bf16(x).bits;
          stored = bf16_to_f32(bf16{bits_[at]});
        }
        value_[size_t(r * cols + c)] = stored;
      }
    }
  }

  evg::MatrixOperand operand() const {
    evg::MatrixOperand m;
    m.data = type_ == evg::ElementType::F32 ? static_cast<const void*>(f32_.data()) : bits_.data();
    m.type = type_;
    m.ld = ld_;
    m.transposed = transposed_;
    return m;
  }
  double at(int64_t r, int64_t c) const { return value_[size_t(r * cols_ + c)]; }
  std::string describe() const {
    return element_name(type_) + (transposed_ ? " col-major" : " row-major") + " ld=" + std::to_string(ld_);
  }

 private:
  evg::ElementType type_;
  int64_t rows_, cols_;
  bool transposed_;
  int64_t ld_;
  std::vector<float> f32_;
  std::vector<uint16_t> bits_;
  std::vector<float> value_;
};

// A · B in double, with the sum of |a b| terms that bounds the f32 rounding error.
struct Reference {
  int64_t m, n;
  std::vector<double> value, magnitude;

  Reference(const TestMatrix& a, const TestMatrix& b, const evg::GemmShape& p)
      : m(p.m), n(p.n), value(size_t(p.m * p.n)), magnitude(size_t(p.m * p.n)) {
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        double s = 0, mag = 0;
        for (int64_t k = 0; k < p.k; ++k) {
          s += a.at(i, k) * b.at(k, j);
          mag += std::fabs(a.at(i, k) * b.at(k, j));
        }
        value[size_t(i * n + j)] = s;
        magnitude[size_t(i * n + j)] = mag;
      }
    }
  }

  // An f32 sum of k products is within about k units of rounding of the magnitude (twice that
  // here); anything wrong (a missed or doubled term, a NaN from padding) is far outside.
  bool close(int64_t i, int64_t j, float got, int64_t k) const {
    const double bound = double(k + 4) * std::ldexp(1.0, -23) * magnitude[size_t(i * n + j)];
    return std::isfinite(got) && std::fabs(double(got) - value[size_t(i * n + j)]) <= bound;
  }
};

// 64-byte aligned memory for GEMM workspaces.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t bytes)
      : data_(bytes ? std::aligned_alloc(64, (bytes + 63) / 64 * 64) : nullptr, &std::free) {}
  void* get() const { return data_.get(); }

 private:
  std::unique_ptr<void, decltype(&std::free)> data_;
};

}  // namespace tg::test
