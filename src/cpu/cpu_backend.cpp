#include "tilegraph/cpu/cpu_backend.h"

#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cpu/cpu_backend_internal.h"
#include "cpu/fusion.h"
#include "cpu/kernels.h"
#include "cpu/matmul_call.h"
#include "cpu/replay_plan.h"
#include "cpu/row_ops.h"
#include "cpu/thread_pool.h"
#include "tilegraph/core/error.h"
#include "tilegraph/runtime/config.h"
#include "tilegraph/runtime/graph_mode.h"

namespace tg::cpu {

namespace {

Kernel kernel_for(Op op) {
  switch (op) {
    case Op::MUL_MAT: return run_mul_mat;
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV:
    case Op::SCALE:
    case Op::UNARY:
    case Op::GLU:
    case Op::NORM:
    case Op::RMS_NORM: return run_row_op;
    case Op::SOFT_MAX: return run_soft_max;
    case Op::ROPE: return run_rope;
    case Op::GET_ROWS: return run_get_rows;
    case Op::SET_ROWS: return run_set_rows;
    case Op::CPY:
    case Op::CONT: return run_copy;
    case Op::FLASH_ATTN_EXT: return run_flash_attn_ext;
    case Op::SUM_ROWS: return run_sum_rows;
    case Op::ARGMAX: return run_argmax;
    case Op::BATCH_NORM: return run_batch_norm;
    case Op::CONV_2D: return run_conv_2d;
    case Op::POOL_2D: return run_pool_2d;
    case Op::CONCAT: return run_concat;
    case Op::NONE:
    case Op::VIEW:
    case Op::RESHAPE:
    case Op::PERMUTE:
    case Op::TRANSPOSE: return nullptr;
  }
  return nullptr;
}

bool is_float(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::BF16;
}

// The dtype rules of ops.h, checked again because nodes can also be built by hand. Returns an
// empty string when the node is runnable, else what is wrong.
std::string unsupported_reason(const Tensor& node) {
  const Tensor* const* src = node.src;
  auto need = [&](std::initializer_list<int> indices) -> std::string {
    for (int i : indices) {
      if (!src[i]) return "src[" + std::to_string(i) + "] is missing";
    }
    return "";
  };
  auto type_of = [&](int i) { return std::string(dtype_name(src[i]->type)); };
  const std::string node_type(dtype_name(node.type));

  switch (node.op) {
    case Op::NONE:
    case Op::VIEW:
    case Op::RESHAPE:
    case Op::PERMUTE:
    case Op::TRANSPOSE: return "";
    case Op::MUL_MAT:
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (!is_float(src[0]->type) && src[0]->type != DType::Q8_0) return "a is " + type_of(0);
      if (!is_float(src[1]->type)) return "b is " + type_of(1);
      return node.type == DType::F32 ? "" : "result is " + node_type;
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV:
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (!is_float(src[0]->type) || !is_float(src[1]->type) || !is_float(node.type)) {
        return "operands are " + type_of(0) + " and " + type_of(1) + ", result " + node_type;
      }
      return "";
    case Op::SCALE:
    case Op::NORM:
    case Op::RMS_NORM:
    case Op::UNARY:
      if (auto m = need({0}); !m.empty()) return m;
      if (!is_float(src[0]->type) || !is_float(node.type)) return "a is " + type_of(0);
      if (node.op == Op::UNARY && (node.op_params[0] < 0 || node.op_params[0] >= kUnaryOpCount)) {
        return "unknown unary op " + std::to_string(node.op_params[0]);
      }
      return "";
    case Op::GLU:
      if (auto m = need({0}); !m.empty()) return m;
      if (!is_float(src[0]->type) || (src[1] && !is_float(src[1]->type)) || !is_float(node.type)) {
        return "operands must be f32, f16 or bf16";
      }
      if (node.op_params[0] < 0 || node.op_params[0] >= kGluOpCount) {
        return "unknown glu op " + std::to_string(node.op_params[0]);
      }
      return "";
    case Op::SOFT_MAX:
      if (auto m = need({0}); !m.empty()) return m;
      if (!is_float(src[0]->type) || !is_float(node.type)) return "a is " + type_of(0);
      if (src[1] && src[1]->type != DType::F32 && src[1]->type != DType::F16)
        return "mask is " + type_of(1);
      return "";
    case Op::ROPE:
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (src[0]->type != DType::F32 && src[0]->type != DType::F16) return "a is " + type_of(0);
      if (src[1]->type != DType::I32) return "pos is " + type_of(1);
      if (src[2] && src[2]->type != DType::F32) return "freq_factors is " + type_of(2);
      return node.type == src[0]->type ? "" : "result is " + node_type;
    case Op::GET_ROWS: {
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (src[1]->type != DType::I32) return "idx is " + type_of(1);
      const DType expected = src[0]->type == DType::I32 ? DType::I32 : DType::F32;
      return node.type == expected ? "" : "result is " + node_type;
    }
    case Op::SET_ROWS:
      if (auto m = need({1, 2}); !m.empty()) return m;
      if (!is_float(node.type) && node.type != DType::Q8_0) return "dst is " + node_type;
      if (src[1]->type != DType::F32) return "src is " + type_of(1);
      return src[2]->type == DType::I32 ? "" : "idx is " + type_of(2);
    case Op::CPY:
    case Op::CONT: {
      if (auto m = need({0}); !m.empty()) return m;
      const bool ints = src[0]->type == DType::I32 && node.type == DType::I32;
      const bool numeric = src[0]->type != DType::I32 && node.type != DType::I32;
      if (!ints && !numeric)
        return "i32 copies only to i32 (" + type_of(0) + " -> " + node_type + ")";
      return src[0]->nelements() == node.nelements() ? "" : "element counts differ";
    }
    case Op::FLASH_ATTN_EXT:
      if (auto m = need({0, 1, 2}); !m.empty()) return m;
      if (src[0]->type != DType::F32) return "q is " + type_of(0);
      if (!is_float(src[1]->type) || !is_float(src[2]->type))
        return "k/v are " + type_of(1) + "/" + type_of(2);
      if (src[3] && src[3]->type != DType::F32 && src[3]->type != DType::F16)
        return "mask is " + type_of(3);
      return node.type == DType::F32 ? "" : "result is " + node_type;
    case Op::SUM_ROWS:
    case Op::ARGMAX:
      if (auto m = need({0}); !m.empty()) return m;
      return src[0]->type == DType::F32 ? "" : "a is " + type_of(0);
    case Op::BATCH_NORM:
      if (auto m = need({0, 1, 2}); !m.empty()) return m;
      for (int i = 0; i < 5; ++i) {
        if (src[i] && src[i]->type != DType::F32)
          return "src[" + std::to_string(i) + "] is " + type_of(i);
      }
      return "";
    case Op::CONV_2D:
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (src[0]->type != DType::F32 && src[0]->type != DType::F16)
        return "kernel is " + type_of(0);
      return src[1]->type == DType::F32 ? "" : "input is " + type_of(1);
    case Op::POOL_2D:
      if (auto m = need({0}); !m.empty()) return m;
      return src[0]->type == DType::F32 ? "" : "a is " + type_of(0);
    case Op::CONCAT:
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (src[0]->type != src[1]->type || src[0]->type != node.type) return "types differ";
      return node.type == DType::Q8_0 ? "q8_0 is not supported" : "";
  }
  return "unknown op " + std::to_string(int(node.op));
}

class CpuBackend final : public Backend {
 public:
  CpuBackend(int n_threads, Isa isa, bool fuse) : pool_(n_threads), exec_(pool_, vec_kernels(isa)), fuse_(fuse) {
    if (n_threads > 1) {
      solo_pools_.reserve(size_t(n_threads));
      solo_exec_.reserve(size_t(n_threads));
      for (int t = 0; t < n_threads; ++t) {
        solo_pools_.push_back(std::make_unique<ThreadPool>(1));
        solo_exec_.emplace_back(*solo_pools_.back(), vec_kernels(isa));
      }
    }
  }

