#include "tx8_run_report.h"

#include <cstdio>
#include <string>

#include "tilegraph/jit/compiler.h"
#include "tilegraph/tx8/tx8_backend.h"

namespace tg::cli {

namespace {

class Tx8RunReport final : public RunReport {
 public:
  explicit Tx8RunReport(tx8::Tx8Backend& backend) : backend_(backend) {}

  void prefill_done() override { after_prefill_ = backend_.stats(); }

  void print(const model::GenerationResult& r) override {
    const tx8::Tx8Stats s = backend_.stats();
    const double clock_mhz = backend_.chip_config().clock_mhz;
    const double decode_seconds = s.simulated_seconds - after_prefill_.simulated_seconds;
    const double prefill_seconds = after_prefill_.simulated_seconds;
    std::printf(
        "  simulated (chip runs only, at %.1f MHz): %llu cycles, %.3f ms; prefill %.1f tok/s, decode %.1f tok/s\n",
        clock_mhz, (unsigned long long)s.simulated_cycles, s.simulated_seconds * 1e3,
        rate(double(r.prefill_tokens), prefill_seconds), rate(double(r.decode_steps), decode_seconds));
    std::printf("  tx8 compile cache: %s\n", tx8::format_stats(s).c_str());
    for (const auto& [what, why] : s.fallbacks) std::printf("  on the CPU: %s: %s\n", what.c_str(), why.c_str());
  }

  nlohmann::json json(const model::GenerationResult& r) override {
    const tx8::Tx8Stats s = backend_.stats();
    const jit::CompilerStats jit = jit::Compiler::instance().stats();
    const double decode_seconds = s.simulated_seconds - after_prefill_.simulated_seconds;
    return {{"clock_mhz", backend_.chip_config().clock_mhz},
            {"simulated_cycles", s.simulated_cycles},
            {"simulated_seconds", s.simulated_seconds},
            {"simulated_prefill_tokens_per_second", rate(double(r.prefill_tokens), after_prefill_.simulated_seconds)},
            {"simulated_decode_tokens_per_second", rate(double(r.decode_steps), decode_seconds)},
            {"compiles", s.compiles},
            {"compile_failures", s.compile_failures},
            {"chip_runs", s.chip_runs},
            {"replayed_runs", s.replayed_runs},
            {"cpu_runs", s.cpu_runs},
            {"cpu_nodes", s.cpu_nodes},
            {"compile_seconds", s.compile_seconds},
            {"jit", {{"memory_hits", jit.memory_hits}, {"disk_hits", jit.disk_hits}, {"compiles", jit.compiles}}},
            {"fallbacks", s.fallbacks}};
  }

 private:
  static double rate(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

  tx8::Tx8Backend& backend_;
  tx8::Tx8Stats after_prefill_;
};

}  // namespace

std::unique_ptr<RunReport> make_tx8_run_report(Backend& backend) {
  auto* tx8 = dynamic_cast<tx8::Tx8Backend*>(&backend);
  return tx8 ? std::make_unique<Tx8RunReport>(*tx8) : nullptr;
}

}  // namespace tg::cli
