#pragma once
// A decode session of a llama model on a backend: owns the KV caches and a graph allocator, and
// runs one graph per step — token embedding (GET_ROWS), the blocks, the final RMSNorm and the
// output head. Attention spans the cache rounded up to kKvPadding rows (the mask hides the rest),
// so consecutive decode steps have graphs of identical structure at identical addresses, which
// graph mode captures once and replays. A step of the same shape as the previous one (token
// count, n_kv, logits wanted) reuses that step's graph and allocation and only refills the
// inputs, as llama.cpp's graph reuse does: building and planning a graph costs more than
// computing a small model's step. set_reuse_graphs(false) builds every step afresh.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "tilegraph/core/context.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/sampler.h"
#include "tilegraph/model/transformer_block.h"
#include "tilegraph/runtime/backend.h"
#include "tilegraph/runtime/graph_allocator.h"

namespace tg::model {

inline constexpr int64_t kKvPadding = 32;

// One step's graph: the inputs the caller fills (token ids, positions, cache rows, mask) and
// the logits it computes.
struct LlamaStep {
  StepInputs inputs;
  Tensor* ids = nullptr;     // i32 [n_tokens]
  Tensor* logits = nullptr;  // f32 [n_vocab, n_tokens], or [n_vocab, 1] for the last token only
};
// Builds in `ctx` the graph of a step of `n_tokens` tokens attending over the first n_kv rows of
// `caches` (one per layer): token embedding (GET_ROWS), the blocks, the final RMSNorm and the
// output head, for every token with `all_logits`, else for the last one. The session builds its
// steps with it; the TX8 compiler imports the same graphs.
LlamaStep build_llama_step(Context& ctx, const LlamaModel& model, const BlockConfig& block,
                           std::span<const KvCache> caches, int64_t n_tokens, int64_t n_kv, bool all_logits);

struct GenerationResult {
  std::vector<int32_t> tokens;  // the generated ids (the prompt not included)
  int64_t prefill_tokens = 0;
  double prefill_seconds = 0;  // the prompt's one step: build, allocate, compute
  int64_t decode_steps = 0;    // one per generated token after the first
  double decode_seconds = 0;
  bool stopped = false;  // the last token is one of the stop tokens
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

  // Decoding: evaluates the prompt in one step, then picks the next token from the logits with
  // a Sampler of `sampling` (greedy by default) and evaluates it, `n_tokens` times, or until it
  // generates one of `stop_tokens` (e.g. the vocabulary's end_of_generation()), which ends the
  // result. `on_token(done, result)` runs after each generated token.
  GenerationResult generate(std::span<const int32_t> prompt, int64_t n_tokens,
                            const std::function<void(int64_t, const GenerationResult&)>& on_token = {},
                            std::span<const int32_t> stop_tokens = {}, const SamplerOptions& sampling = {});

  int64_t n_past() const { return n_past_; }
  int64_t n_ctx() const { return n_ctx_; }
  // Forgets positions [n_past, n_past()): the next eval continues at n_past, overwriting their
  // cache rows (0 starts a new sequence).
  void truncate(int64_t n_past);
  // Nodes of the last step's graph.
  size_t last_graph_nodes() const { return step_ ? step_->graph.size() : 0; }
  void set_reuse_graphs(bool reuse) { reuse_graphs_ = reuse; }
  // Steps that reused the previous step's graph.
  int64_t reused_graphs() const { return reused_graphs_; }

 private:
  // The last step's graph, its inputs and its shape.
  struct StepGraph {
    Context ctx{ContextOptions{.no_alloc = true}};
    Graph graph;
    StepInputs inputs;
    Tensor* ids = nullptr;
    Tensor* logits = nullptr;
    int64_t n_tokens = 0, n_kv = 0;
    bool all_logits = false;
  };
  void build_step(int64_t n_tokens, int64_t n_kv, bool all_logits);

  const LlamaModel& model_;
  Backend& backend_;
  int64_t n_ctx_;
  BlockConfig block_;
  Context cache_ctx_{ContextOptions{.no_alloc = true}};
  std::unique_ptr<Buffer> cache_buffer_;  // the KV caches, in the backend's memory
  std::vector<KvCache> caches_;
  GraphAllocator allocator_;
  std::unique_ptr<StepGraph> step_;
  bool reuse_graphs_ = true;
  int64_t reused_graphs_ = 0;
  std::vector<float> logits_;
  int64_t n_past_ = 0;
};

}  // namespace tg::model
