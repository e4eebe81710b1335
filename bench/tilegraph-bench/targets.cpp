#include "targets.h"

#include <algorithm>
#include <cstdio>

namespace tg::bench {

std::string fmt(const char* format, double a, double b, double c) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

nlohmann::json targets_json(const std::vector<Target>& targets) {
  nlohmann::json out = nlohmann::json::array();
  for (const Target& t : targets) out.push_back({{"target", t.name}, {"measured", t.measured}, {"met", t.met}});
  return out;
}

void print_targets(const std::vector<Target>& targets, const std::string& heading) {
  int name_width = 0, measured_width = 0;
  for (const Target& t : targets) {
    name_width = std::max(name_width, int(t.name.size()));
    measured_width = std::max(measured_width, int(t.measured.size()));
  }
  std::printf("\n%s\n", heading.c_str());
  for (const Target& t : targets) {
    std::printf("  %-*s  %-*s  %s\n", name_width, t.name.c_str(), measured_width, t.measured.c_str(),
                t.met ? "met" : "NOT MET");
  }
}

}  // namespace tg::bench
