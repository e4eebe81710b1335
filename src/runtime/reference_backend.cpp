#include "tilegraph/runtime/reference_backend.h"

#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/core/node_rules.h"
#include "tilegraph/core/reference.h"

namespace tg {

namespace {

class ReferenceBackend final : public Backend {
 public:
  std::string_view name() const override { return "reference"; }

  // The reference implements every op and dtype ops.h allows.
  bool supports_op(const Tensor& node, std::string* why) const override { return follows_node_rules(node, why); }

  void compute(const Graph& graph) override {
    check_graph_runnable(*this, graph);
    for (const Tensor* node : graph.nodes()) {
      try {
        reference::compute_node(*node);
      } catch (const Error& e) {
        throw Error(std::string("reference: ") + e.what());
      }
    }
  }
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend() { return std::make_unique<ReferenceBackend>(); }

}  // namespace tg
