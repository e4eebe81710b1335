// `tilegraph-bench ops`: per-op throughput at LLM decode and prefill shapes (7B-class widths) on
// the CPU backend with 1 and 2 threads (the best instruction-set table, or --isa's), against the
// reference backend measured in the same run.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cpu_backend_internal.h"
#include "measure.h"
#include "suites.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/random_weights.h"

namespace tg::bench {

namespace {

struct OpCase {
  std::string op;
  std::string shape;
  double flops;  // 0 when the op is bandwidth-bound: report GB/s instead
  std::function<Tensor*(Context&)> build;
};

Tensor* input(Context& ctx, DType type, std::initializer_list<int64_t> ne) {
  Tensor* t = ctx.new_tensor(type, ne);
  static uint64_t seed = 1;
  model::fill_uniform(*t, seed++, 1.0f);
  return t;
}

Tensor* indices(Context& ctx, int64_t n, int64_t bound) {
  Tensor* t = ctx.new_tensor(DType::I32, {n});
  for (int64_t i = 0; i < n; ++i) static_cast<int32_t*>(t->data)[i] = int32_t((i * 7919) % bound);
  return t;
}

Tensor* causal_mask(Context& ctx, int64_t n_kv, int64_t n_q) {
  Tensor* t = ctx.new_tensor(DType::F32, {n_kv, n_q});
  for (int64_t q = 0; q < n_q; ++q) {
    for (int64_t k = 0; k < n_kv; ++k) {
      static_cast<float*>(t->data)[q * n_kv + k] = k <= n_kv - n_q + q ? 0.0f : -INFINITY;
    }
  }
  return t;
}

std::vector<OpCase> cases() {
  constexpr int64_t E = 4096, F = 11008, D = 128, H = 32, HKV = 8;
  std::vector<OpCase> c;
  // Float weights converted in registers; bf16 and the quantized types against their rounded
  // activations (quant.h), the quantized ones as integers.
  for (DType w : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K}) {
    c.push_back({"mul_mat", std::string(dtype_name(w)) + " 4096x4096 x 1", 0, [w](Context& x) {
                   return mul_mat(x, input(x, w, {E, E}), input(x, DType::F32, {E, 1}));
                 }});
  }
  // A few tokens at once (speculative decoding, small batches): still bound by reading a once.
  c.push_back({"mul_mat", "q8_0 4096x4096 x 8", 0, [](Context& x) {
                 return mul_mat(x, input(x, DType::Q8_0, {E, E}), input(x, DType::F32, {E, 8}));
               }});
  c.push_back({"mul_mat", "f32 4096x4096 x 32", 2.0 * E * E * 32, [](Context& x) {
                 return mul_mat(x, input(x, DType::F32, {E, E}), input(x, DType::F32, {E, 32}));
               }});
  // Prefill: the float GEMM (bf16 in pairs on AVX512_BF16, on AMX-BF16 tiles on AMX) and the integer GEMM.
  for (DType w : {DType::F32, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K}) {
    c.push_back({"mul_mat", std::string(dtype_name(w)) + " 4096x4096 x 256", 2.0 * E * E * 256, [w](Context& x) {
                   return mul_mat(x, input(x, w, {E, E}), input(x, DType::F32, {E, 256}));
                 }});
  }
  c.push_back({"add", "f32 4096x64", 0, [](Context& x) {
                 return add(x, input(x, DType::F32, {E, 64}), input(x, DType::F32, {E, 64}));
               }});
  c.push_back({"mul", "f32 4096x64 * row", 0, [](Context& x) {
                 return mul(x, input(x, DType::F32, {E, 64}), input(x, DType::F32, {E}));
               }});
  c.push_back({"scale", "f32 4096x64", 0, [](Context& x) { return scale(x, input(x, DType::F32, {E, 64}), 0.5f); }});
  c.push_back({"unary silu", "f32 11008x16", 0, [](Context& x) { return silu(x, input(x, DType::F32, {F, 16})); }});
  c.push_back({"unary gelu", "f32 11008x16", 0, [](Context& x) { return gelu(x, input(x, DType::F32, {F, 16})); }});
  c.push_back({"glu swiglu", "f32 11008x16", 0, [](Context& x) {
                 return swiglu(x, input(x, DType::F32, {F, 16}), input(x, DType::F32, {F, 16}));
               }});
  c.push_back({"rms_norm", "f32 4096x64", 0, [](Context& x) {
                 return rms_norm(x, input(x, DType::F32, {E, 64}), 1e-5f);
               }});
  c.push_back({"norm", "f32 4096x64", 0, [](Context& x) { return norm(x, input(x, DType::F32, {E, 64}), 1e-5f); }});
  c.push_back({"soft_max", "f32 kv4096 x 32 heads, mask", 0, [](Context& x) {
                 return soft_max(x, input(x, DType::F32, {4096, 1, H}), causal_mask(x, 4096, 1), 0.088f);
               }});
  c.push_back({"rope", "f32 128x32x16", 0, [](Context& x) {
                 RopeParams p;
                 p.n_dims = int32_t(D);
                 return rope(x, input(x, DType::F32, {D, H, 16}), indices(x, 16, 4096), p);
               }});
  c.push_back({"get_rows", "q8_0 4096x8000, 16 rows", 0, [](Context& x) {
                 return get_rows(x, input(x, DType::Q8_0, {E, 8000}), indices(x, 16, 8000));
               }});
  c.push_back(
      {"set_rows", "f16 cache 1024x4096, 16 rows", 0, [](Context& x) {
         return set_rows(x, input(x, DType::F16, {1024, 4096}), input(x, DType::F32, {1024, 16}), indices(x, 16, 4096));
       }});
  c.push_back({"cpy", "f32->f16 4096x64", 0, [](Context& x) {
                 return cpy(x, input(x, DType::F32, {E, 64}), input(x, DType::F16, {E, 64}));
               }});
  c.push_back({"cont", "f32 transposed 64x4096", 0, [](Context& x) {
                 return cont(x, transpose(x, input(x, DType::F32, {E, 64})));
               }});
  c.push_back({"flash_attn_ext", "decode q1 kv2048 f16, 32/8 heads", 4.0 * D * 2048 * H, [](Context& x) {
                 return flash_attn_ext(x, input(x, DType::F32, {D, 1, H}), input(x, DType::F16, {D, 2048, HKV}),
                                       input(x, DType::F16, {D, 2048, HKV}), causal_mask(x, 2048, 1), 0.088f);
               }});
  c.push_back({"flash_attn_ext", "prefill q16 kv256 f16, 32/8 heads", 4.0 * D * 256 * 16 * H, [](Context& x) {
                 return flash_attn_ext(x, input(x, DType::F32, {D, 16, H}), input(x, DType::F16, {D, 256, HKV}),
                                       input(x, DType::F16, {D, 256, HKV}), causal_mask(x, 256, 16), 0.088f);
               }});
  c.push_back({"sum_rows", "f32 32000x4", 0, [](Context& x) { return sum_rows(x, input(x, DType::F32, {32000, 4})); }});
  c.push_back({"argmax", "f32 32000x4", 0, [](Context& x) { return argmax(x, input(x, DType::F32, {32000, 4})); }});
  c.push_back({"conv_2d", "3x3 64->64 on 28x28", 2.0 * 28 * 28 * 64 * 64 * 9, [](Context& x) {
                 return conv_2d(x, input(x, DType::F32, {3, 3, 64, 64}), input(x, DType::F32, {28, 28, 64, 1}),
                                {.p0 = 1, .p1 = 1});
               }});
  c.push_back({"pool_2d", "max 2x2 on 56x56x64", 0, [](Context& x) {
                 return pool_2d(x, input(x, DType::F32, {56, 56, 64}), {});
               }});
  c.push_back({"batch_norm", "f32 56x56x64", 0, [](Context& x) {
                 Tensor* var = input(x, DType::F32, {64});
                 for (int i = 0; i < 64; ++i) static_cast<float*>(var->data)[i] += 1.5f;
                 return batch_norm(x, input(x, DType::F32, {56, 56, 64}), input(x, DType::F32, {64}), var,
                                   input(x, DType::F32, {64}), input(x, DType::F32, {64}), 1e-5f);
               }});
  c.push_back({"concat", "f32 4096x32 + 4096x32 dim 1", 0, [](Context& x) {
                 return concat(x, input(x, DType::F32, {E, 32}), input(x, DType::F32, {E, 32}), 1);
               }});
  return c;
}

// Bytes a node moves: every source read once and the result written once — except the row
// gathers and scatters, which touch only the rows they index.
double traffic_bytes(const Tensor* node) {
  if (node->op == Op::GET_ROWS) {
    const Tensor& table = *node->src[0];
    return double(node->nbytes()) + double(node->src[1]->nbytes()) +
           double(node->nrows()) * double(row_size(table.type, table.ne[0]));
  }
  if (node->op == Op::SET_ROWS) {
    const Tensor& rows = *node->src[1];
    return double(rows.nbytes()) + double(node->src[2]->nbytes()) +
           double(rows.nrows()) * double(row_size(node->type, node->ne[0]));
  }
  double bytes = double(node->nbytes());
  for (const Tensor* s : node->src) {
    if (s) bytes += double(s->nbytes());
  }
  return bytes;
}

}  // namespace

