#pragma once
// The query/run protocol every generated kernel's `run` follows around its own work (KernelCall
// in epilogue_params.h): a query reports the workspace sizes, a run checks the caller's workspace
// and does the work in it, and anything thrown becomes the call's error text, since nothing may
// be thrown across the dlopen boundary.
#include <cstddef>
#include <cstdio>
#include <exception>

#include "tilegraph/evg/driver/epilogue_params.h"

namespace tg::evg::driver {

inline void report_error(const KernelCall& call, const char* message) {
  if (call.error && call.error_capacity > 0) std::snprintf(call.error, call.error_capacity, "%s", message);
}

// sizes_of() -> WorkspaceSizes; work(std::byte* workspace, const WorkspaceSizes&).
template <class SizesOf, class Work>
void serve(const KernelCall& call, SizesOf&& sizes_of, Work&& work) {
  try {
    const WorkspaceSizes sizes = sizes_of();
    if (call.mode == KernelMode::kQuery) {
      if (!call.sizes) {
        report_error(call, "evg kernel: a query without KernelCall::sizes");
        return;
      }
      *call.sizes = sizes;
      return;
    }
    if (!call.workspace || call.workspace_bytes < sizes.total()) {
      report_error(call, "evg kernel: the workspace is smaller than the query said");
      return;
    }
    work(static_cast<std::byte*>(call.workspace), sizes);
  } catch (const std::exception& e) {
    report_error(call, e.what());
  }
}

}  // namespace tg::evg::driver
