#pragma once
// Choosing the next token from a step's logits. Greedy takes the largest logit. Sampling follows
// llama.cpp's default chain: keep the top_k largest logits, then the fewest of those whose
// probabilities reach top_p together, then those at least min_p times as likely as the most
// likely one (both cuts on the softmax of the logits as they are), and draw from the softmax of
// the kept logits divided by the temperature. The draws come from std::mt19937_64 (fully
// specified by the standard) turned into [0, 1) by explicit arithmetic, so a seed gives the same
// tokens on every platform, and in graph mode and eager execution, whose logits are identical.
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace tg::model {

struct SamplerOptions {
  double temperature = 0.0;  // 0: greedy, and the cuts below play no part
  int32_t top_k = 40;        // 0: no cut
  double top_p = 0.95;       // 1: no cut
  double min_p = 0.05;       // 0: no cut
  uint64_t seed = 0;

  bool greedy() const { return temperature == 0.0; }
  // Throws tg::Error naming the first option out of range: temperature negative or not finite,
  // top_k negative, top_p outside (0, 1], min_p outside [0, 1].
  void validate() const;
  // "greedy", or "temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, seed 7".
  std::string describe() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplerOptions& options = {});

  // The next token: an index into `logits`. Throws tg::Error for empty logits, and when sampling
  // for a NaN logit or logits that are all -inf.
  int32_t next(std::span<const float> logits);

  const SamplerOptions& options() const { return options_; }

 private:
  struct Candidate {
    float logit;
    int32_t id;
    double weight;  // exp(logit - the largest): p / p of the most likely, then the draw's weight
  };

  SamplerOptions options_;
  std::mt19937_64 rng_;
  std::vector<Candidate> candidates_;  // kept between steps: a step allocates nothing
};

// The index of the largest logit (the first one on ties).
int32_t greedy_token(std::span<const float> logits);

}  // namespace tg::model
