// Perplexity (perplexity.h) against the negative log-likelihoods computed here from logits of
// token-by-token decoding (the KV-cache path, not the chunk's one prefill), and its chunking,
// BOS replacement and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <vector>

#include "common/expect_error.h"
#include "tilegraph/backends.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/perplexity.h"

namespace tg::model {
namespace {

using test::expect_error;

std::vector<int32_t> text_ids(int n, int64_t n_vocab) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(int32_t((3 + 17 * i + i * i) % n_vocab));
  return ids;
}

// The NLL of chunk c's scored tokens, from logits of one token at a time.
std::vector<double> stepwise_nll(const LlamaModel& model, Backend& b, std::span<const int32_t> tokens, int64_t n_ctx,
                                 int64_t c, int32_t bos) {
  LlamaSession session(model, b, n_ctx);
  std::vector<double> nll;
  for (int64_t i = 0; i + 1 < n_ctx; ++i) {
    const int32_t token = i == 0 && bos >= 0 ? bos : tokens[size_t(c * n_ctx + i)];
    const std::span<const float> logits = session.eval(std::span<const int32_t>(&token, 1));
    if (i < n_ctx / 2) continue;
    double sum = 0;
    for (float l : logits) sum += std::exp(double(l));
    nll.push_back(std::log(sum) - double(logits[size_t(tokens[size_t(c * n_ctx + i + 1)])]));
  }
  return nll;
}

TEST(Perplexity, IsTheMeanLikelihoodOfEachChunksSecondHalf) {
  const LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::F32, 5);
  auto cpu = make_backend("cpu");
  const std::vector<int32_t> tokens = text_ids(70, model.config().n_vocab);  // 4 chunks of 16, 6 left over
  constexpr int64_t kCtx = 16;
  LlamaSession session(model, *cpu, 32);
  for (int32_t bos : {-1, 1}) {
    SCOPED_TRACE("bos " + std::to_string(bos));
    const PerplexityResult r = perplexity(session, tokens, kCtx, bos);
    EXPECT_EQ(r.chunks, 4);
    EXPECT_EQ(r.scored_tokens, 4 * (kCtx - kCtx / 2 - 1));
    ASSERT_EQ(r.running_ppl.size(), 4u);
    EXPECT_EQ(r.running_ppl.back(), r.ppl);
    double sum = 0, sum2 = 0;
    int64_t n = 0;
    for (int64_t c = 0; c < 4; ++c) {
      for (double v : stepwise_nll(model, *cpu, tokens, kCtx, c, bos)) {
        sum += v;
        sum2 += v * v;
        ++n;
      }
      if (c == 0) {
        EXPECT_NEAR(r.running_ppl[0], std::exp(sum / double(n)), 1e-6 * r.running_ppl[0]);
      }
    }
    EXPECT_NEAR(r.ppl, std::exp(sum / double(n)), 1e-6 * r.ppl);
    const double mean = sum / double(n);
    EXPECT_NEAR(r.ppl_error, r.ppl * std::sqrt((sum2 / double(n) - mean * mean) / double(n - 1)), 1e-6 * r.ppl);
  }
  EXPECT_NE(perplexity(session, tokens, kCtx, -1).ppl, perplexity(session, tokens, kCtx, 1).ppl)
      << "the first token of every chunk is replaced by the BOS token";
  EXPECT_EQ(perplexity(session, tokens, kCtx, -1, 2).chunks, 2) << "max_chunks";
}

TEST(Perplexity, RefusesTooShortChunksAndTexts) {
  const LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::F32, 5);
  auto cpu = make_backend("cpu");
  LlamaSession session(model, *cpu, 32);
  const std::vector<int32_t> tokens = text_ids(40, model.config().n_vocab);
  expect_error([&] { perplexity(session, tokens, 3, -1); },
               "perplexity: chunks of 3 tokens are too short (at least 4)");
  expect_error([&] { perplexity(session, tokens, 64, -1); }, "chunks of 64 tokens do not fit the session's n_ctx 32");
  expect_error([&] { perplexity(session, std::span(tokens).first(10), 16, -1); },
               "the text has 10 tokens, fewer than one chunk of 16");
}

}  // namespace
}  // namespace tg::model
