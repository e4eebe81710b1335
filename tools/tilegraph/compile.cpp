// `tilegraph compile`: imports a llama step's graph (the graph `tilegraph run` computes for a
// prefill or a decode step) into the TX8 compiler's tx8be dialect and prints the module
// (docs/compiler.md). Built only with the compiler (TG_BUILD_COMPILER), into tilegraph-compile,
// which `tilegraph compile` runs.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/MLIRContext.h>

#include "commands.h"
#include "common/cli_checks.h"
#include "model_source.h"
#include "tilegraph/compiler/graph_import.h"
#include "tilegraph/compiler/registration.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/llama_session.h"

namespace tg::cli {

namespace {

struct CompileOptions {
  std::optional<std::string> model;  // none: the embedded default
  std::string emit = "mlir";
  std::string step = "decode";
  int64_t tokens = 8;  // prefill tokens
  int64_t n_past = 0;
  int64_t inline_limit = 16 * 1024;
  std::optional<std::string> output;
  bool no_mmap = false;
};

void run_compile(const CompileOptions& o) {
  const ModelSource m = ModelSource::open(o.model, !o.no_mmap);
  const model::LlamaConfig& c = m.config;
  const int64_t n_tokens = o.step == "decode" ? 1 : o.tokens;
  const int64_t needed = o.n_past + n_tokens;
  if (needed > c.n_ctx_train) {
    throw Error("--n-past " + std::to_string(o.n_past) + " + " + std::to_string(n_tokens) +
                " tokens exceed the model's context length " + std::to_string(c.n_ctx_train));
  }
  // The session's cache length and attention span for this step (llama_session.cpp).
  const auto round_up = [](int64_t n) { return (n + model::kKvPadding - 1) / model::kKvPadding * model::kKvPadding; };
  const int64_t n_ctx = std::min(c.n_ctx_train, round_up(needed));
  const int64_t n_kv = std::min(round_up(needed), n_ctx);
  const model::LlamaModel llama = m.load();
  model::BlockConfig block = c.block_config(n_ctx, llama.weight_type(), DType::F16);
  block.wv_type = llama.layers().front().wv->type;
  block.w_down_type = llama.layers().front().w_down->type;
  Context cache_ctx;
  std::vector<model::KvCache> caches;
  for (int64_t l = 0; l < c.n_layer; ++l) caches.push_back(model::make_kv_cache(cache_ctx, block));
  Context graph_ctx(ContextOptions{.no_alloc = true});
  const model::LlamaStep step = model::build_llama_step(graph_ctx, llama, block, caches, n_tokens, n_kv, false);
  const Graph graph = Graph::build(step.logits);

  mlir::DialectRegistry registry;
  compiler::register_dialects(registry);
  mlir::MLIRContext context(registry);
  compiler::ImportOptions options;
  options.inline_limit_bytes = size_t(o.inline_limit);
  compiler::ImportedGraph imported = compiler::import_graph(context, graph, options);

  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << "// " << m.description << ": " << o.step << " step, " << n_tokens << " token(s) at position " << o.n_past
         << ", " << graph.size() << " core nodes; " << imported.constants.size()
         << " weights held outside the IR as #tx8be.external\n";
  imported.module->print(stream);
  stream.flush();
  if (o.output) {
    std::ofstream file(*o.output, std::ios::binary);
    file << text;
    if (!file.flush()) throw Error("-o: cannot write '" + *o.output + "'");
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto o = std::make_shared<CompileOptions>();
  auto* cmd = app.add_subcommand("compile",
                                 "Import a llama step's graph into the TX8 compiler's tx8be MLIR dialect and print it");
  cmd->add_option("--model", o->model, "GGUF file of a llama or qwen2 model (default: the embedded small model)");
  cmd->add_option("--emit", o->emit, "What to print: mlir (the imported tx8be module)")
      ->check(CLI::IsMember({"mlir"}))
      ->capture_default_str();
  cmd->add_option("--step", o->step, "The step whose graph is compiled: decode (one token) or prefill (--tokens)")
      ->check(CLI::IsMember({"decode", "prefill"}))
      ->capture_default_str();
  cmd->add_option("--tokens", o->tokens, "Prompt tokens of a prefill step")
      ->check(integer_in<int64_t>(1, int64_t(1) << 20))
      ->capture_default_str();
  cmd->add_option("--n-past", o->n_past, "Positions already in the KV cache")
      ->check(integer_in<int64_t>(0, int64_t(1) << 24))
      ->capture_default_str();
  cmd->add_option("--inline-limit", o->inline_limit,
                  "Weights of at most this many bytes are printed in the IR; larger and quantized ones as "
                  "#tx8be.external references")
      ->check(integer_in<int64_t>(0, int64_t(1) << 40))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Write the module to this file instead of stdout");
  cmd->add_flag("--no-mmap", o->no_mmap, "Read the model file into memory instead of mapping it");
  cmd->callback([o] { run_compile(*o); });
}

}  // namespace tg::cli
