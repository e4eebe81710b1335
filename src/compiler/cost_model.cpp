#include "cost_model.h"

#include <algorithm>
#include <limits>

namespace tg::compiler {

namespace {

constexpr double kMatrixFlopsPerCycle = 1024;
constexpr double kVectorFlopsPerCycle = 64;
constexpr double kSpmBytesPerCycle = 128;
constexpr uint64_t kIssueCycles = 64;

double flops(const Tensor& node) {
  const auto elements = double(node.nelements());
  switch (node.op) {
    case Op::MUL_MAT: return 2.0 * elements * double(node.src[0]->ne[0]);
    case Op::CONV_2D: {
      const Tensor& kernel = *node.src[0];
      return 2.0 * elements * double(kernel.ne[0] * kernel.ne[1] * kernel.ne[2]);
    }
    case Op::FLASH_ATTN_EXT: {
      const Tensor& q = *node.src[0];
      const Tensor& k = *node.src[1];
      const Tensor& v = *node.src[2];
      const double scores = double(q.ne[1] * q.ne[2] * q.ne[3]) * double(k.ne[1]);
      return 2.0 * scores * double(q.ne[0] + v.ne[0]) + 5.0 * scores;
    }
    case Op::UNARY:
    case Op::GLU:
    case Op::ROPE: return 4.0 * elements;
    case Op::NORM:
    case Op::RMS_NORM:
    case Op::SOFT_MAX:
    case Op::BATCH_NORM: return 5.0 * elements;
    default: return elements;
  }
}

double bytes(const Tensor& node) {
  double total = double(node.nbytes());
  for (int i = 0; i < kMaxSrc; ++i) {
    if (node.src[i]) total += double(node.src[i]->nbytes());
  }
  return total;
}

}  // namespace

uint64_t estimate_cycles(const Tensor& node, EngineKind engine) {
  double compute = 0;
  if (engine == EngineKind::Matrix) compute = flops(node) / kMatrixFlopsPerCycle;
  if (engine == EngineKind::Vector) compute = flops(node) / kVectorFlopsPerCycle;
  const double cycles = std::max(compute, bytes(node) / kSpmBytesPerCycle);
  return kIssueCycles + uint64_t(std::min(cycles, double(std::numeric_limits<uint64_t>::max() / 2)));
}

uint32_t estimate_scratch_bytes(const Tensor& node) {
  uint64_t scratch = 0;
  const Tensor* a = node.src[0];
  switch (node.op) {
    case Op::BATCH_NORM: scratch = 2 * a->nbytes(); break;
    case Op::NORM:
    case Op::RMS_NORM:
    case Op::SOFT_MAX:
    case Op::ROPE:
      if (a->type != DType::F32) scratch = uint64_t(a->nelements()) * sizeof(float);
      break;
    case Op::MUL_MAT:
      if (is_quantized(a->type)) scratch = uint64_t(node.src[1]->nelements());
      break;
    case Op::FLASH_ATTN_EXT: {
      const Tensor& q = *node.src[0];
      scratch = uint64_t(node.src[1]->ne[1]) * sizeof(float) * uint64_t(q.ne[1] * q.ne[2] * q.ne[3]);
      break;
    }
    default: break;
  }
  return uint32_t(std::min<uint64_t>(scratch, std::numeric_limits<uint32_t>::max()));
}

}  // namespace tg::compiler
