#pragma once
// The backend's thread pool as an evg::Launcher, the form the GEMM kernel layer (and kernels
// compiled by the JIT) take their threads in.
#include "thread_pool.h"
#include "tilegraph/evg/block.h"

namespace tg::cpu {

// Items are handed out one at a time from a shared counter, so that a thread slowed by other
// work on a shared machine takes fewer of them. A single item runs on the calling thread alone.
evg::Launcher make_launcher(ThreadPool& pool);

}  // namespace tg::cpu
