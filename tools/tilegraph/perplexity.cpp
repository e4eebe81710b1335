// `tilegraph perplexity`: a model's perplexity over a text, measured as llama.cpp's perplexity
// tool measures it (model/perplexity.h), so that numerics and quantizations can be compared with
// it on the same file and text.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "common/cli_checks.h"
#include "model_source.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/model/perplexity.h"

namespace tg::cli {

namespace {

struct PerplexityOptions {
  std::optional<std::string> model;  // none: the embedded default
  std::optional<std::string> text;
  std::optional<std::string> text_file;
  int64_t ctx = 512;
  int64_t chunks = 0;
  std::string backend = "cpu";
  int threads = 0;
  bool no_mmap = false;
  bool json = false;
};

void run_perplexity(const PerplexityOptions& o) {
  const ModelSource m = ModelSource::open(o.model, !o.no_mmap);
  const std::string option = o.text ? "--text" : "--text-file";
  if (!m.vocab) throw Error(option + ": cannot tokenize text for " + m.description + ": " + m.no_vocab);
  if (o.ctx > m.config.n_ctx_train) {
    throw Error("--ctx " + std::to_string(o.ctx) + " exceeds the model's context length " +
                std::to_string(m.config.n_ctx_train));
  }
  const std::string text = o.text ? *o.text : read_text_file("--text-file", *o.text_file);
  const std::vector<int32_t> tokens = m.vocab->encode(text);
  if (int64_t(tokens.size()) < o.ctx) {
    throw Error(option + ": the text is " + std::to_string(tokens.size()) + " tokens, fewer than one chunk of --ctx " +
                std::to_string(o.ctx));
  }
  const model::LlamaModel llama = m.load();
  std::unique_ptr<Backend> backend = make_backend(o.backend, BackendOptions{.num_threads = o.threads});
  model::LlamaSession session(llama, *backend, o.ctx);
  if (!o.json) {
    std::printf("tilegraph perplexity: %s, %s, %zu tokens, chunks of %lld\n", m.description.c_str(),
                ModelSource::weights_description(llama).c_str(), tokens.size(), (long long)o.ctx);
  }
  const model::PerplexityResult r =
      model::perplexity(session, tokens, o.ctx, m.vocab->adds_bos() ? m.vocab->bos() : -1, o.chunks,
                        [&](int64_t done, const model::PerplexityResult& now) {
                          if (o.json) return;
                          std::printf("%s[%lld]%.4f", done == 1 ? "" : ",", (long long)done, now.running_ppl.back());
                          std::fflush(stdout);
                        });
  const double rate = r.seconds > 0 ? double(r.chunks * o.ctx) / r.seconds : 0.0;
  if (o.json) {
    const nlohmann::json out = {{"model", m.description},
                                {"backend", o.backend},
                                {"threads", backend->threads()},
                                {"n_ctx", o.ctx},
                                {"text_tokens", tokens.size()},
                                {"chunks", r.chunks},
                                {"scored_tokens", r.scored_tokens},
                                {"ppl", r.ppl},
                                {"ppl_error", r.ppl_error},
                                {"running_ppl", r.running_ppl},
                                {"seconds", r.seconds},
                                {"tokens_per_second", rate}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("\nestimate: PPL = %.4f +/- %.5f (%lld chunks, %lld tokens scored; %.1f tok/s on %d threads)\n", r.ppl,
              r.ppl_error, (long long)r.chunks, (long long)r.scored_tokens, rate, backend->threads());
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
  auto o = std::make_shared<PerplexityOptions>();
  auto* cmd = app.add_subcommand(
      "perplexity",
      "A model's perplexity over a text, as llama.cpp's perplexity tool computes it (chunks of --ctx tokens, "
      "the second half of each scored)");
  cmd->add_option("--model", o->model, "GGUF file of a llama or qwen2 model (default: the embedded small model)");
  auto* text = cmd->add_option("--text", o->text, "The text");
  auto* file = cmd->add_option("--text-file", o->text_file,
                               "File whose text is measured (less one final newline); - reads standard input. A "
                               "regular file of at most " +
                                   std::to_string(kMaxTextFileBytes >> 20) + " MiB")
                   ->excludes(text);
  text->excludes(file);
  cmd->add_option("--ctx", o->ctx, "Tokens per chunk (llama.cpp's -c; its default is 512 too)")
      ->check(integer_in<int64_t>(4, int64_t(1) << 20))
      ->capture_default_str();
  cmd->add_option("--chunks", o->chunks, "At most this many chunks (0: all the text holds)")
      ->check(integer_in<int64_t>(0, int64_t(1) << 30))
      ->capture_default_str();
  cmd->add_option("--backend", o->backend, "Backend to run (cpu, reference)")->capture_default_str();
  cmd->add_option("--threads", o->threads, "Worker threads (0: $TG_NUM_THREADS or all cores)")
      ->check(integer_in(0, kMaxThreads))
      ->capture_default_str();
  cmd->add_flag("--no-mmap", o->no_mmap, "Read the model file into memory instead of mapping it");
  cmd->add_flag("--json", o->json, "Print one JSON object instead of text");
  cmd->callback([o] {
    if (!o->text && !o->text_file) throw Error("perplexity: give the text with --text or --text-file");
    run_perplexity(*o);
  });
}

}  // namespace tg::cli
