#pragma once
// The source and dtype rules of ops.h, as a check of a finished node. The builders never make a
// node that breaks them, but nodes can also be built by hand, so backends check each node before
// running it (Backend::supports_op).
#include <string>

#include "tilegraph/core/tensor.h"

namespace tg {

// Empty when `node` keeps the rules of its op: the sources it needs are present, its own dtype
// and theirs are among those ops.h allows, enum parameters are in range. Otherwise what is wrong
// ("src[1] is missing", "idx is f32").
std::string node_rule_violation(const Tensor& node);

}  // namespace tg
