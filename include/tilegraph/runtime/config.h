#pragma once
// The runtime's settings from the environment (the helpers are in core/env.h).
#include "tilegraph/core/env.h"

namespace tg::config {

// $TG_NUM_THREADS, else the number of online cores (at most kMaxThreads).
int default_num_threads();

}  // namespace tg::config
