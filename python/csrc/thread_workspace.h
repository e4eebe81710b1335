#pragma once
// The KernelWorkspace a run uses: one per calling thread, shared by every kernel that thread
// runs. CompiledGemm needs one per concurrent caller (torch.ops calls run without the GIL, so
// Python threads do call concurrently); per thread that holds without a lock, and memory grows
// with the number of calling threads and the largest problem each ran, not with the number of
// cached kernels. A thread's workspace is freed when the thread ends.
#include "tilegraph/evg/frontend/kernel_workspace.h"

namespace tg::python {

evg::frontend::KernelWorkspace& thread_workspace();

}  // namespace tg::python
