// `tilegraph run`: the main job — a llama model (a GGUF file, or the embedded default with
// generated weights) prefilling a prompt and decoding (greedy, or sampling with --temp) on a
// backend, decode steps captured and replayed by graph mode.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "common/cli_checks.h"
#include "forward.h"
#include "model_source.h"
#include "run_report.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/chat_template.h"
#include "tilegraph/model/gguf.h"
#include "tilegraph/model/gguf_keys.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/model/text_stream.h"
#include "tilegraph/model/vocab.h"
#include "tilegraph/runtime/graph_mode.h"

namespace tg::cli {

namespace {

RunReportFactory& run_report_factory() {
  static RunReportFactory make;
  return make;
}

constexpr const char* kDefaultPromptIds = "1,17,42,101,7,256,73,5";  // inside every preset's vocabulary

struct RunOptions {
  std::optional<std::string> model;  // none: the embedded default
  std::string backend = "cpu";
  std::string graph_mode;  // "on", "off", or empty for $TG_GRAPH_MODE
  std::string prompt_ids = kDefaultPromptIds;
  std::optional<std::string> prompt;       // text, instead of prompt_ids
  std::optional<std::string> prompt_file;  // a file of text, instead of either
  std::optional<std::string> chat;         // a user message, put in the chat template
  std::string system;                      // its system message
  std::string chat_template;               // empty: the file's
  bool plain_prompt = false;               // control tokens in `prompt` as text
  int64_t tokens = 32;
  int threads = 0;
  bool ignore_eos = false;
  bool no_mmap = false;
  bool no_repack = false;
  bool json = false;
  bool stream = false;  // print the text as it is generated
  std::string cache_type = "f16";
  std::string chip_config;         // --chip-config (tx8)
  model::SamplerOptions sampling;  // its seed is --seed's, else a random one
  std::optional<uint64_t> seed;
};

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    int32_t value = -1;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || value < 0) {
      throw Error("--prompt-ids: '" + item + "' is not a token id (expected comma-separated integers, e.g. 1,2,3)");
    }
    ids.push_back(value);
    start = comma + 1;
  }
  return ids;
}

std::string join(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) {
    if (!s.empty()) s += ' ';
    s += std::to_string(id);
  }
  return s;
}

std::string tokens(int64_t n) { return std::to_string(n) + (n == 1 ? " token" : " tokens"); }

