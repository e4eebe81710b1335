#include "tilegraph/model/perplexity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "tilegraph/core/error.h"

namespace tg::model {

namespace {

// -log softmax(logits)[token], in double.
double negative_log_likelihood(std::span<const float> logits, int32_t token) {
  const double top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(double(l) - top);
  return std::log(sum) + top - double(logits[size_t(token)]);
}

}  // namespace

PerplexityResult perplexity(LlamaSession& session, std::span<const int32_t> tokens, int64_t n_ctx, int32_t bos,
                            int64_t max_chunks, const std::function<void(int64_t, const PerplexityResult&)>& on_chunk) {
  if (n_ctx < 4) throw Error("perplexity: chunks of " + std::to_string(n_ctx) + " tokens are too short (at least 4)");
  if (n_ctx > session.n_ctx()) {
    throw Error("perplexity: chunks of " + std::to_string(n_ctx) + " tokens do not fit the session's n_ctx " +
                std::to_string(session.n_ctx()));
  }
  int64_t chunks = int64_t(tokens.size()) / n_ctx;
  if (chunks == 0) {
    throw Error("perplexity: the text has " + std::to_string(tokens.size()) + " tokens, fewer than one chunk of " +
                std::to_string(n_ctx));
  }
  if (max_chunks > 0) chunks = std::min(chunks, max_chunks);
  const int64_t first = n_ctx / 2;  // positions before it are context only
  PerplexityResult result;
  double nll = 0, nll2 = 0;
  std::vector<int32_t> chunk(static_cast<size_t>(n_ctx));
  const auto start = std::chrono::steady_clock::now();
  for (int64_t c = 0; c < chunks; ++c) {
    std::copy_n(tokens.begin() + c * n_ctx, n_ctx, chunk.begin());
    if (bos >= 0) chunk[0] = bos;
    session.truncate(0);
    const std::span<const float> logits = session.eval(chunk, true);
    const size_t n_vocab = logits.size() / size_t(n_ctx);
    // The logits at position i predict the token at i + 1.
    for (int64_t i = first; i + 1 < n_ctx; ++i) {
      const int32_t next = tokens[size_t(c * n_ctx + i + 1)];
      const double v = negative_log_likelihood(logits.subspan(size_t(i) * n_vocab, n_vocab), next);
      nll += v;
      nll2 += v * v;
      ++result.scored_tokens;
    }
    ++result.chunks;
    const double mean = nll / double(result.scored_tokens);
    result.ppl = std::exp(mean);
    result.running_ppl.push_back(result.ppl);
    const double variance = nll2 / double(result.scored_tokens) - mean * mean;
    result.ppl_error = result.scored_tokens > 1 && variance > 0
                           ? result.ppl * std::sqrt(variance / double(result.scored_tokens - 1))
                           : 0.0;
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (on_chunk) on_chunk(c + 1, result);
  }
  return result;
}

}  // namespace tg::model
