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

namespace tg::bench {

// Whether this build has the peer (scripts/setup-llama-cpp-peer before CMake).
bool llama_cpp_peer_built();

// For each of `models` (tiny: the tiny preset; d2048x8: 8 layers, d_model 2048, 16 heads, 8 KV
// heads, n_ff 5632, vocabulary 8192) and each type that fits it, writes the model to a temporary
// GGUF file and times, at 1 and 2 threads, tilegraph's decode step (graph mode, reused graphs:
// `tilegraph run`'s default) and prefill of `prefill_tokens` against llama.cpp's on the same file,
// `rounds` rounds of A B A B. Prints a table unless `quiet`; returns the rows as JSON and appends
// the section's targets.
nlohmann::json run_llama_cpp_section(const std::vector<DType>& types, const std::vector<std::string>& models,
                                     int64_t prefill_tokens, int rounds, const ReadBandwidth& bandwidth, bool quiet,
                                     std::vector<Target>& targets);

}  // namespace tg::bench