double per_second(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

// A progress line on stderr, only when it is a terminal (and `wanted`), at most ten times a second.
class Progress {
 public:
  Progress(int64_t total, bool wanted) : total_(total), enabled_(wanted && isatty(STDERR_FILENO) != 0) {}
  void update(int64_t done, const model::GenerationResult& r) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    std::fprintf(stderr, "\r  %lld/%lld tokens", (long long)done, (long long)total_);
    // The prefill gives the first token: until a decode step has been timed there is no rate.
    if (r.decode_steps > 0)
      std::fprintf(stderr, ", %.1f tok/s decode", per_second(double(r.decode_steps), r.decode_seconds));
    std::fputs("\x1b[K", stderr);  // a shorter line than the last must not leave its end behind
    std::fflush(stderr);
    shown_ = true;
  }
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\r\x1b[K");  // erase it: the summary follows on stdout
  }

 private:
  int64_t total_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

nlohmann::json stats_json(const GraphModeStats& s) {
  nlohmann::json eager;
  for (int r = 0; r < kEagerReasonCount; ++r)
    eager[std::string(eager_reason_name(EagerReason(r)))] = s.eager_by_reason[r];
  return {{"computes", s.computes},
          {"hits", s.hits},
          {"misses", s.misses},
          {"captures", s.captures},
          {"rebinds", s.rebinds},
          {"evictions", s.evictions},
          {"replays", s.replays},
          {"eager_runs", s.eager_runs},
          {"eager_by_reason", eager},
          {"disables", s.disables},
          {"reenables", s.reenables},
          {"capture_seconds", s.capture_seconds},
          {"replay_seconds", s.replay_seconds},
          {"eager_seconds", s.eager_seconds}};
}

// --chat's message in the chat template (--chat-template's, else the file's), as parts in which
// only the template's markup can give control tokens.
std::vector<model::TextPart> chat_prompt(const RunOptions& o, const model::GgufFile* file) {
  std::optional<model::ChatTemplate> t;
  if (!o.chat_template.empty()) {
    t = model::chat_template_from_name(o.chat_template);  // CLI11 checked the name
  } else if (file) {
    t = model::chat_template_of(*file);
  }
  if (!t) {
    const std::string what = !file ? "the embedded model has no chat template"
                             : file->find(model::gguf_keys::kChatTemplate)
                                 ? *o.model + "'s tokenizer.chat_template is none this build writes"
                                 : *o.model + " has no tokenizer.chat_template";
    throw Error("--chat: " + what + " (pass --chat-template chatml, llama3 or llama2)");
  }
  return model::chat_parts(*t, *o.chat, o.system);
}

// The option the prompt comes from, for messages.
std::string prompt_option(const RunOptions& o) {
  return o.prompt ? "--prompt" : o.prompt_file ? "--prompt-file" : o.chat ? "--chat" : "--prompt-ids";
}

std::vector<int32_t> prompt_tokens(const RunOptions& o, const model::GgufFile* file, const model::Vocab* vocab,
                                   const std::string& missing) {
  if (!o.prompt && !o.prompt_file && !o.chat) return parse_ids(o.prompt_ids);
  const std::string option = prompt_option(o);
  if (!vocab) throw Error(option + ": cannot tokenize text for " + *o.model + ": " + missing + " (pass --prompt-ids)");
  std::vector<int32_t> ids;
  if (o.chat) {
    ids = vocab->encode(chat_prompt(o, file));
  } else {
    ids = vocab->encode(o.prompt ? *o.prompt : read_text_file("--prompt-file", *o.prompt_file), !o.plain_prompt);
  }
  if (ids.empty())
    throw Error(option +
                ": the empty text gives no tokens with this vocabulary (it adds no beginning-of-sequence token)");
  if (ids.size() >= 2 && ids[0] == vocab->bos() && ids[1] == vocab->bos()) {
    // llama.cpp warns the same way: models are trained with one.
    std::fprintf(stderr,
                 "warning: the model adds a beginning-of-sequence token and the prompt starts with one too: the prompt "
                 "has two (leave it out of %s)\n",
                 option.c_str());
  }
  return ids;
}

// The session refuses an id outside the vocabulary too, but only once the weights are loaded and
// the header printed.
void check_prompt_ids(const RunOptions& o, const std::vector<int32_t>& prompt, int64_t n_vocab) {
  const auto bad = std::ranges::find_if(prompt, [n_vocab](int32_t id) { return id < 0 || id >= n_vocab; });
  if (bad == prompt.end()) return;
  if (prompt_option(o) == "--prompt-ids" && o.prompt_ids == kDefaultPromptIds) {
    throw Error(std::string("the default prompt (--prompt-ids ") + kDefaultPromptIds +
                ") does not fit the model's vocabulary of " + std::to_string(n_vocab) +
                " tokens: pass --prompt-ids or --prompt");
  }
  throw Error(prompt_option(o) + ": token " + std::to_string(bad - prompt.begin()) + " has id " + std::to_string(*bad) +
              ", outside the model's vocabulary [0, " + std::to_string(n_vocab) + ")");
}

// `--backend tx8` where this executable does not have it: tilegraph-tx8 (beside it, built with
// the TX8 compiler) runs the same command line.
void forward_tx8_if_needed(const RunOptions& o) {
  if (o.backend != "tx8") return;
  const std::vector<std::string> names = backend_names();
  if (std::ranges::find(names, "tx8") != names.end()) return;
#ifdef TG_HAS_TX8_BACKEND
  std::vector<std::string> args = own_arguments();
  const std::string path = beside_this_executable("tilegraph-tx8");
  args.at(0) = path;
  exec_instead("run --backend tx8", path, std::move(args));
#else
  throw Error(
      "--backend tx8: this build has no TX8 compiler, which the tx8 backend runs on; install MLIR 15 "
      "(scripts/bootstrap compiler) and configure with -DTG_BUILD_COMPILER=ON");
#endif
}

void run(const RunOptions& o) {
  forward_tx8_if_needed(o);
  if (o.plain_prompt && !o.prompt && !o.prompt_file) throw Error("--plain-prompt needs --prompt or --prompt-file");
  model::SamplerOptions sampling = o.sampling;
  // A random seed is reported, so that the run can be repeated.
  sampling.seed = o.seed ? *o.seed : sampling.greedy() ? 0 : std::random_device{}();
  sampling.validate();
  // The prompt and the context it needs are checked against the model's configuration before
  // its weights are generated or bound, so a bad flag costs no load.
  const ModelSource m = ModelSource::open(o.model, !o.no_mmap);
  const model::LlamaConfig& c = m.config;
  const std::optional<model::Vocab>& vocab = m.vocab;
  const std::vector<int32_t> prompt =
      prompt_tokens(o, m.file ? &*m.file : nullptr, vocab ? &*vocab : nullptr, m.no_vocab);
  check_prompt_ids(o, prompt, c.n_vocab);
  const int64_t needed = int64_t(prompt.size()) + std::max<int64_t>(o.tokens - 1, 0);
  if (needed > c.n_ctx_train) {
    const int64_t most = c.n_ctx_train - int64_t(prompt.size()) + 1;
    throw Error("the prompt (" + std::to_string(prompt.size()) + " tokens) and " + std::to_string(o.tokens) +
                " generated tokens exceed the model's context length " + std::to_string(c.n_ctx_train) +
                (most > 0 ? " (--tokens " + std::to_string(most) + " at most)" : ""));
  }
  if (o.stream && !vocab) throw Error("--stream: " + *o.model + " has no vocabulary to print text with: " + m.no_vocab);
  const int64_t n_ctx =
      std::min(c.n_ctx_train, (needed + model::kKvPadding - 1) / model::kKvPadding * model::kKvPadding);

  const std::string& source = m.description;
  model::LlamaModel llama = m.load();

  const BackendOptions options{.num_threads = o.threads, .chip_config = o.chip_config};
  std::unique_ptr<Backend> backend = make_backend(o.backend, options);
  // Weights move to the backend's memory (nothing moves for the CPU), converted to the nearest
  // type it runs where it has no kernels for theirs: said once per type.
  for (const model::LlamaModel::Conversion& c : llama.place_weights(*backend, !o.no_repack)) {
    std::fprintf(stderr, "note: the %s backend runs %s weights as %s (%zu tensors converted at load)\n",
                 o.backend.c_str(), std::string(dtype_name(c.from)).c_str(), std::string(dtype_name(c.to)).c_str(),
                 c.tensors);
  }
  if (const size_t prepared = llama.prepared_bytes(); prepared > 0 && !o.json) {
    std::fprintf(stderr,
                 "note: the %s backend keeps a copy of the matrices it decodes faster in its own layout (%.1f MiB; "
                 "--no-repack: none)\n",
                 o.backend.c_str(), double(prepared) / (1 << 20));
  }
  const std::unique_ptr<RunReport> report = run_report_factory() ? run_report_factory()(*backend) : nullptr;
  GraphMode* graph_mode = backend->graph_mode();
  if (graph_mode && !o.graph_mode.empty()) {
    GraphModeConfig gc = graph_mode->config();
    gc.enabled = o.graph_mode == "on";
    graph_mode->set_config(gc);
  }
  const int threads = backend->threads();

  const DType cache_type = parse_dtype(o.cache_type);
  model::LlamaSession session(llama, *backend, n_ctx, cache_type);
  if (!o.json) {
    std::printf("tilegraph run: %s\n", source.c_str());
    std::printf(
        "  %s: n_vocab %lld, n_embd %lld, %lld layers, %lld heads / %lld kv heads, n_ff %lld, %s (%.1f MiB read per "
        "token)\n",
        std::string(model::architecture_name(c.arch)).c_str(), (long long)c.n_vocab, (long long)c.n_embd,
        (long long)c.n_layer, (long long)c.n_head, (long long)c.n_head_kv, (long long)c.n_ff,
        ModelSource::weights_description(llama).c_str(), double(llama.decode_weight_bytes()) / (1 << 20));
    std::printf("  backend %s, threads %d, n_ctx %lld, %s KV cache\n", o.backend.c_str(), threads, (long long)n_ctx,
                o.cache_type.c_str());
    std::printf("  sampling: %s\n", sampling.describe().c_str());
    std::printf("  prompt ids (%zu):    %s\n", prompt.size(), join(prompt).c_str());
    std::fflush(stdout);
  }
  model::GenerationResult result;
  {
    // Streamed text shows the progress itself.
    Progress progress(o.tokens, !o.stream);
    std::optional<model::TextStream> stream;
    if (o.stream) {
      stream.emplace(*vocab);
      std::printf("  generated text: ");
    }
    auto show = [](const std::string& bytes) {
      std::fputs(model::terminal_text(bytes).c_str(), stdout);
      std::fflush(stdout);
    };
    const std::vector<int32_t> stop_tokens =
        vocab && !o.ignore_eos ? vocab->end_of_generation() : std::vector<int32_t>{};
    result = session.generate(
        prompt, o.tokens,
        [&](int64_t done, const model::GenerationResult& r) {
          if (done == 1 && report) report->prefill_done();
          progress.update(done, r);
          if (stream) show(stream->push(r.tokens.back()));
        },
        stop_tokens, sampling);
    if (stream) {
      show(stream->finish());
      std::printf("\n");
    }
  }
  const std::optional<std::string> text = vocab ? std::optional(vocab->decode(result.tokens)) : std::nullopt;
  const double prefill_rate = per_second(double(result.prefill_tokens), result.prefill_seconds);
  const double decode_rate = per_second(double(result.decode_steps), result.decode_seconds);

  if (o.json) {
    nlohmann::json out = {
        {"model",
         {{"source", source},
          {"architecture", std::string(model::architecture_name(c.arch))},
          {"n_vocab", c.n_vocab},
          {"n_ctx_train", c.n_ctx_train},
          {"n_embd", c.n_embd},
          {"n_layer", c.n_layer},
          {"n_head", c.n_head},
          {"n_head_kv", c.n_head_kv},
          {"n_ff", c.n_ff},
          {"weight_type", std::string(dtype_name(llama.weight_type()))},
          {"weight_types", ModelSource::type_names(llama)},
          {"tied_output", llama.tied_output()},
          {"decode_weight_bytes", llama.decode_weight_bytes()}}},
        {"backend", o.backend},
        {"threads", threads},
        {"graph_mode", graph_mode ? nlohmann::json(graph_mode->config().enabled) : nlohmann::json(nullptr)},
        {"n_ctx", n_ctx},
        {"cache_type", o.cache_type},
        {"prompt_ids", prompt},
        {"sampling",
         {{"greedy", sampling.greedy()},
          {"temperature", sampling.temperature},
          {"top_k", sampling.top_k},
          {"top_p", sampling.top_p},
          {"min_p", sampling.min_p},
          {"seed", sampling.seed}}},
        {"generated_ids", result.tokens},
        {"generated_text", text ? nlohmann::json(*text) : nlohmann::json(nullptr)},
        {"stopped_at_eos", result.stopped},
        {"prefill",
         {{"tokens", result.prefill_tokens}, {"seconds", result.prefill_seconds}, {"tokens_per_second", prefill_rate}}},
        {"decode",
         {{"tokens", result.decode_steps}, {"seconds", result.decode_seconds}, {"tokens_per_second", decode_rate}}},
        {"graph_nodes_per_decode_step", session.last_graph_nodes()},
        {"graph_cache", graph_mode ? stats_json(graph_mode->stats()) : nlohmann::json(nullptr)},
    };
    if (report) out["backend_report"] = report->json(result);
    // Byte tokens can split a UTF-8 character: such bytes are written as U+FFFD.
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  std::printf("  generated ids (%zu): %s%s\n", result.tokens.size(), join(result.tokens).c_str(),
              result.stopped ? " (an end-of-generation token)" : "");
  if (text && !o.stream) std::printf("  generated text: %s\n", model::terminal_text(*text).c_str());
  std::printf("  prefill: %s in %.2f ms, %.1f tok/s\n", tokens(result.prefill_tokens).c_str(),
              result.prefill_seconds * 1e3, prefill_rate);
  std::printf("  decode:  %s in %.2f ms, %.1f tok/s\n", tokens(result.decode_steps).c_str(),
              result.decode_seconds * 1e3, decode_rate);
  if (graph_mode) {
    std::printf("  graph mode %s (%zu nodes per decode step): %s\n", graph_mode->config().enabled ? "on" : "off",
                session.last_graph_nodes(), format_stats(graph_mode->stats()).c_str());
  } else {
    std::printf("  graph mode: not available on the %s backend\n", o.backend.c_str());
  }
  if (report) report->print(result);
}

}  // namespace

void set_run_report(RunReportFactory make) { run_report_factory() = std::move(make); }

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "run",
      "Run a llama model (GGUF, or the embedded default): prefill, then decode (greedy, or sampling with --temp)");
  cmd->add_option("--model", o->model,
                  "GGUF file of a llama-family model (default: an embedded small model with generated weights)");
  cmd->add_option("--backend", o->backend,
                  "Backend to run: cpu, reference, or tx8 (the TX8 chip's C-model, graphs compiled by the TX8 "
                  "compiler; in builds with the compiler, run by tilegraph-tx8)")
      ->capture_default_str();
  cmd->add_option("--chip-config", o->chip_config,
                  "With --backend tx8: the chip's configuration, a JSON file as `tilegraph sim --config` takes "
                  "(default: $TG_TX8_CONFIG, else the TX8 chip)");
  cmd->add_option("--graph-mode", o->graph_mode,
                  "Capture and replay decode steps: on or off (default: $TG_GRAPH_MODE, else on)")
      ->check(CLI::IsMember({"on", "off"}));
  auto* ids =
      cmd->add_option("--prompt-ids", o->prompt_ids, "Prompt token ids, comma-separated")->capture_default_str();
  auto* prompt =
      cmd->add_option(
             "--prompt", o->prompt,
             "Prompt text, tokenized with the model's vocabulary: SentencePiece, or byte-level BPE with GPT-2's, llama "
             "3's or Qwen2's pre-tokenizer (with its beginning-of-sequence token unless the file turns it off)")
          ->excludes(ids);
  auto* prompt_file =
      cmd->add_option("--prompt-file", o->prompt_file,
                      "File whose text is the prompt, as --prompt (less one final newline); - reads standard input. "
                      "A regular file of at most " +
                          std::to_string(kMaxTextFileBytes >> 20) + " MiB")
          ->excludes(ids)
          ->excludes(prompt);
  auto* chat =
      cmd->add_option("--chat", o->chat,
                      "A user message, put in the model's chat template (tokenizer.chat_template: ChatML, llama 3 "
                      "or llama 2 style) as one turn ending where the assistant's reply starts; control tokens written "
                      "in it (such as </s> or <|im_end|>) are text")
          ->excludes(ids)
          ->excludes(prompt)
          ->excludes(prompt_file);
  cmd->add_option("--system", o->system, "With --chat: the system message")->needs(chat);
  cmd->add_option("--chat-template", o->chat_template,
                  "With --chat: chatml, llama3 or llama2 instead of the file's template")
      ->check(CLI::IsMember({"chatml", "llama3", "llama2"}))
      ->needs(chat);
  cmd->add_flag("--plain-prompt", o->plain_prompt,
                "Encode control tokens written in --prompt or --prompt-file (such as <s> or <|eot_id|>) as text; by "
                "default they are their ids, as in llama.cpp (user-defined tokens are ids either way)");
  cmd->add_option("--tokens", o->tokens, "Tokens to generate (fewer if the model ends the sequence first)")
      ->check(tg::cli::integer_in<int64_t>(0, int64_t(1) << 24))
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Worker threads (0: $TG_NUM_THREADS or all cores)")
      ->check(tg::cli::integer_in(0, kMaxThreads))
      ->capture_default_str();
  cmd->add_option("--cache-type", o->cache_type, "Element type of the KV cache: f16, bf16 or f32")
      ->check(CLI::IsMember({"f16", "bf16", "f32"}))
      ->capture_default_str();
  cmd->add_flag("--no-mmap", o->no_mmap,
                "Read the model file into memory instead of mapping it (then it may change during the run)");
  cmd->add_flag("--no-repack", o->no_repack,
                "Decode quantized matrices as stored, without the CPU backend's interleaved copy (which takes "
                "as much memory again as those matrices; Intel CPUs, which decode the stored rows faster, get "
                "none either way)");
  cmd->add_option("--temp", o->sampling.temperature,
                  "Sampling temperature; 0 decodes greedily (the largest logit) and ignores --top-k, --top-p, --min-p "
                  "and --seed")
      ->capture_default_str();
  cmd->add_option("--top-k", o->sampling.top_k, "With --temp > 0: keep the k most likely tokens (0: all)")
      ->check(integer_in<int32_t>(0, INT32_MAX))
      ->capture_default_str();
  cmd->add_option("--top-p", o->sampling.top_p,
                  "With --temp > 0: then keep the fewest most likely tokens whose probabilities reach p (1: all)")
      ->capture_default_str();
  cmd->add_option("--min-p", o->sampling.min_p,
                  "With --temp > 0: then keep the tokens at least p times as likely as the most likely one (0: all)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed,
                  "With --temp > 0: the random seed (default: a random one, printed with the results)")
      ->check(integer_in<uint64_t>(0, UINT64_MAX));
  cmd->add_flag("--ignore-eos", o->ignore_eos,
                "Generate --tokens tokens even past an end-of-generation token (end of sequence, end of turn, ...)");
  auto* json = cmd->add_flag("--json", o->json, std::string("Print one JSON object instead of text"));
  cmd->add_flag("--stream", o->stream,
                "Print the generated text as each token arrives (needs the model's vocabulary; no progress line then)")
      ->excludes(json);
  cmd->callback([o] { run(*o); });
}

}  // namespace tg::cli
