// llama.cpp as `tilegraph-bench model`'s in-run peer: loads a GGUF file with libllama (the
// prebuilt CPU libraries of node-llama-cpp, scripts/setup-llama-cpp-peer) and times what the
// suite times for tilegraph, with the same prompt ids and thread count. It speaks the protocol of
// bench/tilegraph-bench/peer_process.h, one JSON object per line:
//   llama-cpp-peer MODEL.gguf THREADS PREFILL_TOKENS
//   greeting  {"peer": "llama.cpp", "commit": ..., "cpu_backend": ..., "n_vocab": ..., ...}
//   {"op": "decode", "steps": S}    greedy decode steps at positions prompt .. 2 prompt - 1 (the
//                                   cache cut back to the prompt when full), as the suite's
//                                   Decoder: {"seconds": wall, "cpu_seconds": process CPU time,
//                                   "tokens": [...]}
//   {"op": "prefill", "tokens": T}  T <= PREFILL_TOKENS prompt ids from an empty cache in one
//                                   batch, in a context of its own:
//                                   {"seconds", "cpu_seconds", "token": the greedy pick after it}
// Prompt ids are (1 + 37 i) mod n_vocab, as in the suite. Timing covers llama_decode and the
// greedy pick over the logits, as a tilegraph step covers eval and greedy_token.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ggml-backend.h"
#include "llama.h"

