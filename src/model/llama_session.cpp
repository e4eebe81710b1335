#include "tilegraph/model/llama_session.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/core/ops.h"

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
  for (int64_t l = 0; l < c.n_layer; ++l) caches_.push_back(make_kv_cache(cache_ctx_, block_));
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

  // The graph of this step.
  Context ctx({.no_alloc = true});
  const int64_t n_kv = std::min(round_up(n_past_ + n_tokens, kKvPadding), n_ctx_);
  StepInputs in = make_step_inputs(ctx, block_, n_tokens, n_kv);
  Tensor* ids = ctx.new_tensor(DType::I32, {n_tokens});
  ids->set_name("token_ids");
  ids->flags |= kFlagInput;
  Tensor* x = get_rows(ctx, model_.token_embd(), ids);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    in.x = x;
    x = build_block(ctx, block_, model_.layers()[size_t(l)], caches_[size_t(l)], in, n_kv);
  }
  const int64_t n_out = all_logits ? n_tokens : 1;
  if (n_out != n_tokens) x = view_2d(ctx, x, c.n_embd, 1, x->nb[1], size_t(n_tokens - 1) * x->nb[1]);
  x = mul(ctx, rms_norm(ctx, x, c.rms_eps), model_.output_norm());
  Tensor* logits = mul_mat(ctx, model_.output(), x);  // [n_vocab, n_out]
  logits->set_name("logits");
  const Graph graph = Graph::build(logits);
  last_graph_nodes_ = graph.size();

  allocator_.allocate(graph, backend_);
  std::memcpy(ids->data, tokens.data(), tokens.size_bytes());
  fill_step_inputs(in, n_past_);
  backend_.compute(graph);
  backend_.synchronize();
  n_past_ += n_tokens;

  // The allocator's buffer is reused by the next step: keep a copy.
  const auto* out = static_cast<const float*>(logits->data);
  logits_.assign(out, out + c.n_vocab * n_out);
  return logits_;
}

GenerationResult LlamaSession::generate(std::span<const int32_t> prompt, int64_t n_tokens,
                                        const std::function<void(int64_t, const GenerationResult&)>& on_token) {
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
  int32_t next = greedy_token(eval(prompt));
  result.prefill_seconds = seconds_since(start);
  result.tokens.push_back(next);
  if (on_token) on_token(1, result);
  start = std::chrono::steady_clock::now();
  while (int64_t(result.tokens.size()) < n_tokens) {
    next = greedy_token(eval(std::span<const int32_t>(&next, 1)));
    result.tokens.push_back(next);
    ++result.decode_steps;
    result.decode_seconds = seconds_since(start);
    if (on_token) on_token(int64_t(result.tokens.size()), result);
  }
  return result;
}

int32_t greedy_token(std::span<const float> logits) {
  if (logits.empty()) throw Error("greedy_token: no logits");
  return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

}  // namespace tg::model
