#pragma once
// A core graph compiled for the TX8 chip: the whole compiler (import, the front-end and back-end
// pass pipelines, code generation, the JIT) behind one call, and the program it produces. This is
// what the tx8 backend calls and caches (capture = compile); it needs no MLIR header.
//
//   CompileOptions options;                    // the chip, the group patterns, progress
//   auto program = compile_graph(graph, options);
//   DdrBinding where = ...;                    // the graph's tensors' places in the chip's DDR
//   program->run(chip, where);                 // issues every tile's instructions to `chip`
//
// The program refers to the graph's tensors by position (ImportedGraph::arguments / results,
// constants by key), never by pointer, so a step graph rebuilt with the same structure runs the
// same program with a new binding.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/compiler/group_plan_memo.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::compiler {

struct CompileProgress {
  std::string_view stage;  // "import", "front end", "group-cost", "codegen", "jit"
  size_t done = 0;         // units of the stage finished (groups, kernels)
  size_t total = 0;
};

struct CompileOptions {
  sim::ChipConfig chip;             // what every pass plans for (the module carries it: tx8be.chip)
  std::string group_patterns_file;  // extra group-pattern file ("": the built-in set only)
  std::function<void(const CompileProgress&)> progress;  // may be empty
  // The sharding search's plans shared with other compiles (group_plan_memo.h): a backend hands
  // one memo to every chip run it compiles. Null: this compile's own.
  std::shared_ptr<GroupPlanMemo> plan_memo;
  MatmulKSplit matmul_k_split = MatmulKSplit::Search;  // whether a lone matmul's K is split
};

// One SPM buffer of a group's allocation, for the occupancy chart.
struct SpmBufferSpan {
  std::string name;                         // "matmul %12", "scratch of softmax %14"
  uint64_t offset = 0;                      // of copy 0
  uint64_t bytes = 0;                       // all copies together
  int64_t first_cycle = 0, last_cycle = 0;  // pipeline cycles it is live in, inclusive
};

// Per compiled group, what `tilegraph compile --report` prints.
struct GroupReport {
  int group_id = 0;
  std::string ops;                // "matmul+add+silu"
  int template_of = -1;           // the group whose plan this one reuses (-1: searched itself)
  int32_t tiles = 0;              // tiles it runs on
  std::vector<int32_t> sharding;  // parts per dim of the group's result over tiles
  std::vector<int64_t> slice;     // per-step shape of the result on one tile
  int64_t steps = 0;              // steps per tile
  int64_t k_panel = 0;            // a K-split matmul's K per step (0: K whole)
  bool noc_share = false;         // a K split's operand panels shared over the NoC
  int64_t pipeline_cycles = 0;
  uint64_t spm_peak = 0;         // bytes of SPM the allocation uses
  uint64_t spm_lower_bound = 0;  // the most bytes live at one time
  std::vector<SpmBufferSpan> spm_buffers;
  uint64_t estimated_cycles = 0;  // the search's cost model
  uint64_t simulated_cycles = 0;  // measured on the C-model (0 until run)
};

struct CompileReport {
  std::vector<GroupReport> groups;
  double compile_seconds = 0;
  double search_seconds = 0;  // of compile_seconds, the back end's planning (group-cost's search and the rest)
  uint64_t jit_compiles = 0;  // kernels the JIT built (not found in its caches)
  GroupCostCounts search;     // groups searched, and reusing a plan (from an earlier compile: search.earlier)
};

// Where a program's tensors live in the chip's DDR when it runs.
struct DdrBinding {
  std::vector<uint64_t> arguments;  // one per graph argument (non-weight leaf), in import order
  std::vector<uint64_t> results;    // one per result; a state result may be its argument's address
  // The address of a weight already in DDR, by its constant key (its GGUF tensor name); returns
  // sim::kNoAddress for weights the program must place itself.
  std::function<uint64_t(std::string_view key)> constant;
  uint64_t scratch = 0;  // ChipProgram::scratch_bytes() of DDR the program may use for itself
};

class ChipProgram {
 public:
  virtual ~ChipProgram() = default;
  // DDR bytes the program needs for intermediates and the weights it places itself.
  virtual uint64_t scratch_bytes() const = 0;
  // Bytes of each argument and of each result, in DdrBinding order.
  virtual const std::vector<uint64_t>& argument_bytes() const = 0;
  virtual const std::vector<uint64_t>& result_bytes() const = 0;
  // Issues every tile's instructions to `chip` (in an order that is correct sequentially, the
  // waits and barriers stated) and returns the schedule's report of this run alone.
  virtual sim::ChipReport run(sim::Chip& chip, const DdrBinding& binding) = 0;
  virtual const CompileReport& report() const = 0;
  virtual size_t host_bytes() const = 0;  // host memory held (the graph cache's byte bound)
};

// Runs `program` on `chip` once with every argument zero and every weight placed by the program:
// a run for its cycles alone (compile reports, benchmarks). Arguments, results and scratch are laid
// out from DDR address 0, 64-byte aligned.
sim::ChipReport run_with_zero_arguments(ChipProgram& program, sim::Chip& chip);

// Throws tg::Error naming the node or group for what the chip cannot run; a backend asks
// `chip_supports` per node first and compiles only runs of supported nodes.
std::unique_ptr<ChipProgram> compile_graph(const Graph& graph, const CompileOptions& options);
bool chip_supports(const Tensor& node, std::string* why = nullptr);

}  // namespace tg::compiler