namespace {

using nlohmann::json;
constexpr int32_t kDecodePrompt = 32;  // the suite's kPrompt

// The replies' stream: stdout as the suite started us. Standard output itself goes to stderr, so
// nothing a library prints can break the protocol.
FILE* g_replies = stdout;

void reply_line(const json& j) {
  std::fputs((j.dump() + "\n").c_str(), g_replies);
  std::fflush(g_replies);
}

void quiet_log(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

// This process's CPU time: on a machine shared with other work it leaves out the waits for a core
// that wall time includes (the suite reports both).
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

std::vector<llama_token> prompt_ids(int32_t tokens, int32_t n_vocab) {
  std::vector<llama_token> ids(size_t(tokens), 0);
  for (int32_t i = 0; i < tokens; ++i) ids[size_t(i)] = llama_token((1 + 37 * int64_t(i)) % n_vocab);
  return ids;
}

// The CPU backend variant ggml chose (libggml-cpu-<level>.so) and the features it reports.
json cpu_backend_info() {
  json info = json::object();
  for (size_t i = 0; i < ggml_backend_reg_count(); ++i) {
    ggml_backend_reg_t reg = ggml_backend_reg_get(i);
    if (std::string(ggml_backend_reg_name(reg)) != "CPU") continue;
    using GetFeatures = ggml_backend_feature* (*)(ggml_backend_reg_t);
    auto get = reinterpret_cast<GetFeatures>(ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features"));
    std::string features;
    for (ggml_backend_feature* f = get ? get(reg) : nullptr; f && f->name; ++f) {
      if (!features.empty()) features.push_back(' ');
      features.append(f->name);
      if (std::string_view(f->value) != "1") features.append("=").append(f->value);
    }
    info["features"] = features;
    if (ggml_backend_reg_dev_count(reg) > 0)
      info["device"] = ggml_backend_dev_description(ggml_backend_reg_dev_get(reg, 0));
  }
  return info;
}

class Peer {
 public:
  Peer(llama_context* ctx, int32_t n_vocab) : ctx_(ctx), n_vocab_(n_vocab) {}

  // Greedy argmax of the logits of the batch's last token.
  llama_token pick() const {
    const float* logits = llama_get_logits_ith(ctx_, -1);
    return llama_token(std::max_element(logits, logits + n_vocab_) - logits);
  }

  llama_token eval(std::vector<llama_token> ids) {
    if (llama_decode(ctx_, llama_batch_get_one(ids.data(), int32_t(ids.size()))) != 0) {
      throw std::runtime_error("llama_decode failed");
    }
    n_past_ += int32_t(ids.size());
    return pick();
  }

  void clear() {
    llama_memory_clear(llama_get_memory(ctx_), true);
    n_past_ = 0;
  }

  json decode(int steps) {
    if (n_past_ < kDecodePrompt || n_past_ > 2 * kDecodePrompt) {
      clear();
      next_ = eval(prompt_ids(kDecodePrompt, n_vocab_));
    }
    std::vector<llama_token> tokens;
    const double cpu_start = cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) {
      if (n_past_ == 2 * kDecodePrompt) {
        llama_memory_seq_rm(llama_get_memory(ctx_), 0, kDecodePrompt, -1);
        n_past_ = kDecodePrompt;
      }
      next_ = eval({next_});
      tokens.push_back(next_);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return {{"seconds", seconds}, {"cpu_seconds", cpu_seconds() - cpu_start}, {"tokens", tokens}};
  }

  json prefill(int32_t tokens) {
    clear();
    const std::vector<llama_token> ids = prompt_ids(tokens, n_vocab_);
    const double cpu_start = cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    const llama_token token = eval(ids);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return {{"seconds", seconds}, {"cpu_seconds", cpu_seconds() - cpu_start}, {"token", token}};
  }

 private:
  llama_context* ctx_;
  int32_t n_vocab_;
  int32_t n_past_ = 0;
  llama_token next_ = 0;
};

llama_context* new_context(llama_model* model, int threads, int n_ctx) {
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = uint32_t(n_ctx);
  cp.n_batch = uint32_t(n_ctx);
  cp.n_threads = threads;
  cp.n_threads_batch = threads;
  cp.no_perf = true;
  return llama_init_from_model(model, cp);
}

int run(int argc, char** argv) {
  if (argc != 4) {
    reply_line({{"error", "usage: llama-cpp-peer MODEL.gguf THREADS PREFILL_TOKENS"}});
    return 2;
  }
  const std::string path = argv[1];
  const int threads = std::atoi(argv[2]);
  const int prefill_tokens = std::atoi(argv[3]);
  if (threads < 1 || prefill_tokens < 1) {
    reply_line({{"error", "THREADS and PREFILL_TOKENS must be >= 1"}});
    return 2;
  }
  llama_log_set(quiet_log, nullptr);
  // The CPU variants next to libllama (libggml-cpu-haswell.so, ...-zen4.so, ...): ggml loads
  // the one that scores best on this CPU.
  ggml_backend_load_all_from_path(TG_LLAMA_CPP_LIB_DIR);
  llama_backend_init();

  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(path.c_str(), mp);
  if (!model) {
    reply_line({{"error", "llama.cpp could not load " + path}});
    return 1;
  }
  // One context (KV cache) for decoding and one for prompts, as the suite has one session each,
  // so a prefill request never disturbs the decode sequence.
  llama_context* decode_ctx = new_context(model, threads, 2 * kDecodePrompt);
  llama_context* prefill_ctx = new_context(model, threads, std::max(prefill_tokens, 2 * kDecodePrompt));
  if (!decode_ctx || !prefill_ctx) {
    reply_line({{"error", "llama.cpp could not create a context"}});
    return 1;
  }
  const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  Peer decoder(decode_ctx, n_vocab), prefiller(prefill_ctx, n_vocab);
  const llama_context_params cp = llama_context_default_params();

  json greeting = {{"peer", "llama.cpp"},
                   {"commit", TG_LLAMA_CPP_COMMIT},
                   {"node_llama_cpp", TG_NODE_LLAMA_CPP_VERSION},
                   {"threads", threads},
                   {"n_ubatch", cp.n_ubatch},
                   {"flash_attn", llama_flash_attn_type_name(cp.flash_attn_type)},
                   {"n_vocab", n_vocab},
                   {"cpu_backend", cpu_backend_info()}};
  reply_line(greeting);

  std::string line;
  while (std::getline(std::cin, line)) {
    json reply;
    try {
      const json request = json::parse(line);
      const std::string op = request.at("op");
      if (op == "decode") {
        reply = decoder.decode(request.at("steps").get<int>());
      } else if (op == "prefill") {
        const int32_t tokens = request.at("tokens").get<int32_t>();
        if (tokens < 1 || tokens > prefill_tokens)
          throw std::runtime_error("prefill tokens must be in 1 .. PREFILL_TOKENS");
        reply = prefiller.prefill(tokens);
      } else {
        throw std::runtime_error("unknown op " + op);
      }
    } catch (const std::exception& e) {
      reply = {{"error", e.what()}};
    }
    reply_line(reply);
  }
  llama_free(decode_ctx);
  llama_free(prefill_ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int replies = dup(STDOUT_FILENO);
  if (replies < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0 || !(g_replies = fdopen(replies, "w"))) return 1;
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    reply_line({{"error", e.what()}});
    return 1;
  }
}
