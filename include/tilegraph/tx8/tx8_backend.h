#pragma once
// The tx8 backend: tensors in the simulated TX8 chip's DDR, graphs compiled by the TX8 compiler
// (compiler/chip_program.h) and run on the C-model (sim/), nodes the chip cannot run on the CPU
// backend. docs/tx8-backend.md.
//
//   compute(graph): split the graph into runs of nodes the chip supports and runs it does not;
//     compile each chip run (compile_graph) and run it with a DdrBinding of the tensors' DDR
//     addresses; run the others on the CPU, their inputs copied out of DDR and results back.
//   graph mode: capture = compile. The GraphCache holds the compiled programs; a replay runs
//     them without compiling, a re-bind gives them the addresses of a new step graph.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/runtime/backend.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::tx8 {

// What the backend compiles with: compile_graph and chip_supports by default (a test may give
// its own).
struct ChipCompiler {
  std::function<std::unique_ptr<compiler::ChipProgram>(const Graph&, const compiler::CompileOptions&)> compile;
  std::function<bool(const Tensor&, std::string*)> supports;
};
// The TX8 compiler's compile_graph and chip_supports.
ChipCompiler default_chip_compiler();

struct Tx8Options {
  sim::ChipConfig chip;
  ChipCompiler compiler;
  // Where the reasons for CPU fallbacks go, once per op kind (default: stderr, "tx8: ...").
  std::function<void(const std::string&)> notice;
};

struct Tx8Stats {
  uint64_t computes = 0;
  uint64_t compiles = 0;          // chip runs compiled (compile_graph calls that succeeded)
  uint64_t compile_failures = 0;  // chip runs the compiler refused: run on the CPU instead
  uint64_t chip_runs = 0;         // chip programs run
  uint64_t replayed_runs = 0;     // of which ran from a captured graph, without compiling
  uint64_t cpu_runs = 0;          // runs of nodes on the CPU backend
  uint64_t cpu_nodes = 0;         // nodes those runs executed
  uint64_t simulated_cycles = 0;  // chip cycles of every program run (CPU runs not included)
  double simulated_seconds = 0;   // the same at the configured clock
  double compile_seconds = 0;
  uint64_t jit_compiles = 0;  // kernels the JIT built for compiled programs
  // Groups of compiled runs whose sharding was searched, and that took the plan of an identical
  // group searched before (in the same run or an earlier one: the backend shares its memo).
  uint64_t groups_searched = 0;
  uint64_t groups_reused = 0;
  // What ran on the CPU and why: per op kind the chip does not run ("flash_attn_ext"), and per
  // reason the compiler gave for refusing a run ("compile: <its message>").
  std::map<std::string, std::string> fallbacks;
};

class Tx8Backend : public Backend {
 public:
  virtual Tx8Stats stats() const = 0;
  virtual const sim::ChipConfig& chip_config() const = 0;
};

// The backend for `options`; the chip is BackendOptions::chip_config's JSON file, else
// $TG_TX8_CONFIG's, else sim's default TX8 chip.
std::unique_ptr<Backend> make_tx8_backend(const BackendOptions& options);
std::unique_ptr<Backend> make_tx8_backend(const BackendOptions& options, Tx8Options tx8);

// Adds "tx8" to the registry of backends.h (the programs that link this layer call it).
void register_tx8_backend();

// "compiles 2, replays 30, ..." for the CLI.
std::string format_stats(const Tx8Stats& stats);

}  // namespace tg::tx8