  std::string_view name() const override { return "cpu"; }

  bool supports_op(const Tensor& node, std::string* why) const override {
    std::string reason = unsupported_reason(node);
    if (reason.empty()) return true;
    if (why) *why = std::move(reason);
    return false;
  }

  // Graph mode decides between eager execution, replaying a captured plan and capturing one.
  void compute(const Graph& graph) override {
    // The pool and the scratch buffers serve one graph at a time.
    std::lock_guard<std::mutex> lock(mutex_);
    mode_.compute(*this, graph, [&] { compute_eager(graph); });
  }

  bool can_capture(const Graph& graph, std::string* why) const override {
    for (const Tensor* node : graph.nodes()) {
      if (!node->is_noop() && !supports_op(*node, why)) return false;
    }
    return true;
  }

  // Builds the replay plan and executes it: the capture's results are the first replay's.
  std::unique_ptr<CapturedGraph> capture(const Graph& graph) override {
    check_graph_runnable(*this, graph);
    std::unique_ptr<ReplayPlan> plan;
    try {
      plan = std::make_unique<ReplayPlan>(graph, kernel_for, exec_, fuse_);
    } catch (const Error& e) {
      throw CaptureError(std::string("cpu: capture: ") + e.what());
    }
    plan->run(exec_, solo_exec_);
    return plan;
  }

