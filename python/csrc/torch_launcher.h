#pragma once
// torch's intra-op thread pool as an evg::Launcher, the form CompiledGemm spreads its blocks
// with: torch_catlass's kernel runner launches on the NPU's cores, this one on at::parallel_for's
// threads, as many as torch.get_num_threads() (one inside another parallel region, where
// at::parallel_for runs on the calling thread alone).
#include "tilegraph/evg/block.h"

namespace tg::python {

evg::Launcher torch_launcher();

}  // namespace tg::python
