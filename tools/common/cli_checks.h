#pragma once
// Option validators that say what is wrong with a value. CLI11's Range reports "Value abc not in
// range" for a value that is not a number at all; these tell the two mistakes apart.
#include <CLI/CLI.hpp>
#include <charconv>
#include <string>
#include <string_view>
#include <system_error>

namespace tg::cli {

// A whole number in [min, max] (the option's own type T), as "INT in [min - max]" in --help. Every
// integer option of the tools checks its value with this. A decimal too large for T is out of
// range, never clamped (CLI11's own conversion, strtoull, would turn 99999999999999999999999 into
// 2^64 - 1). Only plain decimal passes: CLI11 converts the text after the check, and it would read
// "0x10" as hexadecimal and "010" as octal.
template <class T>
CLI::Validator integer_in(T min, T max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const std::string range = "expected " + std::to_string(min) + " to " + std::to_string(max);
        T value{};
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        const bool digits = stop == end && !text.empty();
        if (error == std::errc::result_out_of_range && digits) return text + " is out of range: " + range;
        // (an unsigned T refuses "-1" here too: from_chars reads no sign into it)
        if (error != std::errc() || !digits) return "'" + text + "' is not a whole number";
        const std::string_view magnitude = std::string_view(text).substr(text[0] == '-' ? 1 : 0);
        if (magnitude.size() > 1 && magnitude[0] == '0') return "'" + text + "': write it without leading zeros";
        if (value < min || value > max) return text + " is out of range: " + range;
        return {};
      },
      "INT in [" + std::to_string(min) + " - " + std::to_string(max) + "]");
}

}  // namespace tg::cli