  void launch(CapturedGraph& captured) override { static_cast<ReplayPlan&>(captured).run(exec_, solo_exec_); }

  bool rebind(CapturedGraph& captured, const Graph& graph) override {
    // A tensor left without memory makes the graph unrunnable: capturing again reports it.
    for (const Tensor* t : graph.nodes()) {
      if (!t->data && !t->is_empty() && !t->is_noop()) return false;
    }
    for (const Tensor* t : graph.leafs()) {
      if (!t->data && !t->is_empty()) return false;
    }
    return static_cast<ReplayPlan&>(captured).rebind(graph);
  }

  GraphMode* graph_mode() override { return &mode_; }

 private:
  // Node by node, with the fusions of a replay plan (fusion.h): eager saves the intermediate
  // passes too, and both modes give the same bits.
  void compute_eager(const Graph& graph) {
    check_graph_runnable(*this, graph);
    executed_.collect(graph, [&](size_t i) { return graph.nodes()[i]; });
    for (size_t e = 0; e < executed_.size(); ++e) {
      const Tensor& node = executed_[e];
      try {
        std::optional<MatmulCall> matmul;
        if (node.op == Op::MUL_MAT) matmul = prepare_matmul(node, exec_.vec().isa, exec_.max_threads());
        const ChainKind kind = fuse_ ? chain_kind(node, matmul.has_value()) : ChainKind::kNone;
        if (kind == ChainKind::kNone) {
          chain_.assign(1, &node);
        } else {
          grow_chain(executed_, e, kind, chain_);
        }
        if (matmul) {
          run_matmul(*matmul, node, std::span<const Tensor* const>(chain_).subspan(1), exec_);
        } else if (chain_.size() > 1) {
          run_row_op_chain(chain_, exec_);
        } else {
          kernel_for(node.op)(node, exec_);
        }
        e += chain_.size() - 1;
      } catch (const std::exception& e) {
        throw node_error(node, e);
      }
    }
  }

  std::mutex mutex_;
  ThreadPool pool_;
  ExecContext exec_;
  // One single-thread context per thread, for replay steps that run whole on one thread.
  std::vector<std::unique_ptr<ThreadPool>> solo_pools_;
  std::vector<ExecContext> solo_exec_;
  const bool fuse_;
  GraphMode mode_;
  // compute_eager's working memory, kept between graphs so that steady steps allocate nothing.
  ExecutedNodes executed_;
  std::vector<const Tensor*> chain_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options, Isa isa) {
  if (int(isa) > int(best_isa())) {
    throw Error("cpu: this CPU cannot run the " + std::string(isa_name(isa)) +
                " kernels (best: " + std::string(isa_name(best_isa())) + ")");
  }
  const int n_threads =
      options.num_threads > 0 ? options.num_threads : config::default_num_threads();
  return std::make_unique<CpuBackend>(n_threads, isa, options.fuse);
}

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options) {
  return make_cpu_backend(options, best_isa());
}

}  // namespace tg::cpu
