#pragma once
// The backend contract (ggml's ggml_backend_i, as a small abstract class): a backend owns its
// execution resources, hands out buffers for tensor data, says which nodes it can run, and runs
// whole graphs. Errors are tg::Error whose message starts with the backend's name.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "tilegraph/core/graph.h"
#include "tilegraph/core/tensor.h"

namespace tg {

// A block of memory for tensor data. Host backends return host memory.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* base() = 0;
  virtual size_t size() const = 0;
};

// Aligned host memory, the buffer of every host backend.
std::unique_ptr<Buffer> make_host_buffer(size_t bytes);

struct BackendOptions {
  int num_threads = 0;  // 0: $TG_NUM_THREADS, else the number of cores
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual std::unique_ptr<Buffer> alloc_buffer(size_t bytes) { return make_host_buffer(bytes); }
  // Whether this backend can execute `node` as built (types, layouts). When it cannot and `why`
  // is non-null, *why says what is missing.
  virtual bool supports_op(const Tensor& node, std::string* why = nullptr) const = 0;
  // Executes every node of `graph` in order. Refuses (tg::Error) a graph with a node it does not
  // support or a node/source without data, before running anything.
  virtual void compute(const Graph& graph) = 0;
  // Waits for outstanding work (host backends finish inside compute).
  virtual void synchronize() {}
};

// Throws tg::Error("<backend>: <why>") for the first node the backend cannot run, or whose data
// (or whose sources' data) is missing. Backends call it at the top of compute().
void check_graph_runnable(const Backend& backend, const Graph& graph);

}  // namespace tg
