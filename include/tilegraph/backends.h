#pragma once
// The registry of every backend built into this library (ggml-backend-reg's role): it is the one
// place that knows them all, so it sits above the backend layers.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/runtime/backend.h"

namespace tg {

// Names of the backends available in this build, in order of preference ("cpu", "reference").
std::vector<std::string> backend_names();
// Creates a backend by name; unknown names throw tg::Error listing the available ones.
std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& options = {});

}  // namespace tg
