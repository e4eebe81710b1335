#include "model_llama_cpp.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
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

struct PeerModel {
  std::string name;
  model::LlamaConfig config;
  int decode_steps;  // per side and round: ~0.1-1 s
};

// The tiny preset, where per-step overheads dominate, and the memory-bound model.
std::vector<PeerModel> peer_models() {
  model::LlamaConfig tiny = model::llama_preset("tiny");
  tiny.n_ctx_train = 4096;
  return {{"tiny", tiny, 1000}, {"d2048x8", model::llama_preset("d2048"), 6}};
}

// The generated model's file, removed when the section is done with it.
class TemporaryGguf {
 public:
  TemporaryGguf(const std::string& name, const model::LlamaConfig& config, const PeerWeights& weights)
      : path_((std::filesystem::temp_directory_path() /
               ("tilegraph-bench-" + std::to_string(getpid()) + "-" + name + "-" + weights.name + ".gguf"))
                  .string()) {
    model::LlamaModel::generate_gguf(config, weights.types, kSeed, "tilegraph-bench " + name + " " + weights.name,
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
  std::string model, type;
  int threads;
  double weight_mib;
  double bound_bytes_per_s;               // median of the rounds' read bandwidth
  double decode_ours_s, decode_peer_s;    // per step, medians
  double decode_ratio;                    // median of the rounds' peer step / our step
  double decode_cpu_ratio;                // the same from CPU times
  double repack_ratio;                    // median of the rounds' stored-rows step / our step; 0: no copies
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

// `stored`: the same file's model without the backend's copies (LlamaModel::place_weights), or
// null when it has none; its steps run in the same rounds.
Row run_row(const PeerModel& spec, const model::LlamaModel& llama, const model::LlamaModel* stored,
            const std::string& path, const std::string& type, int threads, int64_t prefill_tokens, int rounds,
            const ReadBandwidth& bandwidth) {
  const int steps = spec.decode_steps;
  PeerProcess peer({TG_LLAMA_CPP_PEER, path, std::to_string(threads), std::to_string(prefill_tokens)});
  if (!peer.available()) throw Error("llama.cpp peer: " + peer.error());
  auto decode_backend = cpu_backend(threads, true);
  auto prefill_backend = cpu_backend(threads, false);
  Decoder decoder(llama, *decode_backend, true);
  std::unique_ptr<Backend> stored_backend = stored ? cpu_backend(threads, true) : nullptr;
  std::optional<Decoder> stored_decoder;
  if (stored) stored_decoder.emplace(*stored, *stored_backend, true);
  Prefiller prefiller(llama, *prefill_backend, prefill_tokens);
  const json prefill_request = {{"op", "prefill"}, {"tokens", prefill_tokens}};
  const json decode_request = {{"op", "decode"}, {"steps", steps}};

  // Warm-up: the captured graph, allocators and scratch at full size on both sides; both decode
  // the same steps, so their greedy tokens can be compared step by step.
  std::vector<int32_t> ours_tokens, peer_tokens;
  for (int s = 0; s < 2; ++s) {
    decoder.step();
    ours_tokens.push_back(decoder.last_token());
    if (stored_decoder) stored_decoder->step();
  }
  const json warm = checked(peer, {{"op", "decode"}, {"steps", 2}});
  for (const json& t : warm["tokens"]) peer_tokens.push_back(t.get<int32_t>());
  prefiller.run();
  checked(peer, prefill_request);

  const double weight_bytes = double(llama.decode_weight_bytes());
  std::vector<double> bw, ours_step, peer_step, eff_ours, eff_peer, ours_prefill, peer_prefill;
  std::vector<double> ours_step_cpu, peer_step_cpu, ours_prefill_cpu, peer_prefill_cpu, stored_step;
  for (int r = 0; r < rounds; ++r) {
    const double bw_before = bandwidth.measure(threads, 1);
    const Stopwatch decode_watch;
    for (int s = 0; s < steps; ++s) {
      decoder.step();
      ours_tokens.push_back(decoder.last_token());
    }
    const Times ours = decode_watch.read();
    ours_step.push_back(ours.wall / steps);
    ours_step_cpu.push_back(ours.cpu / steps);
    if (stored_decoder) {
      const Stopwatch stored_watch;
      for (int s = 0; s < steps; ++s) stored_decoder->step();
      stored_step.push_back(stored_watch.read().wall / steps);
    }
    const json reply = checked(peer, decode_request);
    peer_step.push_back(reply["seconds"].get<double>() / steps);
    peer_step_cpu.push_back(reply["cpu_seconds"].get<double>() / steps);
    for (const json& t : reply["tokens"]) peer_tokens.push_back(t.get<int32_t>());
    // The machine's load changes between the probe and the steps: the better of a probe before
    // and one after both sides' steps is the round's bound.
    bw.push_back(std::max(bw_before, bandwidth.measure(threads, 1)));
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
  row.model = spec.name;
  row.type = type;
  row.threads = threads;
  row.weight_mib = weight_bytes / (1 << 20);
  row.bound_bytes_per_s = median_of(bw);
  row.decode_ours_s = median_of(ours_step);
  row.decode_peer_s = median_of(peer_step);
  row.decode_ratio = median_ratio(peer_step, ours_step);
  row.decode_cpu_ratio = median_ratio(peer_step_cpu, ours_step_cpu);
  row.repack_ratio = stored ? median_ratio(stored_step, ours_step) : 0.0;
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

PeerWeights peer_weights(const std::string& name) {
  if (name == "q4_k_m" || name == "q4_K_M") return {"q4_K_M", model::WeightTypes::q4_k_m()};
  const DType type = parse_dtype(name);
  return {std::string(dtype_name(type)), model::WeightTypes::all(type)};
}

json run_llama_cpp_section(const std::vector<PeerWeights>& weights, const std::vector<std::string>& models,
                           int64_t prefill_tokens, int rounds, const ReadBandwidth& bandwidth, bool quiet,
                           std::vector<Target>& targets) {
  json rows = json::array();
  if (!llama_cpp_peer_built()) {
    if (!quiet) std::printf("\nllama.cpp: not built (run scripts/setup-llama-cpp-peer, then CMake again)\n");
    targets.push_back({"tiny and d2048x8 against llama.cpp", "not measured: no llama.cpp peer", false});
    return rows;
  }
  if (!quiet) {
    std::printf(
        "\nllama.cpp (bench/peers/llama_cpp_peer.cpp, node-llama-cpp's prebuilt CPU libraries) on the same GGUF file:\n"
        "tiny = the tiny preset; d2048x8 = 8 layers, d_model 2048, 16 heads / 8 KV heads, n_ff 5632, vocabulary\n"
        "8192. %d rounds, each: our decode steps (1000 tiny, 6 d2048x8), its, our prefill of %lld tokens, its.\n"
        "Decode: greedy, n_kv <= %lld, f16 KV cache on both; x = median of the rounds' llama.cpp time / ours\n"
        "(> 1: ours faster); x cpu = the same from each process's CPU time (leaves out waits for a core on a\n"
        "loaded machine; at 2 threads it counts spinning); GB/s = decode weight bytes / step; %% = of the bound,\n"
        "the read bandwidth, the better of a probe before and after each round's decode (%s;\n"
        "- where the weights come partly from cache: under 4x the LLC and read faster than DRAM); agree =\n"
        "greedy decode steps before the first token that differs from llama.cpp's, of all (a near tie decided\n"
        "the other way by another summation order changes every later token); copy x = median of the rounds'\n"
        "decode step reading the file's rows (a second mapping, as --no-repack) / ours with the CPU backend's\n"
        "interleaved copies (- : none, the type having none or this CPU decoding without: tilegraph info).\n",
        rounds, (long long)prefill_tokens, (long long)(2 * kPrompt), bandwidth.describe().c_str());
    std::printf("%-7s %-5s %3s %7s %6s | %8s %8s %6s %6s | %6s %4s %6s %4s | %8s %8s %6s %6s | %5s | %5s\n", "model",
                "type", "thr", "MiB", "bound", "ours", "llama", "x", "x cpu", "ours", "%", "llama", "%", "ours",
                "llama", "x", "x cpu", "copy", "agree");
    std::printf("%-7s %-5s %3s %7s %6s | %31s | %23s | %31s | %5s |\n", "", "", "", "", "GB/s", "decode tok/s",
                "decode GB/s", "prefill tok/s", "x");
  }
  // Per model: the worst ratios and share of the bound over its types and thread counts.
  struct Worst {
    double decode = 1e9, prefill = 1e9, eff = 1e9;
    bool ran = false, bound_rows = false;
  };
  std::map<std::string, Worst> worst;
  std::string peer_cpu;
  std::vector<std::string> failed;
  for (const PeerModel& spec : peer_models()) {
    if (std::ranges::count(models, spec.name) == 0) continue;
    for (const PeerWeights& w : weights) {
      const model::LlamaConfig& config = spec.config;
      const int64_t block =
          int64_t(std::max({dtype_traits(w.types.matrices).block_size, dtype_traits(w.types.attn_v).block_size,
                            dtype_traits(w.types.ffn_down).block_size}));
      if (config.n_embd % block != 0 || config.n_ff % block != 0) continue;
      const TemporaryGguf file(spec.name, config, w);
      const model::GgufFile gguf = model::GgufFile::open(file.path());
      model::LlamaModel llama = model::LlamaModel::from_gguf(gguf);
      llama.place_weights(*cpu_backend(1, false));  // as `tilegraph run` does: the decode copies
      // The same file mapped again (other addresses, so no copies): decode as --no-repack does.
      std::optional<model::GgufFile> stored_gguf;
      std::optional<model::LlamaModel> stored;
      if (llama.prepared_bytes() > 0) {
        stored_gguf.emplace(model::GgufFile::open(file.path()));
        stored.emplace(model::LlamaModel::from_gguf(*stored_gguf));
      }
      for (int threads : {1, 2}) {
        // A type llama.cpp cannot run (or a peer that dies) costs its row, not the section.
        Row r;
        try {
          r = run_row(spec, llama, stored ? &*stored : nullptr, file.path(), w.name, threads, prefill_tokens, rounds,
                      bandwidth);
        } catch (const Error& e) {
          const std::string tag = spec.name + "/" + w.name + "/" + std::to_string(threads) + "t";
          if (!quiet) std::printf("%s failed: %s\n", tag.c_str(), e.what());
          failed.push_back(tag);
          continue;
        }
        peer_cpu = r.peer_cpu;
        const double bytes = r.weight_mib * (1 << 20);
        // Weights partly read from cache have no DRAM bound, in the column and in the target alike.
        const bool bound_applies = bandwidth.bound_applies(bytes);
        Worst& w = worst[spec.name];
        w.ran = true;
        w.decode = std::min(w.decode, r.decode_ratio);
        w.prefill = std::min(w.prefill, r.prefill_ratio);
        if (bound_applies) {
          w.eff = std::min(w.eff, r.eff_ours);
          w.bound_rows = true;
        }
        if (!quiet) {
          const std::string ours_pct = bound_applies ? fmt("%3.0f%%", 100 * r.eff_ours) : "   -";
          const std::string peer_pct = bound_applies ? fmt("%3.0f%%", 100 * r.eff_peer) : "   -";
          std::printf(
              "%-7s %-5s %3d %7.1f %6.2f | %8.2f %8.2f %5.2fx %5.2fx | %6.2f %4s %6.2f %4s | %8.1f %8.1f %5.2fx %5.2fx "
              "| %5s | %zu/%zu\n",
              r.model.c_str(), r.type.c_str(), r.threads, r.weight_mib, r.bound_bytes_per_s / 1e9, 1 / r.decode_ours_s,
              1 / r.decode_peer_s, r.decode_ratio, r.decode_cpu_ratio, bytes / r.decode_ours_s / 1e9, ours_pct.c_str(),
              bytes / r.decode_peer_s / 1e9, peer_pct.c_str(), double(prefill_tokens) / r.prefill_ours_s,
              double(prefill_tokens) / r.prefill_peer_s, r.prefill_ratio, r.prefill_cpu_ratio,
              r.repack_ratio > 0 ? fmt("%.2fx", r.repack_ratio).c_str() : "-", r.agree, r.compared);
          std::fflush(stdout);
        }
        rows.push_back(
            {{"model", r.model},
             {"weight_type", r.type},
             {"threads", r.threads},
             {"decode_weight_mib", r.weight_mib},
             {"bound_gbs", r.bound_bytes_per_s / 1e9},
             {"decode_tokens_per_s", {{"tilegraph", 1 / r.decode_ours_s}, {"llama_cpp", 1 / r.decode_peer_s}}},
             {"decode_llama_cpp_time_over_ours", r.decode_ratio},
             {"decode_llama_cpp_cpu_time_over_ours", r.decode_cpu_ratio},
             {"decode_stored_rows_time_over_ours", r.repack_ratio > 0 ? json(r.repack_ratio) : json(nullptr)},
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
  }
  if (!quiet && !peer_cpu.empty()) std::printf("llama.cpp's CPU backend: %s\n", peer_cpu.c_str());
  std::string failures;
  for (const std::string& f : failed) failures += " " + f;
  const auto add = [&](const std::string& model, const std::string& name, double value, const char* format,
                       double target, bool of_the_bound = false) {
    const Worst& w = worst[model];
    const bool measured_rows = w.ran && (!of_the_bound || w.bound_rows);
    const std::string measured = !failed.empty() ? "not measured: failed rows" + failures
                                 : measured_rows ? fmt(format, value)
                                 : w.ran         ? "not measured: every row's weights come partly from cache"
                                                 : "not measured: no type among --types fits " + model;
    targets.push_back({name, measured, failed.empty() && measured_rows && value >= target});
  };
  const auto chosen = [&](const char* model) { return std::ranges::count(models, model) > 0; };
  if (chosen("d2048x8")) {
    add("d2048x8", "d2048x8 decode >= 1.0x llama.cpp", worst["d2048x8"].decode, "worst %.2fx", 1.0);
    add("d2048x8", "d2048x8 decode >= 90% of the bandwidth bound", worst["d2048x8"].eff, "worst %.2f of it", 0.9, true);
    add("d2048x8", "d2048x8 prefill >= 1.0x llama.cpp", worst["d2048x8"].prefill, "worst %.2fx", 1.0);
  }
  if (chosen("tiny")) add("tiny", "tiny decode >= 1.5x llama.cpp", worst["tiny"].decode, "worst %.2fx", 1.5);
  return rows;
}

}  // namespace tg::bench
