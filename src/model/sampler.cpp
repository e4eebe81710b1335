#include "tilegraph/model/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tilegraph/core/error.h"

namespace tg::model {

namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

void SamplerOptions::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0) {
    throw Error("sampler: temperature " + number(temperature) + " (expected a finite value >= 0; 0 is greedy)");
  }
  if (top_k < 0) throw Error("sampler: top-k " + std::to_string(top_k) + " (expected >= 0; 0 keeps every token)");
  if (!(top_p > 0.0 && top_p <= 1.0))
    throw Error("sampler: top-p " + number(top_p) + " (expected in (0, 1]; 1 keeps every token)");
  if (!(min_p >= 0.0 && min_p <= 1.0))
    throw Error("sampler: min-p " + number(min_p) + " (expected in [0, 1]; 0 keeps every token)");
}

std::string SamplerOptions::describe() const {
  if (greedy()) return "greedy";
  return "temperature " + number(temperature) + ", top-k " + std::to_string(top_k) + ", top-p " + number(top_p) +
         ", min-p " + number(min_p) + ", seed " + std::to_string(seed);
}

Sampler::Sampler(const SamplerOptions& options) : options_(options), rng_(options.seed) { options_.validate(); }

int32_t Sampler::next(std::span<const float> logits) {
  if (options_.greedy()) return greedy_token(logits);
  if (logits.empty()) throw Error("sampler: no logits");
  candidates_.clear();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) throw Error("sampler: logit " + std::to_string(i) + " is NaN");
    if (logits[i] != -INFINITY) candidates_.push_back({logits[i], int32_t(i), 0.0});
  }
  if (candidates_.empty()) throw Error("sampler: every logit is -inf");

  // Largest first, ties by id: a total order, so the kept set never depends on the algorithms.
  const auto larger = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  const double top =
      std::max_element(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
        return a.logit < b.logit;
      })->logit;
  if (top == INFINITY) return std::min_element(candidates_.begin(), candidates_.end(), larger)->id;  // outweighs all
  // The candidates stay in id order unless top-k sorts its few. Either order is a total one, so
  // a seed draws the same token whatever the standard library's algorithms do.
  size_t kept = candidates_.size();
  bool sorted = false;
  if (options_.top_k > 0 && size_t(options_.top_k) < kept) {
    kept = size_t(options_.top_k);
    std::nth_element(candidates_.begin(), candidates_.begin() + std::ptrdiff_t(kept - 1), candidates_.end(), larger);
    std::sort(candidates_.begin(), candidates_.begin() + std::ptrdiff_t(kept), larger);
    sorted = true;
  }
  // top-p and min-p on the softmax of the kept logits as they are.
  double total = 0;
  for (size_t i = 0; i < kept; ++i) total += candidates_[i].weight = std::exp(double(candidates_[i].logit) - top);
  if (options_.min_p > 0) {
    size_t survivors = 0;
    for (size_t i = 0; i < kept; ++i) {
      if (candidates_[i].weight >= options_.min_p) candidates_[survivors++] = candidates_[i];
    }
    kept = survivors;  // the top survives: its weight is 1
  }
  if (options_.top_p < 1.0) {
    // The fewest most likely tokens whose mass reaches top_p, sorting only as far as needed.
    double mass = 0;
    size_t done = 0;
    for (size_t chunk = 64; done < kept; chunk *= 4) {
      const size_t end = std::min(kept, done + chunk);
      if (!sorted) {
        std::partial_sort(candidates_.begin() + std::ptrdiff_t(done), candidates_.begin() + std::ptrdiff_t(end),
                          candidates_.begin() + std::ptrdiff_t(kept), larger);
      }
      for (; done < end && mass < options_.top_p; ++done) mass += candidates_[done].weight / total;
      if (mass >= options_.top_p) {
        kept = done;
        break;
      }
    }
  }

  // Draw from the softmax of logit / temperature over what is left (at temperature 1, the
  // weights above).
  total = 0;
  for (size_t i = 0; i < kept; ++i) {
    Candidate& c = candidates_[i];
    if (options_.temperature != 1.0) c.weight = std::exp((double(c.logit) - top) / options_.temperature);
    total += c.weight;
  }
  const double u = double(rng_() >> 11) * 0x1p-53 * total;  // 53 random bits: [0, total)
  double sum = 0;
  for (size_t i = 0; i + 1 < kept; ++i) {
    sum += candidates_[i].weight;
    if (u < sum) return candidates_[i].id;
  }
  return candidates_[kept - 1].id;
}

int32_t greedy_token(std::span<const float> logits) {
  if (logits.empty()) throw Error("greedy_token: no logits");
  return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

}  // namespace tg::model