void add_ops_suite(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto filter = std::make_shared<std::string>();
  auto isa_name = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("ops", "Per-op throughput, CPU backend (1 and 2 threads) vs the reference backend");
  cmd->add_flag("--json", *json, std::string("Print one JSON object instead of the table"));
  cmd->add_option("--filter", *filter, "Only cases whose op name contains this text");
  std::vector<std::string> isa_names;
  for (int i = 0; i < cpu::kIsaCount; ++i) isa_names.emplace_back(cpu::isa_name(cpu::Isa(i)));
  cmd->add_option("--isa", *isa_name, "The CPU backend's instruction-set table (default: the best this CPU runs)")
      ->check(CLI::IsMember(isa_names));
  cmd->callback([json, filter, isa_name] {
    std::vector<OpCase> selected;
    std::string ops;
    for (const OpCase& c : cases()) {
      if (ops.find(" " + c.op + ",") == std::string::npos) ops += " " + c.op + ",";
      if (filter->empty() || c.op.find(*filter) != std::string::npos) selected.push_back(c);
    }
    if (selected.empty()) {
      ops.pop_back();
      throw CLI::ValidationError("--filter", "no op name contains '" + *filter + "' (ops:" + ops + ")");
    }
    struct Config {
      std::string label;
      std::string backend;
      int threads;
    };
    const std::vector<Config> configs = {{"reference", "reference", 1}, {"cpu-1t", "cpu", 1}, {"cpu-2t", "cpu", 2}};
    std::vector<std::unique_ptr<Backend>> backends;
    cpu::Isa isa = cpu::best_isa();
    for (int i = 0; i < cpu::kIsaCount; ++i) {
      if (cpu::isa_name(cpu::Isa(i)) == *isa_name) isa = cpu::Isa(i);
    }
    for (const Config& c : configs) {
      const BackendOptions options{.num_threads = c.threads};
      backends.push_back(c.backend == "cpu" ? cpu::make_cpu_backend(options, isa) : make_backend(c.backend, options));
    }

    nlohmann::json results = nlohmann::json::array();
    if (!*json) {
      std::printf("cpu backend: the %s table\n", std::string(cpu::isa_name(isa)).c_str());
      std::printf("%-15s %-36s %-7s %10s %10s %10s %9s %9s\n", "op", "case", "unit", "reference", "cpu-1t", "cpu-2t",
                  "1t/ref", "2t/1t");
    }
    for (const OpCase& c : selected) {
      Context ctx;
      Tensor* out = c.build(ctx);
      Graph graph = Graph::build(out);
      const double work = c.flops > 0 ? c.flops : traffic_bytes(out);
      std::vector<double> rates;
      nlohmann::json entry = {{"op", c.op}, {"case", c.shape}, {"unit", c.flops > 0 ? "GFLOP/s" : "GB/s"}};
      for (size_t i = 0; i < configs.size(); ++i) {
        Backend& backend = *backends[i];
        const bool slow = configs[i].backend == "reference";
        const Timing t = measure(
            c.op + "/" + c.shape + "/" + configs[i].label, [&] { backend.compute(graph); }, slow ? 3 : 5,
            slow ? 0.01 : 0.05);
        rates.push_back(work / t.median_s / 1e9);
        entry[configs[i].label] = {
            {"median_s", t.median_s}, {"min_s", t.min_s}, {"max_s", t.max_s}, {"rate", rates.back()}};
      }
      entry["ratio_1t_vs_reference"] = rates[1] / rates[0];
      entry["ratio_2t_vs_1t"] = rates[2] / rates[1];
      if (*json) {
        results.push_back(entry);
      } else {
        std::printf("%-15s %-36s %-7s %10.2f %10.2f %10.2f %8.1fx %8.2fx\n", c.op.c_str(), c.shape.c_str(),
                    c.flops > 0 ? "GFLOP/s" : "GB/s", rates[0], rates[1], rates[2], rates[1] / rates[0],
                    rates[2] / rates[1]);
        std::fflush(stdout);
      }
    }
    if (*json)
      std::printf("%s\n",
                  nlohmann::json{{"suite", "ops"}, {"isa", cpu::isa_name(isa)}, {"results", results}}.dump(2).c_str());
  });
}

}  // namespace tg::bench
