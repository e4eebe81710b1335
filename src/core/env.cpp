#include "tilegraph/core/env.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "tilegraph/core/error.h"

namespace tg::config {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

bool env_bool(const char* name, bool fallback) {
  const std::optional<std::string> raw = env(name);
  if (!raw || raw->empty()) return fallback;
  std::string value = *raw;
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (value == "1" || value == "on" || value == "true" || value == "yes") return true;
  if (value == "0" || value == "off" || value == "false" || value == "no") return false;
  throw Error(std::string(name) + "='" + *raw + "': expected on/off, true/false, yes/no or 1/0");
}

long env_int(const char* name, long fallback, long min, long max) {
  const std::optional<std::string> raw = env(name);
  if (!raw || raw->empty()) return fallback;
  char* end = nullptr;
  errno = 0;
  // strtol alone would also take leading blanks and a sign.
  const long value = std::isdigit(static_cast<unsigned char>((*raw)[0])) ? std::strtol(raw->c_str(), &end, 10) : -1;
  if (errno != 0 || end == nullptr || *end != '\0' || value < min || value > max) {
    throw Error(std::string(name) + "='" + *raw + "': expected an integer from " + std::to_string(min) + " to " +
                std::to_string(max));
  }
  return value;
}

}  // namespace tg::config
