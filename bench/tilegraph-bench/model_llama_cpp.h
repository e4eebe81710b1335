#pragma once
// The model suite's llama.cpp section: tilegraph against llama.cpp (bench/peers/llama_cpp_peer.cpp,
// a process of its own) on the same GGUF file, decode and prefill, interleaved round by round.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bandwidth.h"
#include "targets.h"
#include "tilegraph/core/dtype.h"
#include "tilegraph/model/llama_model.h"

namespace tg::bench {

// Whether this build has the peer (scripts/setup-llama-cpp-peer before CMake).
bool llama_cpp_peer_built();

// A row's weights: one type for every matrix, or a mix such as llama.cpp's Q4_K_M.
struct PeerWeights {
  std::string name;  // "q4_0", "q4_K_M"
  model::WeightTypes types;
};
// The weights of a --types name: a type (parse_dtype's names) or q4_k_m.
PeerWeights peer_weights(const std::string& name);

// For each of `models` (tiny: the tiny preset; d2048x8: 8 layers, d_model 2048, 16 heads, 8 KV
// heads, n_ff 5632, vocabulary 8192) and each set of weights that fits it, writes the model to a temporary
// GGUF file and times, at 1 and 2 threads, tilegraph's decode step (graph mode, reused graphs:
// `tilegraph run`'s default) and prefill of `prefill_tokens` against llama.cpp's on the same file,
// `rounds` rounds of A B A B. Prints a table unless `quiet`; returns the rows as JSON and appends
// the section's targets.
nlohmann::json run_llama_cpp_section(const std::vector<PeerWeights>& weights, const std::vector<std::string>& models,
                                     int64_t prefill_tokens, int rounds, const ReadBandwidth& bandwidth, bool quiet,
                                     std::vector<Target>& targets);

}  // namespace tg::bench
