#pragma once
// What `tilegraph run` reports about a backend beyond what every backend has: tilegraph-tx8 adds
// the tx8 backend's simulated cycles, simulated tokens per second and compile cache.
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "tilegraph/model/llama_session.h"
#include "tilegraph/runtime/backend.h"

namespace tg::cli {

class RunReport {
 public:
  virtual ~RunReport() = default;
  // After the prompt's step, before the first decode step.
  virtual void prefill_done() {}
  // Lines for the text summary ("  simulated: ...\n"), and the same as JSON fields.
  virtual void print(const model::GenerationResult& result) = 0;
  virtual nlohmann::json json(const model::GenerationResult& result) = 0;
};

// A report for `backend`, or null for a backend it does not know.
using RunReportFactory = std::function<std::unique_ptr<RunReport>(Backend& backend)>;
void set_run_report(RunReportFactory make);

}  // namespace tg::cli
