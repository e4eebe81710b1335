#pragma once
// The "reference" backend: runs core/reference.cpp node by node, single-threaded. It exists to
// be the oracle behind the same Backend interface the fast backends implement.
#include <memory>

#include "tilegraph/runtime/backend.h"

namespace tg {

std::unique_ptr<Backend> make_reference_backend();

}  // namespace tg
