#include "tilegraph/cpu/cpu_backend.h"

#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cpu_backend_internal.h"
#include "fusion.h"
#include "kernels.h"
#include "matmul_call.h"
#include "prepared_weights.h"
#include "replay_plan.h"
#include "row_ops.h"
#include "thread_pool.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/node_rules.h"
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

class CpuBackend final : public Backend {
 public:
  CpuBackend(int n_threads, Isa isa, bool fuse, bool prepares_copies)
      : pool_(n_threads), exec_(pool_, vec_kernels(isa)), fuse_(fuse), prepares_copies_(prepares_copies) {
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
  int threads() const override { return pool_.size(); }

  bool supports_op(const Tensor& node, std::string* why) const override { return follows_node_rules(node, why); }

  std::unique_ptr<PreparedWeight> prepare_weight(const Tensor& t) override {
    if (!prepares_copies_) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);  // the pool lays the copy out
    return interleave_weight(t, exec_);
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
        const bool quant_matmul = !matmul && mul_mat_uses_quant_gemm(node);
        const ChainKind kind = fuse_ ? chain_kind(node, matmul.has_value() || quant_matmul) : ChainKind::kNone;
        if (kind == ChainKind::kNone) {
          chain_.assign(1, &node);
        } else {
          grow_chain(executed_, e, kind, chain_);
        }
        if (matmul) {
          run_matmul(*matmul, node, std::span<const Tensor* const>(chain_).subspan(1), exec_);
        } else if (quant_matmul && chain_.size() > 1) {
          run_quant_matmul(node, std::span<const Tensor* const>(chain_).subspan(1), exec_);
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
  const bool prepares_copies_;
  GraphMode mode_;
  // compute_eager's working memory, kept between graphs so that steady steps allocate nothing.
  ExecutedNodes executed_;
  std::vector<const Tensor*> chain_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options, Isa isa, InterleavedCopies copies) {
  if (int(isa) > int(best_isa())) {
    throw Error("cpu: this CPU cannot run the " + std::string(isa_name(isa)) +
                " kernels (best: " + std::string(isa_name(best_isa())) + ")");
  }
  const int n_threads = options.num_threads > 0 ? options.num_threads : config::default_num_threads();
  const bool prepares_copies = copies == InterleavedCopies::ALWAYS || decodes_interleaved_copies();
  return std::make_unique<CpuBackend>(n_threads, isa, options.fuse, prepares_copies);
}

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options) {
  return make_cpu_backend(options, best_isa());
}

}  // namespace tg::cpu
