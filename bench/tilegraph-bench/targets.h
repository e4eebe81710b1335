#pragma once
// A suite's targets from its issue, each with what this run measured: printed as a table after
// the figures, or as a JSON array.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tg::bench {

struct Target {
  std::string name;
  std::string measured;
  bool met;
};

// printf-formats up to three numbers (for Target::measured).
std::string fmt(const char* format, double a, double b = 0, double c = 0);

nlohmann::json targets_json(const std::vector<Target>& targets);
// "targets" and one line per target, the columns as wide as their longest entry.
void print_targets(const std::vector<Target>& targets, const std::string& heading = "targets");

}  // namespace tg::bench
