#include "random_graph.h"

#include <random>

#include "common/tensor_utils.h"
#include "tilegraph/core/ops.h"

namespace tg::test {

namespace {

constexpr int64_t kChannels[] = {1, 7, 31, 32, 33, 63, 64, 65, 127, 128, 129};

class Builder {
 public:
  Builder(Context& ctx, uint32_t seed) : ctx_(ctx), rng_(seed) {}

  int64_t pick_channels() { return kChannels[pick(std::size(kChannels))]; }
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool coin() { return pick(2) == 0; }

  Tensor* input(std::initializer_list<int64_t> ne) { return random_input(ctx_, rng_, DType::F32, ne); }

  Tensor* weight(DType type, std::initializer_list<int64_t> ne, float lo = -1.0f, float hi = 1.0f) {
    return random_weight(ctx_, rng_, type, ne, lo, hi);
  }

  // One random op on `a` (and sometimes another value of the pool).
  Tensor* grow(Tensor* a, const std::vector<Tensor*>& pool) {
    const int64_t c = a->ne[0];
    switch (pick(10)) {
      case 0: {
        const auto op = UnaryOp(pick(size_t(kUnaryOpCount)));
        // sqrt and rsqrt of a positive argument; exp of a bounded one.
        if (op == UnaryOp::SQRT || op == UnaryOp::RSQRT)
          return unary(ctx_, add(ctx_, abs(ctx_, a), weight(DType::F32, {c}, 0.5f, 1.0f)), op);
        if (op == UnaryOp::EXP) return exp(ctx_, tanh(ctx_, a));
        return unary(ctx_, a, op);
      }
      case 1: {
        // A second operand of the same shape from the pool, or a per-channel weight.
        Tensor* b = nullptr;
        for (Tensor* t : pool) {
          if (t != a && same_shape(*t, *a) && coin()) b = t;
        }
        if (!b) b = weight(DType::F32, {c});
        switch (pick(4)) {
          case 0: return add(ctx_, a, b);
          case 1: return sub(ctx_, a, b);
          case 2: return mul(ctx_, a, b);
          default: return div(ctx_, a, weight(DType::F32, {c}, 0.5f, 2.0f));
        }
      }
      case 2: {
        const int64_t out = pick_channels();
        DType type = coin() ? DType::F32 : DType::F16;
        if (c % 32 == 0 && coin()) type = DType::Q8_0;
        return mul_mat(ctx_, weight(type, {c, out}, -0.3f, 0.3f), a);
      }
      case 3: return rms_norm(ctx_, a, 1e-5f);
      case 4: return norm(ctx_, a, 1e-5f);
      case 5: return soft_max(ctx_, a, nullptr, coin() ? 1.0f : 0.125f);
      case 6: return scale(ctx_, a, 0.5f, coin() ? 0.0f : 1.0f);
      case 7: return cont(ctx_, transpose(ctx_, a));
      case 8: return concat(ctx_, a, a, int(pick(2)));
      default: return swiglu(ctx_, a, tanh(ctx_, a));
    }
  }

 private:
  Context& ctx_;
  std::mt19937 rng_;
};

}  // namespace

Tensor* random_input(Context& ctx, Rng& rng, DType type, std::initializer_list<int64_t> ne, float lo, float hi) {
  Tensor* t = ctx.new_tensor(type, ne);
  fill_uniform(*t, rng, lo, hi);
  t->flags |= kFlagInput;
  return t;
}

Tensor* random_weight(Context& ctx, Rng& rng, DType type, std::initializer_list<int64_t> ne, float lo, float hi) {
  Tensor* t = ctx.new_tensor(type, ne);
  fill_uniform(*t, rng, lo, hi);
  t->flags |= kFlagParam;
  return t;
}

std::vector<Tensor*> random_graph(Context& ctx, uint32_t seed, const RandomGraphOptions& options) {
  Builder b(ctx, seed);
  const int64_t rows = int64_t(1 + b.pick(5));
  const int64_t batch = int64_t(1 + b.pick(2));
  std::vector<Tensor*> pool = {b.input({b.pick_channels(), rows, batch})};
  if (b.coin()) pool.push_back(b.input({pool[0]->ne[0], rows, batch}));
  const int ops = options.min_ops + int(b.pick(size_t(options.max_ops - options.min_ops + 1)));
  for (int i = 0; i < ops; ++i) {
    Tensor* a = pool[b.pick(pool.size())];
    // Keep tensors small: a concat or transpose of a large one would grow the graph's work.
    if (a->nelements() > 64 * 1024) a = pool[0];
    pool.push_back(b.grow(a, pool));
  }
  std::vector<Tensor*> outputs = {pool.back()};
  for (size_t i = 1; i + 1 < pool.size(); ++i) {
    if (pool[i]->op != Op::NONE && b.pick(4) == 0) outputs.push_back(pool[i]);
  }
  return outputs;
}

}  // namespace tg::test
