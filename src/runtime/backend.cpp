#include "tilegraph/runtime/backend.h"

#include <cstring>
#include <string>

#include "tilegraph/core/context.h"
#include "tilegraph/core/error.h"

namespace tg {

namespace {

class HostBuffer final : public Buffer {
 public:
  explicit HostBuffer(size_t bytes) : base_(aligned_alloc_bytes(bytes)), size_(bytes) {}
  ~HostBuffer() override { aligned_free_bytes(base_); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  void* base() override { return base_; }
  size_t size() const override { return size_; }

 private:
  void* base_;
  size_t size_;
};

std::string node_label(const Tensor& node) {
  std::string label(op_name(node.op));
  if (node.name[0]) label += std::string(" '") + node.name + "'";
  return label;
}

}  // namespace

std::unique_ptr<Buffer> make_host_buffer(size_t bytes) { return std::make_unique<HostBuffer>(bytes); }

void Buffer::check_range(const char* what, size_t offset, size_t bytes) const {
  if (offset > size() || bytes > size() - offset) {
    throw Error(std::string("buffer ") + what + ": bytes [" + std::to_string(offset) + ", " +
                std::to_string(offset + bytes) + ") outside the buffer of " + std::to_string(size()) + " bytes");
  }
}

void Buffer::set(size_t offset, const void* src, size_t bytes) {
  check_range("set", offset, bytes);
  if (bytes) std::memcpy(static_cast<char*>(base()) + offset, src, bytes);
}

void Buffer::get(size_t offset, void* dst, size_t bytes) {
  check_range("get", offset, bytes);
  if (bytes) std::memcpy(dst, static_cast<const char*>(base()) + offset, bytes);
}

void Buffer::fill(size_t offset, uint8_t value, size_t bytes) {
  check_range("fill", offset, bytes);
  if (bytes) std::memset(static_cast<char*>(base()) + offset, value, bytes);
}

void check_graph_runnable(const Backend& backend, const Graph& graph) {
  const std::string prefix = std::string(backend.name()) + ": ";
  for (const Tensor* node : graph.nodes()) {
    if (node->is_empty()) continue;
    std::string why;
    if (!backend.supports_op(*node, &why)) {
      throw Error(prefix + "unsupported " + node_label(*node) + " " + describe(*node) +
                  (why.empty() ? "" : ": " + why));
    }
    if (node->is_noop()) continue;
    if (!node->data) throw Error(prefix + node_label(*node) + " has no data (allocate the graph)");
    for (const Tensor* src : node->src) {
      if (src && !src->is_empty() && !src->data) {
        throw Error(prefix + "source " + describe(*src) + " of " + node_label(*node) +
                    " has no data (allocate the graph)");
      }
    }
  }
}

std::unique_ptr<CapturedGraph> Backend::capture(const Graph&) {
  throw Error(std::string(name()) + ": graph capture is not supported");
}

void Backend::launch(CapturedGraph&) { throw Error(std::string(name()) + ": graph capture is not supported"); }

}  // namespace tg
