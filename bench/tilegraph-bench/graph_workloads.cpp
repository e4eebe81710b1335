#include "graph_workloads.h"

#include <cmath>
#include <cstring>

#include "tilegraph/core/ops.h"

namespace tg::bench::graph_suite {

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

std::unique_ptr<Backend> cpu_backend(int threads, bool graph_mode, size_t capacity) {
  auto backend = make_backend("cpu", {.num_threads = threads});
  GraphModeConfig config = backend->graph_mode()->config();
  config.enabled = graph_mode;
  config.capacity = capacity;
  backend->graph_mode()->set_config(config);
  return backend;
}

size_t executed_nodes(const Graph& graph) {
  size_t n = 0;
  for (const Tensor* node : graph.nodes()) n += node->is_noop() ? 0 : 1;
  return n;
}

double hit_rate(const GraphModeStats& s) { return s.computes ? double(s.hits) / double(s.computes) : 0.0; }

Model::Model(const ModelSize& size, int64_t n_ctx) {
  config.n_embd = size.d_model;
  config.n_head = size.n_head;
  config.n_head_kv = size.n_head_kv;
  config.n_ff = round_up(size.d_model * 8 / 3, 32);
  config.n_ctx = n_ctx;
  config.weight_type = kWeightType;
  config.cache_type = DType::F16;
  for (int l = 0; l < kLayers; ++l) {
    const model::BlockWeights& w = layers.emplace_back(model::make_block_weights(ctx, config, 1000 + 97 * uint64_t(l)));
    caches.push_back(model::make_kv_cache(ctx, config));
    for (const Tensor* t : {w.attn_norm, w.wq, w.wk, w.wv, w.wo, w.ffn_norm, w.w_gate, w.w_up, w.w_down}) {
      weight_bytes += double(t->nbytes());
    }
  }
  x.resize(size_t(size.d_model));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * float(i));
}

// One token through every block, attending over n_kv cache rows.
StepGraph build_step(Context& ctx, const Model& m, int64_t n_kv) {
  const model::StepInputs inputs = model::make_step_inputs(ctx, m.config, 1, n_kv);
  model::StepInputs layer_in = inputs;
  for (size_t l = 0; l < m.layers.size(); ++l) {
    layer_in.x = model::build_block(ctx, m.config, m.layers[l], m.caches[l], layer_in, n_kv);
  }
  return {Graph::build(layer_in.x), inputs};
}

void fill_inputs(const Model& m, const model::StepInputs& in, int64_t n_past) {
  std::memcpy(in.x->data, m.x.data(), m.x.size() * sizeof(float));
  model::fill_step_inputs(in, n_past);
}

Tensor* build_chain(Context& ctx, int n, ChainKind kind, int64_t width) {
  Tensor* x = ctx.new_tensor(DType::F32, {width});
  x->flags |= kFlagInput;
  for (int64_t i = 0; i < width; ++i) static_cast<float*>(x->data)[i] = 0.5f + 0.01f * float(i);
  Tensor* t = x;
  for (int i = 0; i < n; ++i) {
    if (kind == ChainKind::kFusable) {
      t = i % 2 ? silu(ctx, t) : scale(ctx, t, 0.999f, 0.001f);
    } else {
      switch (i % 3) {
        case 0: t = scale(ctx, t, 0.999f, 0.001f); break;
        case 1: t = sum_rows(ctx, t); break;
        default: t = cont(ctx, t); break;
      }
    }
  }
  return t;
}

}  // namespace tg::bench::graph_suite
