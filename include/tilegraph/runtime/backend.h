#pragma once
// The backend contract (ggml's ggml_backend_i, as a small abstract class): a backend owns its
// execution resources, hands out buffers for tensor data, says which nodes it can run, and runs
// whole graphs. Errors are tg::Error whose message starts with the backend's name.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tilegraph/core/error.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/core/tensor.h"

namespace tg {

class GraphMode;

// A block of memory for tensor data (ggml's ggml_backend_buffer_i). Tensors placed in it have
// `data == base() + offset`. Host buffers are plain memory, which kernels read and write through
// `data`. A device buffer's `base()` is the start of a range of host address space reserved for
// it and never readable (device_buffer.h): tensor pointers, views and the graph allocator work
// unchanged, while the bytes live on the device, at device_address() + offset, and reach the
// host only through set() and get() (tensor_data.h finds the buffer of a tensor's data).
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* base() = 0;
  virtual size_t size() const = 0;
  // Whether `base()` is host memory that code may dereference.
  virtual bool is_host() const { return true; }
  // Where the buffer starts in the device's address space (for host memory: its address).
  virtual uint64_t device_address() { return reinterpret_cast<uintptr_t>(base()); }
  // Copies `bytes` in at `offset` / out from `offset`; throws tg::Error past the end.
  virtual void set(size_t offset, const void* src, size_t bytes);
  virtual void get(size_t offset, void* dst, size_t bytes);
  // Sets `bytes` at `offset` to `value` (ggml's memset_tensor); clear() the whole buffer.
  virtual void fill(size_t offset, uint8_t value, size_t bytes);
  void clear(uint8_t value = 0) { fill(0, value, size()); }

 protected:
  // Throws tg::Error naming `what` unless [offset, offset + bytes) lies inside the buffer.
  void check_range(const char* what, size_t offset, size_t bytes) const;
};

// Aligned host memory, the buffer of every host backend.
std::unique_ptr<Buffer> make_host_buffer(size_t bytes);

// What a backend keeps of a weight in a layout of its own (Backend::prepare_weight). Destroying
// it gives that memory back; the backend then reads the weight as stored again.
class PreparedWeight {
 public:
  virtual ~PreparedWeight() = default;
  virtual size_t bytes() const = 0;
};

// A graph recorded by a backend for replay (an aclmdlRI / cudaGraphExec_t / CPU replay plan).
// It must not refer to the Tensor objects it was captured from: per-step graphs are rebuilt and
// freed, so everything replay needs is copied at capture or re-bound from the new graph.
class CapturedGraph {
 public:
  virtual ~CapturedGraph() = default;
  virtual size_t bytes() const = 0;  // host memory held, for the cache's byte bound
};

// The most threads a backend runs: ggml's GGML_MAX_N_THREADS. Beyond that a count is a mistake
// that would spend seconds starting threads (thousands of them) before anything fails.
inline constexpr int kMaxThreads = 512;

struct BackendOptions {
  int num_threads = 0;  // 0: $TG_NUM_THREADS, else the number of cores; at most kMaxThreads
  // Run a mul_mat or row op and the elementwise ops after it as one kernel where the backend can
  // (same bits either way). Off: node by node, to check or debug a fusion.
  bool fuse = true;
  // A device backend's configuration file, if it has one (the tx8 backend: a chip config JSON;
  // empty: $TG_TX8_CONFIG, else the default chip).
  std::string chip_config;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Threads that compute() runs on (1 for a backend without a thread pool).
  virtual int threads() const { return 1; }
  virtual std::unique_ptr<Buffer> alloc_buffer(size_t bytes) { return make_host_buffer(bytes); }
  // Whether alloc_buffer() gives host memory (ggml_backend_buft_is_host): then weights and inputs
  // already in host memory are used where they are.
  virtual bool host_buffers() const { return true; }
  // The type this backend keeps a weight stored as `stored` in: a backend without kernels for a
  // quantized type names the nearest one it runs, and models convert such weights at load.
  virtual DType weight_type(DType stored) const { return stored; }
  // A copy of weight `t` in a layout this backend's kernels read faster (ggml's extra buffer
  // types: the CPU backend's interleaved quantized matrices for decode), used wherever a graph
  // multiplies by t's data with t's type and shape, until the result is destroyed. t's data must
  // not change or be freed before then. Null: nothing to gain (or no memory for the copy), t is read
  // as stored.
  virtual std::unique_ptr<PreparedWeight> prepare_weight(const Tensor& t) {
    (void)t;
    return nullptr;
  }
  // Whether this backend can execute `node` as built (types, layouts). When it cannot and `why`
  // is non-null, *why says what is missing.
  virtual bool supports_op(const Tensor& node, std::string* why = nullptr) const = 0;
  // Executes every node of `graph` in order. Refuses (tg::Error) a graph with a node it does not
  // support or a node/source without data, before running anything.
  virtual void compute(const Graph& graph) = 0;
  // Waits for outstanding work (host backends finish inside compute).
  virtual void synchronize() {}

  // Graph capture (as ACL graph capture: capture begin -> execute every node -> capture end). A backend
  // that supports it overrides all four. capture() executes the graph while recording it, so
  // its results are the eager results; launch() replays; rebind() points a capture at the data
  // addresses of `graph`, which has the capture's structure, and returns false if it cannot.
  // capture() throws CaptureError if it fails before executing anything (graph mode then runs
  // the step eagerly); any other error is the step's own, and graph mode passes it on rather
  // than run again what may already have updated state in place.
  virtual bool can_capture(const Graph& graph, std::string* why = nullptr) const {
    (void)graph;
    if (why) *why = "backend does not capture graphs";
    return false;
  }
  virtual std::unique_ptr<CapturedGraph> capture(const Graph& graph);
  virtual void launch(CapturedGraph& captured);
  virtual bool rebind(CapturedGraph& captured, const Graph& graph) {
    (void)captured;
    (void)graph;
    return false;
  }
  // The graph-mode state (configuration, statistics, cache) of a backend that captures, or null.
  virtual GraphMode* graph_mode() { return nullptr; }
};

// A capture that failed before executing anything (see Backend::capture).
class CaptureError : public Error {
 public:
  using Error::Error;
};

// Throws tg::Error("<backend>: <why>") for the first node the backend cannot run, or whose data
// (or whose sources' data) is missing. Backends call it at the top of compute().
void check_graph_runnable(const Backend& backend, const Graph& graph);

}  // namespace tg
