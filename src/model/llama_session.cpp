#include "tilegraph/model/llama_session.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/runtime/tensor_data.h"

namespace tg::model {

namespace {

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

LlamaSession::LlamaSession(const LlamaModel& model, Backend& backend, int64_t n_ctx, DType cache_type)
    : model_(model), backend_(backend), n_ctx_(n_ctx) {
  const LlamaConfig& c = model.config();
  if (n_ctx < 1 || n_ctx > c.n_ctx_train) {
    throw Error("llama session: n_ctx " + std::to_string(n_ctx) + " is outside 1.." + std::to_string(c.n_ctx_train) +
                " (the model's context length)");
  }
  block_ = c.block_config(n_ctx, model.weight_type(), cache_type);
  // Files mix types (Q4_K_M): the block's check is of the matrices it has.
  block_.wv_type = model.layers().front().wv->type;
  block_.w_down_type = model.layers().front().w_down->type;
  block_.validate();
  for (int64_t l = 0; l < c.n_layer; ++l) caches_.push_back(make_kv_cache(cache_ctx_, block_));
  // The caches live in one buffer of the backend's memory, zeroed through it (ggml's
  // ggml_backend_alloc_ctx_tensors + ggml_backend_buffer_clear).
  std::vector<size_t> offsets;
  size_t bytes = 0;
  for (const KvCache& kv : caches_) {
    for (const Tensor* t : {kv.k, kv.v}) {
      offsets.push_back(bytes);
      bytes += (t->nbytes() + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    }
  }
  cache_buffer_ = backend.alloc_buffer(bytes);
  if (!cache_buffer_ || cache_buffer_->size() < bytes) {
    throw Error(std::string(backend.name()) + ": no buffer of " + std::to_string(bytes) + " bytes for the KV cache");
  }
  size_t i = 0;
  for (KvCache& kv : caches_) {
    for (Tensor* t : {kv.k, kv.v}) t->data = static_cast<char*>(cache_buffer_->base()) + offsets[i++];
  }
  cache_buffer_->clear(0);
}

std::span<const float> LlamaSession::eval(std::span<const int32_t> tokens, bool all_logits) {
  const LlamaConfig& c = model_.config();
  const auto n_tokens = int64_t(tokens.size());
  if (n_tokens == 0) throw Error("llama session: eval needs at least one token");
  if (n_past_ + n_tokens > n_ctx_) {
    throw Error("llama session: context full: " + std::to_string(n_past_) + " + " + std::to_string(n_tokens) +
                " tokens exceed n_ctx " + std::to_string(n_ctx_));
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.n_vocab) {
      throw Error("llama session: token " + std::to_string(i) + " has id " + std::to_string(tokens[i]) +
                  ", outside the vocabulary [0, " + std::to_string(c.n_vocab) + ")");
    }
  }

  const int64_t n_kv = std::min(round_up(n_past_ + n_tokens, kKvPadding), n_ctx_);
  if (reuse_graphs_ && step_ && step_->n_tokens == n_tokens && step_->n_kv == n_kv && step_->all_logits == all_logits) {
    ++reused_graphs_;
  } else {
    build_step(n_tokens, n_kv, all_logits);
  }
  tensor_set(*step_->ids, tokens.data(), 0, tokens.size_bytes());
  fill_step_inputs(step_->inputs, n_past_);
  backend_.compute(step_->graph);
  backend_.synchronize();
  n_past_ += n_tokens;

  // The logits live in the allocator's buffer, which the next step overwrites: keep a copy.
  logits_.resize(size_t(step_->logits->nelements()));
  tensor_get(*step_->logits, logits_.data(), 0, logits_.size() * sizeof(float));
  return logits_;
}

LlamaStep build_llama_step(Context& ctx, const LlamaModel& model, const BlockConfig& block,
                           std::span<const KvCache> caches, int64_t n_tokens, int64_t n_kv, bool all_logits) {
  const LlamaConfig& c = model.config();
  if (int64_t(caches.size()) != c.n_layer) {
    throw Error("llama step: " + std::to_string(caches.size()) + " KV caches for " + std::to_string(c.n_layer) +
                " layers");
  }
  LlamaStep step;
  step.inputs = make_step_inputs(ctx, block, n_tokens, n_kv);
  step.ids = ctx.new_tensor(DType::I32, {n_tokens});
  step.ids->set_name("token_ids");
  step.ids->flags |= kFlagInput;
  Tensor* x = get_rows(ctx, model.token_embd(), step.ids);
  StepInputs layer_in = step.inputs;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    layer_in.x = x;
    x = build_block(ctx, block, model.layers()[size_t(l)], caches[size_t(l)], layer_in, n_kv);
  }
  if (!all_logits && n_tokens > 1) x = view_2d(ctx, x, c.n_embd, 1, x->nb[1], size_t(n_tokens - 1) * x->nb[1]);
  x = mul(ctx, rms_norm(ctx, x, c.rms_eps), model.output_norm());
  step.logits = mul_mat(ctx, model.output(), x);  // [n_vocab, n_tokens or 1]
  step.logits->set_name("logits");
  return step;
}

void LlamaSession::build_step(int64_t n_tokens, int64_t n_kv, bool all_logits) {
  step_.reset();  // its tensors point into the allocator's buffer, which is about to be re-planned
  auto s = std::make_unique<StepGraph>();
  Context& ctx = s->ctx;
  s->n_tokens = n_tokens;
  s->n_kv = n_kv;
  s->all_logits = all_logits;
  const LlamaStep step = build_llama_step(ctx, model_, block_, caches_, n_tokens, n_kv, all_logits);
  s->inputs = step.inputs;
  s->ids = step.ids;
  s->logits = step.logits;
  s->graph = Graph::build(s->logits);
  allocator_.allocate(s->graph, backend_);
  step_ = std::move(s);
}

void LlamaSession::truncate(int64_t n_past) {
  if (n_past < 0 || n_past > n_past_) {
    throw Error("llama session: cannot truncate to " + std::to_string(n_past) + " positions, the sequence has " +
                std::to_string(n_past_));
  }
  n_past_ = n_past;
}

GenerationResult LlamaSession::generate(std::span<const int32_t> prompt, int64_t n_tokens,
                                        const std::function<void(int64_t, const GenerationResult&)>& on_token,
                                        std::span<const int32_t> stop_tokens, const SamplerOptions& sampling) {
  Sampler sampler(sampling);
  if (prompt.empty()) throw Error("llama session: the prompt needs at least one token");
  if (n_tokens < 0) throw Error("llama session: negative token count");
  // The last generated token is not evaluated, so prompt + n_tokens - 1 positions are needed.
  if (n_past_ + int64_t(prompt.size()) + std::max<int64_t>(n_tokens - 1, 0) > n_ctx_) {
    throw Error("llama session: " + std::to_string(prompt.size()) + " prompt tokens + " + std::to_string(n_tokens) +
                " generated tokens do not fit in n_ctx " + std::to_string(n_ctx_));
  }
  GenerationResult result;
  if (n_tokens == 0) return result;
  result.prefill_tokens = int64_t(prompt.size());
  auto start = std::chrono::steady_clock::now();
  int32_t next = sampler.next(eval(prompt));
  result.prefill_seconds = seconds_since(start);
  result.tokens.push_back(next);
  const auto stops = [&](int32_t token) {
    return std::find(stop_tokens.begin(), stop_tokens.end(), token) != stop_tokens.end();
  };
  result.stopped = stops(next);
  if (on_token) on_token(1, result);
  start = std::chrono::steady_clock::now();
  while (!result.stopped && int64_t(result.tokens.size()) < n_tokens) {
    next = sampler.next(eval(std::span<const int32_t>(&next, 1)));
    result.tokens.push_back(next);
    result.stopped = stops(next);
    ++result.decode_steps;
    result.decode_seconds = seconds_since(start);
    if (on_token) on_token(int64_t(result.tokens.size()), result);
  }
  return result;
}

}  // namespace tg::model
