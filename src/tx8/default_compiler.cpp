// The backend with the TX8 compiler behind it, and its registration: in a file of their own so
// that a program (a test) that gives the backend another compiler does not link this one.
#include <optional>
#include <string>

#include "tilegraph/backends.h"
#include "tilegraph/core/env.h"
#include "tilegraph/sim/chip_config.h"
#include "tilegraph/tx8/tx8_backend.h"

namespace tg::tx8 {

ChipCompiler default_chip_compiler() {
  return {[](const Graph& graph, const compiler::CompileOptions& options) {
            return compiler::compile_graph(graph, options);
          },
          [](const Tensor& node, std::string* why) { return compiler::chip_supports(node, why); }};
}

std::unique_ptr<Backend> make_tx8_backend(const BackendOptions& options) {
  Tx8Options tx8;
  std::string path = options.chip_config;
  if (path.empty()) {
    if (const std::optional<std::string> from_env = config::env("TG_TX8_CONFIG")) path = *from_env;
  }
  if (!path.empty()) tx8.chip = sim::load_chip_config(path);
  tx8.compiler = default_chip_compiler();
  return make_tx8_backend(options, std::move(tx8));
}

void register_tx8_backend() {
  register_backend("tx8", [](const BackendOptions& options) { return make_tx8_backend(options); });
}

}  // namespace tg::tx8
