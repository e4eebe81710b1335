#pragma once
// A decode session of a llama model on a backend: owns the KV caches and a graph allocator, and
// builds one graph per step — token embedding (GET_ROWS), the blocks, the final RMSNorm and the
// output head. Attention spans the cache rounded up to kKvPadding rows (the mask hides the rest),
// so consecutive decode steps build graphs of identical structure at identical addresses, which
// graph mode captures once and replays.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "tilegraph/core/context.h"
#include "tilegraph/runtime/backend.h"
#include "tilegraph/runtime/graph_allocator.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/transformer_block.h"

namespace tg::model {

inline constexpr int64_t kKvPadding = 32;

struct GenerationResult {
  std::vector<int32_t> tokens;  // the generated ids (the prompt not included)
  int64_t prefill_tokens = 0;
  double prefill_seconds = 0;   // the prompt's one step: build, allocate, compute
  int64_t decode_steps = 0;     // one per generated token after the first
  double decode_seconds = 0;
};

class LlamaSession {
 public:
  // `n_ctx` cache rows (at most the model's context length). The model and backend must outlive
  // the session.
  LlamaSession(const LlamaModel& model, Backend& backend, int64_t n_ctx, DType cache_type = DType::F16);

  // Runs `tokens` at positions [n_past, n_past + tokens.size()) and appends them to the cache.
  // Returns the logits of the last token ([n_vocab]), or with `all_logits` those of every token
  // ([n_vocab] per token, in order). The span is valid until the next eval.
  std::span<const float> eval(std::span<const int32_t> tokens, bool all_logits = false);

  // Greedy decoding: evaluates the prompt in one step, then takes the argmax of the logits as
  // the next token, `n_tokens` times. `on_token(done, result)` runs after each generated token.
  GenerationResult generate(std::span<const int32_t> prompt, int64_t n_tokens,
                            const std::function<void(int64_t, const GenerationResult&)>& on_token = {});

  int64_t n_past() const { return n_past_; }
  int64_t n_ctx() const { return n_ctx_; }
  // Forgets the sequence; the cache rows are overwritten by the next steps.
  void reset() { n_past_ = 0; }
  // Nodes of the last step's graph.
  size_t last_graph_nodes() const { return last_graph_nodes_; }

 private:
  const LlamaModel& model_;
  Backend& backend_;
  int64_t n_ctx_;
  BlockConfig block_;
  Context cache_ctx_;
  std::vector<KvCache> caches_;
  GraphAllocator allocator_;
  std::vector<float> logits_;
  int64_t n_past_ = 0;
  size_t last_graph_nodes_ = 0;
};

// Greedy sampling: the index of the largest logit (the first one on ties).
int32_t greedy_token(std::span<const float> logits);

}  // namespace tg::model
