#pragma once
// What the model suite times of a llama model, for tilegraph (model::LlamaSession, the loop
// `tilegraph run` uses); bench/peers/llama_cpp_peer.cpp does the same steps with llama.cpp.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tilegraph/backends.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/runtime/graph_mode.h"

namespace tg::bench {

inline constexpr int64_t kPrompt = 32;  // decode positions kPrompt .. 2 * kPrompt - 1

inline std::unique_ptr<Backend> cpu_backend(int threads, bool graph_mode) {
  auto backend = make_backend("cpu", {.num_threads = threads});
  GraphModeConfig config = backend->graph_mode()->config();
  config.enabled = graph_mode;
  backend->graph_mode()->set_config(config);
  return backend;
}

// Prompt ids (1 + 37 i) mod n_vocab, the same for every side of a comparison.
inline std::vector<int32_t> prompt_ids(int64_t tokens, int64_t n_vocab) {
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < tokens; ++i) ids.push_back(int32_t((1 + 37 * i) % n_vocab));
  return ids;
}

// A session decoding forever at positions kPrompt .. 2 * kPrompt - 1: a step is one eval of one
// token and the greedy pick, and the session is cut back to kPrompt when full, so every step
// attends over at most 2 * kPrompt rows.
class Decoder {
 public:
  Decoder(const model::LlamaModel& model, Backend& backend, bool reuse_graphs) : session_(model, backend, 2 * kPrompt) {
    session_.set_reuse_graphs(reuse_graphs);
    next_ = model::greedy_token(session_.eval(prompt_ids(kPrompt, model.config().n_vocab)));
  }
  void step() {
    if (session_.n_past() == 2 * kPrompt) session_.truncate(kPrompt);
    next_ = model::greedy_token(session_.eval(std::span<const int32_t>(&next_, 1)));
  }
  int32_t last_token() const { return next_; }
  size_t nodes() const { return session_.last_graph_nodes(); }

 private:
  model::LlamaSession session_;
  int32_t next_;
};

// A prompt of `tokens` evaluated from an empty cache, eagerly, as `tilegraph run` does (graph
// mode leaves prefill eager unless TG_PREFILL_USE_GRAPH).
class Prefiller {
 public:
  Prefiller(const model::LlamaModel& model, Backend& backend, int64_t tokens)
      : session_(model, backend, tokens), prompt_(prompt_ids(tokens, model.config().n_vocab)) {}
  void run() {
    session_.truncate(0);
    session_.eval(prompt_);
  }

 private:
  model::LlamaSession session_;
  std::vector<int32_t> prompt_;
};

}  // namespace tg::bench
