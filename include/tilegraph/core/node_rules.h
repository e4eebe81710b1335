#pragma once
// The source and dtype rules of ops.h, as a check of a finished node. The builders never make a
// node that breaks them, but nodes can also be built by hand, so backends check each node before
// running it (Backend::supports_op).
#include <string>

#include "tilegraph/core/tensor.h"

namespace tg {

// Whether `node` keeps the rules of its op: the sources it needs are present, its own dtype and
// theirs are among those ops.h allows, enum parameters are in range. If not and `why` is given,
// *why says what is wrong ("src[1] is missing", "idx is f32"), as Backend::supports_op reports.
bool follows_node_rules(const Tensor& node, std::string* why = nullptr);

}  // namespace tg
