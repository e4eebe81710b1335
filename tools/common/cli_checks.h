#pragma once
// Option validators that say what is wrong with a value. CLI11's Range reports "Value abc not in
// range" for a value that is not a number at all; these tell the two mistakes apart.
#include <CLI/CLI.hpp>
#include <string>
#include <type_traits>

namespace tg::cli {

// A whole number in [min, max] (the option's own type T), as "INT in [min - max]" in --help.
template <class T>
CLI::Validator integer_in(T min, T max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        T value{};
        // An unsigned conversion would wrap "-1" around to the largest value.
        const bool negative_for_unsigned = std::is_unsigned_v<T> && text.find('-') != std::string::npos;
        if (negative_for_unsigned || !CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a whole number";
        if (value < min || value > max) {
          return text + " is out of range: expected " + std::to_string(min) + " to " + std::to_string(max);
        }
        return {};
      },
      "INT in [" + std::to_string(min) + " - " + std::to_string(max) + "]");
}

}  // namespace tg::cli
