#include "tilegraph/runtime/reference_backend.h"

#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/core/reference.h"

namespace tg {

namespace {

class ReferenceBackend final : public Backend {
 public:
  std::string_view name() const override { return "reference"; }

  bool supports_op(const Tensor& node, std::string* why) const override {
    // The builders only create op/dtype combinations the reference implements.
    if (int(node.op) < 0 || int(node.op) >= kOpCount) {
      if (why) *why = "unknown op";
      return false;
    }
    return true;
  }

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
