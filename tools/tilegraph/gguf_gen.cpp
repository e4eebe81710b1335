// `tilegraph gguf-gen`: writes a llama (or qwen2) model with deterministic random weights as a
// GGUF file in the standard layout (tensor names, llama.* or qwen2.* keys, a minimal tokenizer),
// for `tilegraph run` and for other GGUF tools.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "commands.h"
#include "common/cli_checks.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf.h"
#include "tilegraph/model/gguf_keys.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/vocab.h"

namespace tg::cli {

namespace {

struct GenOptions {
  std::string arch = "llama";
  std::string config = "tiny";
  std::string type = "f16";
  std::string output;
  uint64_t seed = 42;
  std::string vocab = "spm";
  // Overrides of the preset; 0 keeps the preset's value.
  int64_t n_layer = 0, n_embd = 0, n_head = 0, n_head_kv = 0, n_ff = 0, n_vocab = 0, n_ctx = 0;
};

// The ChatML template (Jinja, as Hugging Face writes it) that --vocab qwen2 files carry.
constexpr std::string_view kChatmlTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

void generate(const GenOptions& o) {
  const uint64_t seed = o.seed;
  // A path that cannot be written is refused before the weights are generated.
  model::GgufWriter::check_destination(o.output);
  model::LlamaConfig c = model::llama_preset(o.config);
  c.arch = *model::architecture_from_name(o.arch);  // CLI11 checked the name
  const std::pair<int64_t, int64_t*> overrides[] = {
      {o.n_layer, &c.n_layer}, {o.n_embd, &c.n_embd},   {o.n_head, &c.n_head},    {o.n_head_kv, &c.n_head_kv},
      {o.n_ff, &c.n_ff},       {o.n_vocab, &c.n_vocab}, {o.n_ctx, &c.n_ctx_train}};
  for (const auto& [value, field] : overrides) {
    if (value > 0) *field = value;
  }
  // A new head count without an explicit KV head count keeps the preset's grouping if it can.
  if (o.n_head > 0 && o.n_head_kv == 0 && c.n_head % c.n_head_kv != 0) c.n_head_kv = c.n_head;
  // (--type accepts any letter case, as ggml spells the K types "q4_K".)
  std::string type = o.type;
  std::ranges::transform(type, type.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  const bool q4_k_m = type == "q4_k_m";
  const model::WeightTypes types = q4_k_m ? model::WeightTypes::q4_k_m() : model::WeightTypes::all(parse_dtype(type));
  const std::string type_name = q4_k_m ? "q4_K_M" : std::string(dtype_name(types.matrices));
  const model::Vocab vocab = o.vocab == "llama3"  ? model::Vocab::minimal_byte_level(c.n_vocab)
                             : o.vocab == "qwen2" ? model::Vocab::minimal_qwen2(c.n_vocab)
                                                  : model::Vocab::minimal_sentencepiece(c.n_vocab);
  // The weights are generated as they are written, a row at a time: a model may be larger than
  // memory, and one larger than the disk's free space is refused before any is generated.
  model::GgufWriter w = model::LlamaModel::generate_gguf(
      c, types, seed, "tilegraph " + o.config + " " + type_name + " seed " + std::to_string(seed), vocab);
  if (o.vocab == "qwen2") w.set(model::gguf_keys::kChatTemplate, std::string(kChatmlTemplate));
  // Interrupted, the run leaves neither a half-written file nor its hidden temporary.
  model::GgufWriter::remove_temporaries_on_signals();
  w.write_file(o.output);
  std::printf(
      "wrote %s (%.1f MiB): %s, n_vocab %lld, n_ctx %lld, n_embd %lld, %lld layers, %lld heads / %lld kv heads, n_ff "
      "%lld, %s weights\n",
      o.output.c_str(), double(std::filesystem::file_size(o.output)) / (1 << 20), o.arch.c_str(), (long long)c.n_vocab,
      (long long)c.n_ctx_train, (long long)c.n_embd, (long long)c.n_layer, (long long)c.n_head, (long long)c.n_head_kv,
      (long long)c.n_ff, type_name.c_str());
}

}  // namespace

void add_gguf_gen_command(CLI::App& app) {
  auto o = std::make_shared<GenOptions>();
  auto* cmd = app.add_subcommand("gguf-gen", "Write a llama (or qwen2) GGUF file with deterministic random weights");
  cmd->add_option("--arch", o->arch,
                  "Architecture: llama, or qwen2 (biases on the Q, K and V projections, NEOX-style RoPE, qwen2.* keys)")
      ->check(CLI::IsMember({"llama", "qwen2"}))
      ->capture_default_str();
  cmd->add_option("--config", o->config,
                  "Preset to start from: tiny (d_model 128, 2 layers), small (256, 4 layers) or d2048 (2048, 8 layers, "
                  "16 heads / 8 KV heads, n_ff 5632, vocabulary 8192)")
      ->check(CLI::IsMember(model::llama_preset_names()))
      ->capture_default_str();
  cmd->add_option(
         "--type", o->type,
         "Matrix type: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1 (n_embd and n_ff multiples of 32), "
         "q4_k, q5_k, q6_k (of 256), or q4_k_m: q4_K with q6_K for attn_v, ffn_down and output; norms stay f32")
      ->check(CLI::IsMember(
          {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k", "q4_k_m"},
          CLI::ignore_case))
      ->capture_default_str();
  cmd->add_option("--vocab", o->vocab,
                  "Tokenizer written: spm (SentencePiece, llama 2 style), llama3 (byte-level BPE with merges, "
                  "llama 3 style) or qwen2 (the same with Qwen2's pre-tokenizer, ChatML's tokens and a ChatML "
                  "tokenizer.chat_template); the byte-level ones need --n-vocab of at least " +
                      std::to_string(model::Vocab::kMinimalByteLevelSize))
      ->check(CLI::IsMember({"spm", "llama3", "qwen2"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "File to write (a regular file there is replaced)")->required();
  cmd->add_option("--seed", o->seed, "Seed of the weights")
      ->check(integer_in<uint64_t>(0, UINT64_MAX))
      ->capture_default_str();
  // The config's own checks give the real bounds; this only keeps the flags to sane integers.
  const auto positive = integer_in<int64_t>(1, INT32_MAX);
  cmd->add_option("--n-layer", o->n_layer, "Blocks")->check(positive);
  cmd->add_option("--n-embd", o->n_embd, "Model width")->check(positive);
  cmd->add_option("--n-head", o->n_head, "Attention heads")->check(positive);
  cmd->add_option("--n-head-kv", o->n_head_kv,
                  "KV heads (default: the preset's if they divide --n-head, else --n-head)")
      ->check(positive);
  cmd->add_option("--n-ff", o->n_ff, "Feed-forward width")->check(positive);
  cmd->add_option("--n-vocab", o->n_vocab, "Vocabulary size")->check(positive);
  cmd->add_option("--n-ctx", o->n_ctx, "Context length (llama.context_length or qwen2.context_length)")
      ->check(positive);
  cmd->callback([o] { generate(*o); });
}

}  // namespace tg::cli
