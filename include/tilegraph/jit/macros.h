#pragma once
// Macros are the only way a caller specialises a template, and they end up as compiler
// arguments. They are checked before anything runs: names must be identifiers and values plain
// tokens, so no macro can smuggle in a second argument, a shell metacharacter or a newline.
#include <string>
#include <string_view>

#include "tilegraph/jit/kernel.h"

namespace tg::jit {

// A C identifier of at most 128 characters that does not start with "__" (reserved for the
// implementation and for the __ARCH__/__KT__ markers of the kernel key).
bool is_macro_name(std::string_view name);
// At most 256 characters, either a possibly ::-qualified identifier ("half", "tg::Float16") or a
// number ("128", "-1", "0x1F", "1.5e-3f").
bool is_macro_value(std::string_view value);

// Throws tg::Error naming the first offending macro and the accepted forms.
void validate_macros(const MacroMap& macros);

// The seed's kernel-uuid string: "key=value&" for every macro in sorted order, then
// "__ARCH__=<arch>&__KT__=<kernel type>&".
std::string canonical_macros(const MacroMap& macros, std::string_view arch, KernelType type);

}  // namespace tg::jit
