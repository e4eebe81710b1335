#pragma once
// The registry of every backend built into this library (ggml-backend-reg's role): it is the one
// place that knows them all, so it sits above the backend layers.
#include <functional>
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
// Adds a backend built outside this library (ggml_backend_register): the tx8 backend, whose
// layer links the TX8 compiler, registers itself in the programs that link it
// (tx8::register_tx8_backend). A name registered twice keeps its first factory.
void register_backend(std::string_view name, std::function<std::unique_ptr<Backend>(const BackendOptions&)> make);

}  // namespace tg
