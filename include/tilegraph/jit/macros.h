#pragma once
// Macros are the only way a caller specialises a template, and they end up as compiler
// arguments. They are checked before anything runs: names must be identifiers and values plain
// tokens, so no macro can smuggle in a second argument, a shell metacharacter or a newline.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tilegraph/jit/kernel.h"

namespace tg::jit {

// A kernel's macros, name → value, always sorted by name, so every walk over them (key, command
// line, manifest) is canonical and the order they were given in never matters. A flat sorted
// vector rather than a std::map: kernels have a handful of macros, and every memory hit of
// get_kernel walks them, which is a few contiguous loads here instead of a call per tree step.
class MacroMap {
 public:
  using value_type = std::pair<std::string, std::string>;
  using const_iterator = std::vector<value_type>::const_iterator;

  MacroMap() = default;
  // As with std::map, of repeated names the first is kept.
  MacroMap(std::initializer_list<value_type> macros);

  // Inserts `name` or replaces its value.
  void set(std::string name, std::string value);
  // Adds `name`; false, changing nothing, if it is already there.
  bool insert(std::string name, std::string value);
  // false if `name` was not there.
  bool erase(std::string_view name);
  void clear() { items_.clear(); }
  // nullptr if absent.
  const std::string* find(std::string_view name) const;

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  bool operator==(const MacroMap& other) const = default;

 private:
  // The first item not before `name`, for `items_` const or not.
  template <typename Items>
  static auto position(Items& items, std::string_view name);

  std::vector<value_type> items_;  // sorted by name, each name once
};

// A C identifier of at most 128 characters that does not start with "__" (reserved for the
// implementation and for the __ARCH__/__KT__ markers of the kernel key).
bool is_macro_name(std::string_view name);
// At most 256 characters, either a possibly ::-qualified identifier ("half", "tg::Float16") or a
// number ("128", "-1", "0x1F", "1.5e-3f").
bool is_macro_value(std::string_view value);

// Throws tg::Error naming the first offending macro and the accepted forms.
void validate_macros(const MacroMap& macros);

// torch_catlass's kernel-uuid string: "key=value&" for every macro in sorted order, then
// "__ARCH__=<arch>&__KT__=<kernel type>&".
std::string canonical_macros(const MacroMap& macros, std::string_view arch, KernelType type);

}  // namespace tg::jit
