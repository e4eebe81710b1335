#include "tilegraph/jit/macros.h"

#include <algorithm>

#include "tilegraph/core/error.h"

namespace tg::jit {

namespace {

constexpr size_t kMaxNameLength = 128;
constexpr size_t kMaxValueLength = 256;

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_ident_start(s[0])) return false;
  for (char c : s) {
    if (!is_ident_char(c)) return false;
  }
  return true;
}

bool is_qualified_identifier(std::string_view s) {
  if (s.starts_with("::")) s.remove_prefix(2);
  for (;;) {
    const size_t sep = s.find("::");
    if (!is_identifier(s.substr(0, sep))) return false;
    if (sep == std::string_view::npos) return true;
    s.remove_prefix(sep + 2);
  }
}

// A C++ numeric literal, loosely: a digit (after an optional minus), then digits, letters, '_',
// '.' and a sign right after an exponent letter. Loose is fine: the compiler judges the literal;
// what matters here is that nothing outside this alphabet gets through.
bool is_number(std::string_view s) {
  if (s.starts_with('-')) s.remove_prefix(1);
  if (s.empty() || !is_digit(s[0])) return false;
  for (size_t i = 1; i < s.size(); ++i) {
    const char c = s[i];
    const bool exponent_sign =
        (c == '+' || c == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E' || s[i - 1] == 'p' || s[i - 1] == 'P');
    if (!is_ident_char(c) && c != '.' && !exponent_sign) return false;
  }
  return true;
}

// Shows control characters in an error message instead of printing them raw.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

MacroMap::MacroMap(std::initializer_list<value_type> macros) {
  for (const value_type& macro : macros) insert(macro.first, macro.second);
}

template <typename Items>
auto MacroMap::position(Items& items, std::string_view name) {
  return std::lower_bound(items.begin(), items.end(), name,
                          [](const value_type& item, std::string_view n) { return item.first < n; });
}

void MacroMap::set(std::string name, std::string value) {
  const auto it = position(items_, name);
  if (it != items_.end() && it->first == name) {
    it->second = std::move(value);
  } else {
    items_.insert(it, {std::move(name), std::move(value)});
  }
}

bool MacroMap::insert(std::string name, std::string value) {
  const auto it = position(items_, name);
  if (it != items_.end() && it->first == name) return false;
  items_.insert(it, {std::move(name), std::move(value)});
  return true;
}

bool MacroMap::erase(std::string_view name) {
  const auto it = position(items_, name);
  if (it == items_.end() || it->first != name) return false;
  items_.erase(it);
  return true;
}

const std::string* MacroMap::find(std::string_view name) const {
  const auto it = position(items_, name);
  return it != items_.end() && it->first == name ? &it->second : nullptr;
}

bool is_macro_name(std::string_view name) {
  return name.size() <= kMaxNameLength && is_identifier(name) && !name.starts_with("__");
}

bool is_macro_value(std::string_view value) {
  return value.size() <= kMaxValueLength && (is_qualified_identifier(value) || is_number(value));
}

void validate_macros(const MacroMap& macros) {
  for (const auto& [name, value] : macros) {
    if (!is_macro_name(name)) {
      throw Error("jit: macro name '" + printable(name) +
                  "' rejected: names are C identifiers of at most 128 characters not starting "
                  "with \"__\"");
    }
    if (!is_macro_value(value)) {
      throw Error("jit: macro " + name + "='" + printable(value) +
                  "' rejected: values are identifiers (optionally ::-qualified) or numbers of at "
                  "most 256 characters");
    }
  }
}

std::string canonical_macros(const MacroMap& macros, std::string_view arch, KernelType type) {
  std::string out;
  for (const auto& [name, value] : macros) out += name + "=" + value + "&";
  out += "__ARCH__=" + std::string(arch) + "&";
  out += "__KT__=" + std::string(to_string(type)) + "&";
  return out;
}

}  // namespace tg::jit
