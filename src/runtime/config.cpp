#include "tilegraph/runtime/config.h"

#include <algorithm>
#include <thread>

#include "tilegraph/runtime/backend.h"

namespace tg::config {

int default_num_threads() {
  // A machine with more cores than that gets the most a backend runs, not an error.
  const unsigned cores = std::clamp(std::thread::hardware_concurrency(), 1u, unsigned(kMaxThreads));
  return int(env_int("TG_NUM_THREADS", long(cores), 1, kMaxThreads));
}

}  // namespace tg::config
