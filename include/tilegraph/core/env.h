#pragma once
// Environment variables as settings. Every knob has a C++ setting too; the environment only
// supplies defaults. Malformed values throw tg::Error naming the variable and the accepted forms.
#include <optional>
#include <string>

namespace tg::config {

std::optional<std::string> env(const char* name);
// "1/on/true/yes" and "0/off/false/no" (case-insensitive); unset -> fallback.
bool env_bool(const char* name, bool fallback);
// An integer in [min, max] (min >= 0), digits only; unset -> fallback.
long env_int(const char* name, long fallback, long min, long max);

}  // namespace tg::config
