// The token sampler (sampler.h): greedy, the cuts of llama.cpp's chain, the draw's frequencies
// against the softmax, seeds, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "common/expect_error.h"
#include "tilegraph/model/sampler.h"

namespace tg::model {
namespace {

using test::expect_error;

SamplerOptions sampling(double temperature, int32_t top_k = 0, double top_p = 1.0, double min_p = 0.0,
                        uint64_t seed = 1) {
  return {temperature, top_k, top_p, min_p, seed};
}

// The share of each token over `draws` draws.
std::map<int32_t, double> frequencies(const SamplerOptions& options, const std::vector<float>& logits, int draws) {
  Sampler sampler(options);
  std::map<int32_t, double> share;
  for (int i = 0; i < draws; ++i) share[sampler.next(logits)] += 1.0 / draws;
  return share;
}

// Probabilities 0.5, 0.3 and 0.2 for tokens 1, 3 and 0; token 2 is impossible.
const std::vector<float> kLogits = {std::log(0.2f), std::log(0.5f), -INFINITY, std::log(0.3f)};
// 20,000 draws of a fixed seed: a share's standard deviation is at most 0.0036, so 0.015 is over
// four of them (and the seed makes the test deterministic either way).
constexpr int kDraws = 20000;
constexpr double kShareError = 0.015;

TEST(Sampler, TemperatureZeroIsGreedyFirstOnTies) {
  Sampler sampler;
  EXPECT_TRUE(sampler.options().greedy());
  EXPECT_EQ(sampler.next(std::vector<float>{0.5f, 2.0f, -1.0f, 2.0f}), 1);
  EXPECT_EQ(greedy_token(std::vector<float>{0.5f, 2.0f, -1.0f, 2.0f}), 1);
  EXPECT_EQ(sampler.next(kLogits), 1);
}

TEST(Sampler, DrawsInProportionToTheSoftmax) {
  const std::map<int32_t, double> share = frequencies(sampling(1.0), kLogits, kDraws);
  EXPECT_NEAR(share.at(1), 0.5, kShareError);
  EXPECT_NEAR(share.at(3), 0.3, kShareError);
  EXPECT_NEAR(share.at(0), 0.2, kShareError);
  EXPECT_EQ(share.count(2), 0u) << "a -inf logit is never drawn";
}

TEST(Sampler, TemperatureSharpensAndFlattens) {
  // Temperature 0.5 squares the probabilities: 0.25, 0.09, 0.04 over 0.38.
  std::map<int32_t, double> share = frequencies(sampling(0.5), kLogits, kDraws);
  EXPECT_NEAR(share.at(1), 0.25 / 0.38, kShareError);
  EXPECT_NEAR(share.at(3), 0.09 / 0.38, kShareError);
  EXPECT_NEAR(share.at(0), 0.04 / 0.38, kShareError);
  // A very high temperature makes the three equally likely.
  share = frequencies(sampling(1e6), kLogits, kDraws);
  for (int32_t id : {0, 1, 3}) EXPECT_NEAR(share.at(id), 1.0 / 3, kShareError) << id;
}

TEST(Sampler, TopKKeepsTheMostLikely) {
  std::map<int32_t, double> share = frequencies(sampling(1.0, 2), kLogits, kDraws);
  EXPECT_EQ(share.count(0), 0u);
  EXPECT_NEAR(share.at(1), 0.5 / 0.8, kShareError);
  share = frequencies(sampling(5.0, 1, 1.0, 0.0, 99), kLogits, 200);
  EXPECT_EQ(share.size(), 1u);
  EXPECT_EQ(share.begin()->first, 1) << "top-k 1 is greedy at any temperature";
}

TEST(Sampler, TopPKeepsTheFewestThatReachIt) {
  // 0.5 < 0.6, 0.5 + 0.3 >= 0.6: tokens 1 and 3.
  std::map<int32_t, double> share = frequencies(sampling(1.0, 0, 0.6), kLogits, kDraws);
  EXPECT_EQ(share.count(0), 0u);
  EXPECT_NEAR(share.at(1), 0.5 / 0.8, kShareError);
  // 0.45: the most likely alone.
  share = frequencies(sampling(1.0, 0, 0.45), kLogits, 200);
  EXPECT_EQ(share.size(), 1u);
  EXPECT_EQ(share.begin()->first, 1);
}

TEST(Sampler, MinPKeepsThoseNearTheMostLikely) {
  // min-p 0.5: at least 0.25 — tokens 1 (0.5) and 3 (0.3).
  std::map<int32_t, double> share = frequencies(sampling(1.0, 0, 1.0, 0.5), kLogits, kDraws);
  EXPECT_EQ(share.count(0), 0u);
  EXPECT_NEAR(share.at(3), 0.3 / 0.8, kShareError);
  share = frequencies(sampling(1.0, 0, 1.0, 1.0), kLogits, 200);
  EXPECT_EQ(share.size(), 1u) << "min-p 1 keeps only the most likely";
}

TEST(Sampler, ASeedRepeatsItsTokens) {
  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = float(std::sin(double(i))) * 3.0f;
  auto tokens = [&](uint64_t seed) {
    Sampler sampler(sampling(1.0, 0, 1.0, 0.0, seed));
    std::vector<int32_t> out;
    for (int i = 0; i < 64; ++i) out.push_back(sampler.next(logits));
    return out;
  };
  EXPECT_EQ(tokens(7), tokens(7));
  EXPECT_NE(tokens(7), tokens(8));
}

TEST(Sampler, RefusesBadOptionsAndLogits) {
  expect_error([] { Sampler(sampling(-0.1)); }, "temperature -0.1");
  expect_error([] { Sampler(sampling(INFINITY)); }, "temperature inf");
  expect_error([] { Sampler(sampling(1.0, -1)); }, "top-k -1");
  expect_error([] { Sampler(sampling(1.0, 0, 0.0)); }, "top-p 0 (expected in (0, 1]");
  expect_error([] { Sampler(sampling(1.0, 0, 1.5)); }, "top-p 1.5");
  expect_error([] { Sampler(sampling(1.0, 0, 1.0, -0.5)); }, "min-p -0.5");
  expect_error([] { Sampler(sampling(1.0, 0, 1.0, NAN)); }, "min-p nan");
  Sampler sampler(sampling(1.0));
  expect_error([&] { sampler.next({}); }, "sampler: no logits");
  expect_error([&] { sampler.next(std::vector<float>{0.0f, NAN}); }, "logit 1 is NaN");
  expect_error([&] { sampler.next(std::vector<float>{-INFINITY, -INFINITY}); }, "every logit is -inf");
  expect_error([] { greedy_token({}); }, "no logits");
}

TEST(Sampler, AnInfiniteLogitOutweighsTheRest) {
  Sampler sampler(sampling(1.0));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(sampler.next(std::vector<float>{1.0f, INFINITY, 3.0f, INFINITY}), 1);
}

TEST(Sampler, LargeVocabulariesWithEveryCutOffOrTopPAlone) {
  // With no cut the draw runs over the whole vocabulary unsorted; with top-p alone it sorts only
  // until the mass is reached. The upper half of the vocabulary holds e/(1+e) = 0.731 of it.
  std::vector<float> logits(4000, 0.0f);
  for (size_t i = logits.size() / 2; i < logits.size(); ++i) logits[i] = 1.0f;
  constexpr int kFewerDraws = 2000;  // a share's deviation is at most 0.0112
  for (double top_p : {1.0, 0.99}) {
    Sampler sampler(sampling(1.0, 0, top_p));
    int upper = 0;
    for (int i = 0; i < kFewerDraws; ++i) upper += sampler.next(logits) >= 2000 ? 1 : 0;
    EXPECT_NEAR(double(upper) / kFewerDraws, std::exp(1.0) / (1.0 + std::exp(1.0)), 0.05) << top_p;
  }
  // top-p 0.5 keeps the most likely tokens up to half the mass: the upper half only.
  Sampler sampler(sampling(1.0, 0, 0.5));
  for (int i = 0; i < 200; ++i) EXPECT_GE(sampler.next(logits), 2000);
}

TEST(Sampler, DescribesItself) {
  EXPECT_EQ(SamplerOptions{}.describe(), "greedy");
  EXPECT_EQ(sampling(0.8, 40, 0.95, 0.05, 7).describe(), "temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, seed 7");
}

}  // namespace
}  // namespace tg::model
