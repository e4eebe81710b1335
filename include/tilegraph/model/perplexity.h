#pragma once
// Perplexity of a model over a text, as llama.cpp's perplexity tool measures it, so the two can
// be compared: the tokens are cut into chunks of n_ctx; each chunk is evaluated from an empty
// cache (its first token replaced by the beginning-of-sequence token when the vocabulary adds
// one), and only the second half of each chunk is scored, the first half serving as context.
// PPL = exp(mean negative log-likelihood of the scored tokens).
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "tilegraph/model/llama_session.h"

namespace tg::model {

struct PerplexityResult {
  std::vector<double> running_ppl;  // the estimate after each chunk
  double ppl = 0;
  double ppl_error = 0;  // standard error of the estimate
  int64_t chunks = 0;
  int64_t scored_tokens = 0;
  double seconds = 0;  // evaluating the chunks
};

// At most `max_chunks` chunks (0: all that fit) of `n_ctx` tokens, which the session's n_ctx
// must hold; bos < 0: no token is replaced. `on_chunk(done, result)` runs after each chunk.
// Throws tg::Error for n_ctx below 4, or fewer tokens than one chunk.
PerplexityResult perplexity(LlamaSession& session, std::span<const int32_t> tokens, int64_t n_ctx, int32_t bos,
                            int64_t max_chunks = 0,
                            const std::function<void(int64_t, const PerplexityResult&)>& on_chunk = {});

}  // namespace tg::model
