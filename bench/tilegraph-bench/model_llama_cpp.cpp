#include "model_llama_cpp.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "measure.h"
#include "model_steps.h"
#include "peer_process.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf.h"
#include "tilegraph/model/vocab.h"

// The peer's path, defined by bench/CMakeLists.txt when it builds the peer.
#ifndef TG_LLAMA_CPP_PEER
#define TG_LLAMA_CPP_PEER ""
#endif

namespace tg::bench {

bool llama_cpp_peer_built() { return std::string_view(TG_LLAMA_CPP_PEER) != ""; }

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kSeed = 42;
constexpr int kDecodeSteps = 6;  // per side and round: ~0.1-1 s at d_model 2048

model::LlamaConfig peer_config() {
  model::LlamaConfig c = model::llama_preset("tiny");
  c.n_layer = 8;
  c.n_embd = 2048;
  c.n_head = 16;
  c.n_head_kv = 8;
  c.n_ff = 5632;
  c.n_vocab = 8192;
  c.n_ctx_train = 4096;
  return c;
}

// The generated model's file, removed when the section is done with it.
class TemporaryGguf {
 public:
  TemporaryGguf(const model::LlamaConfig& config, DType type)
      : path_((std::filesystem::temp_directory_path() /
               ("tilegraph-bench-" + std::to_string(getpid()) + "-" + std::string(dtype_name(type)) + ".gguf"))
                  .string()) {
    model::LlamaModel::generate_gguf(config, model::WeightTypes::all(type), kSeed,
                                     "tilegraph-bench d2048x8 " + std::string(dtype_name(type)),
                                     model::Vocab::minimal_sentencepiece(config.n_vocab))
        .write_file(path_);
  }
  ~TemporaryGguf() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  TemporaryGguf(const TemporaryGguf&) = delete;
  TemporaryGguf& operator=(const TemporaryGguf&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// This process's CPU time, as the peer reports its own: on a machine shared with other work it
// leaves out the waits for a core (at 2 threads it includes the workers' spinning, on both sides).
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// A side's wall and CPU time of one thing, from `start`.
struct Times {
  double wall, cpu;
};
struct Stopwatch {
  Clock::time_point wall = Clock::now();
  double cpu = cpu_seconds();
  Times read() const { return {seconds_since(wall), cpu_seconds() - cpu}; }
};

json checked(PeerProcess& peer, const json& request) {
  json reply = peer.request(request);
  if (reply.contains("error")) throw Error("llama.cpp peer: " + reply["error"].get<std::string>());
  return reply;
}

struct Row {
  std::string type;
  int threads;
  double weight_mib;
  double bound_bytes_per_s;               // median of the rounds' read bandwidth
  double decode_ours_s, decode_peer_s;    // per step, medians
  double decode_ratio;                    // median of the rounds' peer step / our step
  double decode_cpu_ratio;                // the same from CPU times
  double eff_ours, eff_peer;              // medians of the rounds' bound step / step
  double prefill_ours_s, prefill_peer_s;  // medians
  double prefill_ratio;                   // median of the rounds' peer time / our time
  double prefill_cpu_ratio;
  // Greedy decode tokens before the first that differs from llama.cpp's, of all compared: one
  // difference (a near tie decided the other way by another summation order) changes every later
  // token, so this counts steps, not a share.
  size_t agree, compared;
  std::string peer_cpu;
};

Row run_row(const model::LlamaModel& llama, const std::string& path, DType type, int threads, int64_t prefill_tokens,
            int rounds, const ReadBandwidth& bandwidth) {
  PeerProcess peer({TG_LLAMA_CPP_PEER, path, std::to_string(threads), std::to_string(prefill_tokens)});
  if (!peer.available()) throw Error("llama.cpp peer: " + peer.error());
  auto decode_backend = cpu_backend(threads, true);
  auto prefill_backend = cpu_backend(threads, false);
  Decoder decoder(llama, *decode_backend, true);
  Prefiller prefiller(llama, *prefill_backend, prefill_tokens);
  const json prefill_request = {{"op", "prefill"}, {"tokens", prefill_tokens}};
  const json decode_request = {{"op", "decode"}, {"steps", kDecodeSteps}};

  // Warm-up: the captured graph, allocators and scratch at full size on both sides; both decode
  // the same steps, so their greedy tokens can be compared step by step.
  std::vector<int32_t> ours_tokens, peer_tokens;
  for (int s = 0; s < 2; ++s) {
    decoder.step();
    ours_tokens.push_back(decoder.last_token());
  }
  const json warm = checked(peer, {{"op", "decode"}, {"steps", 2}});
  for (const json& t : warm["tokens"]) peer_tokens.push_back(t.get<int32_t>());
  prefiller.run();
  checked(peer, prefill_request);

  const double weight_bytes = double(llama.decode_weight_bytes());
  std::vector<double> bw, ours_step, peer_step, eff_ours, eff_peer, ours_prefill, peer_prefill;
  std::vector<double> ours_step_cpu, peer_step_cpu, ours_prefill_cpu, peer_prefill_cpu;
  for (int r = 0; r < rounds; ++r) {
    bw.push_back(bandwidth.measure(threads, 1));
    const Stopwatch decode_watch;
    for (int s = 0; s < kDecodeSteps; ++s) {
      decoder.step();
      ours_tokens.push_back(decoder.last_token());
    }
    const Times ours = decode_watch.read();
    ours_step.push_back(ours.wall / kDecodeSteps);
    ours_step_cpu.push_back(ours.cpu / kDecodeSteps);
    const json reply = checked(peer, decode_request);
    peer_step.push_back(reply["seconds"].get<double>() / kDecodeSteps);
    peer_step_cpu.push_back(reply["cpu_seconds"].get<double>() / kDecodeSteps);
    for (const json& t : reply["tokens"]) peer_tokens.push_back(t.get<int32_t>());
    eff_ours.push_back(weight_bytes / bw.back() / ours_step.back());
    eff_peer.push_back(weight_bytes / bw.back() / peer_step.back());

    const Stopwatch prefill_watch;
    prefiller.run();
    const Times ours_p = prefill_watch.read();
    ours_prefill.push_back(ours_p.wall);
    ours_prefill_cpu.push_back(ours_p.cpu);
    const json reply_p = checked(peer, prefill_request);
    peer_prefill.push_back(reply_p["seconds"].get<double>());
    peer_prefill_cpu.push_back(reply_p["cpu_seconds"].get<double>());
  }
  const size_t compared = std::min(ours_tokens.size(), peer_tokens.size());
  const size_t agree =
      size_t(std::mismatch(ours_tokens.begin(), ours_tokens.begin() + ptrdiff_t(compared), peer_tokens.begin()).first -
             ours_tokens.begin());

  Row row{};
  row.type = std::string(dtype_name(type));
  row.threads = threads;
  row.weight_mib = weight_bytes / (1 << 20);
  row.bound_bytes_per_s = median_of(bw);
  row.decode_ours_s = median_of(ours_step);
  row.decode_peer_s = median_of(peer_step);
  row.decode_ratio = median_ratio(peer_step, ours_step);
  row.decode_cpu_ratio = median_ratio(peer_step_cpu, ours_step_cpu);
  row.eff_ours = median_of(eff_ours);
  row.eff_peer = median_of(eff_peer);
  row.prefill_ours_s = median_of(ours_prefill);
  row.prefill_peer_s = median_of(peer_prefill);
  row.prefill_ratio = median_ratio(peer_prefill, ours_prefill);
  row.prefill_cpu_ratio = median_ratio(peer_prefill_cpu, ours_prefill_cpu);
  row.agree = agree;
  row.compared = compared;
  const json& cpu = peer.greeting()["cpu_backend"];
  row.peer_cpu = cpu.contains("features") ? cpu["features"].get<std::string>() : "?";
  return row;
}

}  // namespace

json run_llama_cpp_section(const std::vector<DType>& types, int64_t prefill_tokens, int rounds,
                           const ReadBandwidth& bandwidth, bool quiet, std::vector<Target>& targets) {
  json rows = json::array();
  if (!llama_cpp_peer_built()) {
    if (!quiet) std::printf("\nllama.cpp: not built (run scripts/setup-llama-cpp-peer, then CMake again)\n");
    targets.push_back({"d2048x8 decode and prefill >= 1.0x llama.cpp", "not measured: no llama.cpp peer", false});
    return rows;
  }
  const model::LlamaConfig config = peer_config();
  if (!quiet) {
    std::printf(
        "\nllama.cpp (bench/peers/llama_cpp_peer.cpp, node-llama-cpp's prebuilt CPU libraries) on the same GGUF file:\n"
        "8 layers, d_model 2048, 16 heads / 8 KV heads, n_ff 5632, vocabulary 8192; %d rounds, each: our %d decode\n"
        "steps, its %d, our prefill of %lld tokens, its. Decode (n_kv <= %lld, f16 KV cache on both) per step,\n"
        "greedy; x = median of the rounds' llama.cpp time / ours (> 1: ours faster), x cpu = the same from each\n"
        "process's CPU time (leaves out waits for a core on a loaded machine; at 2 threads it counts spinning);\n"
        "GB/s = decode weight bytes / step, %% = of the bound (read bandwidth measured before each round, %s);\n"
        "agree = greedy decode steps before the first token that differs from llama.cpp's, of all (a near tie\n"
        "decided the other way by another summation order changes every later token).\n",
        rounds, kDecodeSteps, kDecodeSteps, (long long)prefill_tokens, (long long)(2 * kPrompt),
        bandwidth.describe().c_str());
    std::printf("%-5s %3s %7s %6s | %8s %8s %6s %6s | %6s %4s %6s %4s | %8s %8s %6s %6s | %5s\n", "type", "thr", "MiB",
                "bound", "ours", "llama", "x", "x cpu", "ours", "%", "llama", "%", "ours", "llama", "x", "x cpu",
                "agree");
    std::printf("%-5s %3s %7s %6s | %31s | %23s | %31s |\n", "", "", "", "GB/s", "decode tok/s", "decode GB/s",
                "prefill tok/s");
  }
  double worst_decode = 1e9, worst_prefill = 1e9, worst_eff = 1e9;
  std::string peer_cpu;
  std::vector<std::string> failed;
  for (DType type : types) {
    const int64_t block = int64_t(dtype_traits(type).block_size);
    if (config.n_embd % block != 0 || config.n_ff % block != 0) continue;
    const TemporaryGguf file(config, type);
    const model::GgufFile gguf = model::GgufFile::open(file.path());
    const model::LlamaModel llama = model::LlamaModel::from_gguf(gguf);
    for (int threads : {1, 2}) {
      // A type llama.cpp cannot run (or a peer that dies) costs its row, not the section.
      Row r;
      try {
        r = run_row(llama, file.path(), type, threads, prefill_tokens, rounds, bandwidth);
      } catch (const Error& e) {
        if (!quiet) std::printf("%-5s %3d failed: %s\n", std::string(dtype_name(type)).c_str(), threads, e.what());
        failed.push_back(std::string(dtype_name(type)) + "/" + std::to_string(threads) + "t");
        continue;
      }
      peer_cpu = r.peer_cpu;
      worst_decode = std::min(worst_decode, r.decode_ratio);
      worst_prefill = std::min(worst_prefill, r.prefill_ratio);
      worst_eff = std::min(worst_eff, r.eff_ours);
      const double bytes = r.weight_mib * (1 << 20);
      if (!quiet) {
        std::printf(
            "%-5s %3d %7.1f %6.2f | %8.2f %8.2f %5.2fx %5.2fx | %6.2f %3.0f%% %6.2f %3.0f%% | %8.1f %8.1f %5.2fx "
            "%5.2fx | "
            "%zu/%zu\n",
            r.type.c_str(), r.threads, r.weight_mib, r.bound_bytes_per_s / 1e9, 1 / r.decode_ours_s,
            1 / r.decode_peer_s, r.decode_ratio, r.decode_cpu_ratio, bytes / r.decode_ours_s / 1e9, 100 * r.eff_ours,
            bytes / r.decode_peer_s / 1e9, 100 * r.eff_peer, double(prefill_tokens) / r.prefill_ours_s,
            double(prefill_tokens) / r.prefill_peer_s, r.prefill_ratio, r.prefill_cpu_ratio, r.agree, r.compared);
        std::fflush(stdout);
      }
      rows.push_back({{"weight_type", r.type},
                      {"threads", r.threads},
                      {"decode_weight_mib", r.weight_mib},
                      {"bound_gbs", r.bound_bytes_per_s / 1e9},
                      {"decode_tokens_per_s", {{"tilegraph", 1 / r.decode_ours_s}, {"llama_cpp", 1 / r.decode_peer_s}}},
                      {"decode_llama_cpp_time_over_ours", r.decode_ratio},
                      {"decode_llama_cpp_cpu_time_over_ours", r.decode_cpu_ratio},
                      {"decode_bound_fraction", {{"tilegraph", r.eff_ours}, {"llama_cpp", r.eff_peer}}},
                      {"prefill_tokens", prefill_tokens},
                      {"prefill_tokens_per_s",
                       {{"tilegraph", double(prefill_tokens) / r.prefill_ours_s},
                        {"llama_cpp", double(prefill_tokens) / r.prefill_peer_s}}},
                      {"prefill_llama_cpp_time_over_ours", r.prefill_ratio},
                      {"prefill_llama_cpp_cpu_time_over_ours", r.prefill_cpu_ratio},
                      {"greedy_tokens_agreeing", r.agree},
                      {"greedy_tokens_compared", r.compared}});
    }
  }
  if (!quiet && !peer_cpu.empty()) std::printf("llama.cpp's CPU backend: %s\n", peer_cpu.c_str());
  const bool ran = !rows.empty() && failed.empty();
  std::string none = "not measured: no type among --types fits d_model 2048";
  if (!failed.empty()) {
    none = "not measured: failed rows";
    for (const std::string& f : failed) none += " " + f;
  }
  targets.push_back(
      {"d2048x8 decode >= 1.0x llama.cpp", ran ? fmt("worst %.2fx", worst_decode) : none, ran && worst_decode >= 1.0});
  targets.push_back({"d2048x8 decode >= 90% of the bandwidth bound", ran ? fmt("worst %.0f%%", 100 * worst_eff) : none,
                     ran && worst_eff >= 0.9});
  targets.push_back({"d2048x8 prefill >= 1.0x llama.cpp", ran ? fmt("worst %.2fx", worst_prefill) : none,
                     ran && worst_prefill >= 1.0});
  return rows;
}

}  // namespace tg::bench
