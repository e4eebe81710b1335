// The llama model: config and weights from GGUF (with their errors), and decoding checked against
// the reference backend, eager against graph mode, token-by-token against one prefill, quantized
// models against f32, and generated models written to GGUF and loaded back.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/expect_error.h"
#include "common/tensor_utils.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/model/vocab.h"
#include "tilegraph/runtime/graph_mode.h"

namespace tg::model {
namespace {

using test::expect_error;

constexpr uint64_t kSeed = 1234;

std::unique_ptr<Backend> backend(const std::string& name, bool graph_mode = true) {
  auto b = make_backend(name, {.num_threads = 2});
  if (GraphMode* mode = b->graph_mode()) {
    GraphModeConfig c = mode->config();
    c.enabled = graph_mode;
    mode->set_config(c);
  }
  return b;
}

// A test config smaller than the tiny preset where size does not matter.
LlamaConfig micro_config() {
  LlamaConfig c = llama_preset("tiny");
  c.n_vocab = 96;
  c.n_embd = 64;
  c.n_ff = 160;
  c.n_ctx_train = 96;
  return c;
}

std::vector<float> to_vector(std::span<const float> s) { return {s.begin(), s.end()}; }

// ---- config ----

TEST(LlamaConfig, PresetsAreValid) {
  for (const std::string& name : llama_preset_names()) EXPECT_NO_THROW(llama_preset(name).validate()) << name;
  EXPECT_EQ(llama_preset("tiny").n_embd, 128);
  EXPECT_EQ(llama_preset("tiny").n_layer, 2);
  EXPECT_THROW(llama_preset("huge"), Error);
}

TEST(LlamaConfig, ValidateNamesTheBadValue) {
  LlamaConfig c = micro_config();
  c.n_head = 3;
  expect_error([&] { c.validate(); }, "n_embd 64 is not a multiple of n_head 3");
  c = micro_config();
  c.n_head_kv = 3;
  expect_error([&] { c.validate(); }, "n_head 4 is not a multiple of n_head_kv 3");
  c = micro_config();
  c.n_layer = 0;
  expect_error([&] { c.validate(); }, "n_layer = 0 is outside 1..1024");
  c = micro_config();
  c.n_vocab = int64_t(1) << 40;
  expect_error([&] { c.validate(); }, "n_vocab = 1099511627776 is outside");
}

GgufFile file_with(const std::function<void(GgufWriter&)>& edit) {
  GgufWriter w;
  edit(w);
  return GgufFile::parse(w.to_bytes(), "model.gguf");
}

// The llama.* keys of micro_config, with `skip` left out and `extra` added.
void llama_keys(GgufWriter& w, const std::string& skip = "") {
  const LlamaConfig c = micro_config();
  auto set = [&](const std::string& key, GgufValue v) {
    if (key != skip) w.set(key, std::move(v));
  };
  set("general.architecture", "llama");
  set("llama.vocab_size", uint32_t(c.n_vocab));
  set("llama.context_length", uint32_t(c.n_ctx_train));
  set("llama.embedding_length", uint32_t(c.n_embd));
  set("llama.block_count", uint32_t(c.n_layer));
  set("llama.feed_forward_length", uint32_t(c.n_ff));
  set("llama.attention.head_count", uint32_t(c.n_head));
  set("llama.attention.head_count_kv", uint32_t(c.n_head_kv));
}

TEST(LlamaConfig, ReadsGgufMetadata) {
  const GgufFile file = file_with([](GgufWriter& w) {
    llama_keys(w);
    w.set("llama.attention.layer_norm_rms_epsilon", 1e-6f);
    w.set("llama.rope.freq_base", 500000.0f);
    w.set("llama.rope.dimension_count", uint32_t(16));
  });
  const LlamaConfig c = llama_config_from_gguf(file);
  EXPECT_EQ(c.n_embd, 64);
  EXPECT_EQ(c.n_head_kv, 2);
  EXPECT_FLOAT_EQ(c.rms_eps, 1e-6f);
  EXPECT_FLOAT_EQ(c.rope_base, 500000.0f);

  // Optional keys take llama's defaults; integer keys accept any integer type.
  const LlamaConfig d = llama_config_from_gguf(file_with([](GgufWriter& w) {
    llama_keys(w, "llama.attention.head_count_kv");
    w.set("llama.attention.head_count_kv", uint64_t(4));
  }));
  EXPECT_EQ(d.n_head_kv, 4);
  EXPECT_FLOAT_EQ(d.rms_eps, 1e-5f);
  EXPECT_FLOAT_EQ(d.rope_base, 10000.0f);
  // The vocabulary size from the tokenizer when llama.vocab_size is absent.
  const LlamaConfig e = llama_config_from_gguf(file_with([](GgufWriter& w) {
    llama_keys(w, "llama.vocab_size");
    w.set("tokenizer.ggml.tokens", std::vector<std::string>(7, "x"));
  }));
  EXPECT_EQ(e.n_vocab, 7);
}

TEST(LlamaConfig, ReadsLinearRopeScalingAsLlamaCppDoes) {
  auto scale_of = [](const std::function<void(GgufWriter&)>& edit) {
    return llama_config_from_gguf(file_with([&](GgufWriter& w) {
             llama_keys(w);
             edit(w);
           }))
        .rope_freq_scale;
  };
  EXPECT_EQ(scale_of([](GgufWriter&) {}), 1.0f);
  // No type means linear; the older key name counts too; a factor of 0 means none.
  EXPECT_EQ(scale_of([](GgufWriter& w) { w.set("llama.rope.scaling.factor", 4.0f); }), 0.25f);
  EXPECT_EQ(scale_of([](GgufWriter& w) { w.set("llama.rope.scale_linear", 2.0); }), 0.5f);
  EXPECT_EQ(scale_of([](GgufWriter& w) {
              w.set("llama.rope.scaling.type", "linear");
              w.set("llama.rope.scaling.factor", 8.0f);
            }),
            0.125f);
  EXPECT_EQ(scale_of([](GgufWriter& w) { w.set("llama.rope.scaling.factor", 0.0f); }), 1.0f);
  // Type none never scales.
  EXPECT_EQ(scale_of([](GgufWriter& w) {
              w.set("llama.rope.scaling.type", "none");
              w.set("llama.rope.scaling.factor", 4.0f);
            }),
            1.0f);
}

TEST(LlamaConfig, RejectsBadMetadata) {
  expect_error([] { llama_config_from_gguf(file_with([](GgufWriter& w) { llama_keys(w, "general.architecture"); })); },
               "model.gguf: missing general.architecture");
  expect_error([] { llama_config_from_gguf(file_with([](GgufWriter& w) { w.set("general.architecture", "gpt2"); })); },
               "unsupported architecture 'gpt2' (supported: llama, qwen2)");
  expect_error([] { llama_config_from_gguf(file_with([](GgufWriter& w) { llama_keys(w, "llama.block_count"); })); },
               "missing metadata key 'llama.block_count'");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w, "llama.embedding_length");
          w.set("llama.embedding_length", "64");
        }));
      },
      "llama.embedding_length must be an integer, got string \"64\"");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.attention.layer_norm_rms_epsilon", uint32_t(1));
        }));
      },
      "llama.attention.layer_norm_rms_epsilon must be f32 or f64, got u32 1");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.rope.freq_base", -1.0f);
        }));
      },
      "llama.rope.freq_base must be positive and finite");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.rope.dimension_count", uint32_t(8));
        }));
      },
      "partial rotary embeddings are not supported");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.rope.scaling.type", "yarn");
        }));
      },
      "llama.rope.scaling.type string \"yarn\" is not supported (only none and linear)");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.rope.scaling.factor", -2.0f);
        }));
      },
      "llama.rope.scaling.factor must be positive and finite, got f32 -2");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.attention.key_length", uint32_t(8));
        }));
      },
      "llama.attention.key_length 8 differs from head_dim 16 (n_embd / n_head)");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.attention.value_length", uint32_t(32));
        }));
      },
      "llama.attention.value_length 32 differs from head_dim 16");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("tokenizer.ggml.tokens", std::vector<std::string>(3, "x"));
        }));
      },
      "llama.vocab_size 96 differs from the 3 tokens of tokenizer.ggml.tokens");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w, "llama.vocab_size");
          w.set("tokenizer.ggml.tokens", std::vector<uint32_t>(100, 1));
        }));
      },
      "tokenizer.ggml.tokens must be an array of strings, got array of 100 u32");
  // Strings from the file are escaped and cut in messages.
  expect_error(
      [] {
        llama_config_from_gguf(
            file_with([](GgufWriter& w) { w.set("general.architecture", "\x1b[31m" + std::string(200, 'A')); }));
      },
      "unsupported architecture '\\x1b[31m" + std::string(75, 'A') + "...' (supported: llama, qwen2)");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.expert_count", uint32_t(8));
        }));
      },
      "mixture-of-experts");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.expert_count", int32_t(-1));
        }));
      },
      "llama.expert_count = -1 is negative");
  // f64 values f32 cannot hold are named, not reported as a zero or infinite config value.
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.attention.layer_norm_rms_epsilon", 1e-300);
        }));
      },
      "llama.attention.layer_norm_rms_epsilon = f64 1e-300 is outside the range of f32");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.rope.freq_base", 1e300);
        }));
      },
      "llama.rope.freq_base = f64 1e+300 is outside the range of f32");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w);
          w.set("llama.rope.scaling.factor", 1e-40f);
        }));
      },
      "llama.rope.scaling.factor = f32 1e-40 is outside the range of f32 (as 1 / factor)");
  expect_error(
      [] {
        llama_config_from_gguf(file_with([](GgufWriter& w) {
          llama_keys(w, "llama.attention.head_count");
          w.set("llama.attention.head_count", uint32_t(0));
        }));
      },
      "n_head = 0 is outside");
  expect_error([] { llama_config_from_gguf(file_with([](GgufWriter& w) { llama_keys(w, "llama.vocab_size"); })); },
               "neither llama.vocab_size nor tokenizer.ggml.tokens");
}

// ---- weights ----

// The bytes of `model` as a GGUF file with `edit` applied to its writer first.
GgufFile model_file(const LlamaModel& model, const std::function<void(GgufWriter&)>& edit = {}) {
  GgufWriter w = model.to_gguf("test");
  if (edit) edit(w);
  return GgufFile::parse(w.to_bytes(), "model.gguf");
}

// `model`'s file rebuilt without tensor `name` ("": none), then with what `add` adds.
GgufFile model_file_without(const LlamaModel& model, const std::string& name,
                            const std::function<void(GgufWriter&)>& add = {}) {
  GgufWriter w;
  const GgufFile full = model_file(model);
  for (const auto& [key, value] : full.metadata()) w.set(key, value);
  for (const GgufTensorInfo& t : full.tensors()) {
    if (t.name != name) w.add_tensor(t.name, t.type, std::span(t.ne).first(size_t(t.n_dims)), full.tensor_data(t));
  }
  if (add) add(w);
  const std::vector<uint8_t> bytes = w.to_bytes();
  return GgufFile::parse(bytes, "model.gguf");
}

TEST(LlamaModel, WritesTheStandardLayout) {
  const LlamaModel model = LlamaModel::generate(micro_config(), DType::Q8_0, kSeed);
  const GgufFile file = model_file(model);
  EXPECT_EQ(file.get("general.architecture").get<std::string>(), "llama");
  EXPECT_EQ(file.get("general.file_type").get<uint32_t>(), 7u);
  EXPECT_EQ(file.get("llama.rope.dimension_count").get<uint32_t>(), 16u);
  EXPECT_EQ(file.get("tokenizer.ggml.model").get<std::string>(), "llama");
  const auto& tokens = file.get("tokenizer.ggml.tokens").get_array<std::string>();
  ASSERT_EQ(tokens.size(), 96u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[3], "<0x00>");
  EXPECT_EQ(std::set<std::string>(tokens.begin(), tokens.end()).size(), tokens.size()) << "tokens must be unique";
  EXPECT_EQ(file.get("tokenizer.ggml.scores").array_size(), 96u);
  EXPECT_EQ(file.get("tokenizer.ggml.token_type").get_array<int32_t>().size(), 96u);
  EXPECT_EQ(file.get("tokenizer.ggml.bos_token_id").get<uint32_t>(), 1u);
  EXPECT_EQ(file.get("tokenizer.ggml.eos_token_id").get<uint32_t>(), 2u);
  EXPECT_EQ(file.tensors().size(), 3 + 9 * 2u);
  EXPECT_EQ(file.find_tensor("blk.1.ffn_down.weight")->type, DType::Q8_0);
  EXPECT_EQ(file.find_tensor("blk.1.ffn_norm.weight")->type, DType::F32) << "norms stay f32";
  EXPECT_EQ(file.find_tensor("output_norm.weight")->type, DType::F32);
  EXPECT_EQ(file.find_tensor("token_embd.weight")->ne[1], 96);
}

TEST(LlamaModel, LoadsWhatItWroteWithoutCopying) {
  const LlamaModel model = LlamaModel::generate(micro_config(), DType::F16, kSeed);
  const GgufFile file = model_file(model);
  const LlamaModel loaded = LlamaModel::from_gguf(file);
  EXPECT_EQ(loaded.config().n_vocab, model.config().n_vocab);
  EXPECT_EQ(loaded.decode_weight_bytes(), model.decode_weight_bytes());
  EXPECT_FALSE(loaded.tied_output());
  EXPECT_EQ(loaded.layers()[1].w_up->data, file.tensor_data(*file.find_tensor("blk.1.ffn_up.weight")));
  EXPECT_EQ(std::memcmp(loaded.layers()[1].w_up->data, model.layers()[1].w_up->data, model.layers()[1].w_up->nbytes()),
            0);
}

TEST(LlamaModel, RejectsMissingMisshapenAndUnexpectedTensors) {
  const LlamaModel model = LlamaModel::generate(micro_config(), DType::F32, kSeed);
  const LlamaConfig c = model.config();
  auto without = [&](const std::string& name, const std::function<void(GgufWriter&)>& add = {}) {
    return model_file_without(model, name, add);
  };
  expect_error([&] { LlamaModel::from_gguf(without("blk.1.attn_k.weight")); },
               "model.gguf: missing tensor 'blk.1.attn_k.weight'");
  std::vector<float> zeros(size_t(c.n_embd * c.n_embd * 4), 0.0f);
  expect_error(
      [&] {
        LlamaModel::from_gguf(without("blk.0.attn_k.weight", [&](GgufWriter& w) {
          const int64_t ne[] = {c.n_embd, c.n_embd};
          w.add_tensor("blk.0.attn_k.weight", DType::F32, ne, zeros.data());
        }));
      },
      "tensor 'blk.0.attn_k.weight' has shape [64,64], expected [64,32]");
  expect_error(
      [&] {
        LlamaModel::from_gguf(without("blk.0.attn_q.weight", [&](GgufWriter& w) {
          const int64_t ne[] = {c.n_embd, c.n_embd};
          w.add_tensor("blk.0.attn_q.weight", DType::I32, ne, zeros.data());
        }));
      },
      "tensor 'blk.0.attn_q.weight' is i32; matrices must be f32, f16, bf16 or a quantized type");
  expect_error(
      [&] {
        LlamaModel::from_gguf(without("output_norm.weight", [&](GgufWriter& w) {
          const int64_t ne[] = {c.n_embd};
          w.add_tensor("output_norm.weight", DType::I32, ne, zeros.data());
        }));
      },
      "norm weights must be f32, f16 or bf16");
  expect_error(
      [&] {
        LlamaModel::from_gguf(without("", [&](GgufWriter& w) {
          const int64_t ne[] = {c.n_embd};
          w.add_tensor("blk.0.attn_q.bias", DType::F32, ne, zeros.data());
        }));
      },
      "unexpected tensor 'blk.0.attn_q.bias'");
  expect_error(
      [&] {
        LlamaModel::from_gguf(without("", [&](GgufWriter& w) {
          const int64_t ne[] = {c.n_embd};
          w.add_tensor("out\x1b[2J\nput", DType::F32, ne, zeros.data());
        }));
      },
      "unexpected tensor 'out\\x1b[2J\\x0aput'");
}

// ---- decoding ----

// Prompt ids in the vocabulary, deterministic.
std::vector<int32_t> prompt_ids(int n, int64_t n_vocab) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(int32_t((7 + 31 * i) % n_vocab));
  return ids;
}

// The logits of every step: a prefill of the prompt, then `steps` greedy decode steps.
struct Trace {
  std::vector<std::vector<float>> logits;
  std::vector<int32_t> tokens;
};

Trace decode(const LlamaModel& model, Backend& b, const std::vector<int32_t>& prompt, int steps,
             DType cache = DType::F16) {
  LlamaSession session(model, b, model.config().n_ctx_train, cache);
  Trace t;
  t.logits.push_back(to_vector(session.eval(prompt)));
  for (int s = 0; s < steps; ++s) {
    const int32_t next = greedy_token(t.logits.back());
    t.tokens.push_back(next);
    t.logits.push_back(to_vector(session.eval(std::span<const int32_t>(&next, 1))));
  }
  return t;
}

TEST(LlamaSession, CpuMatchesTheReferenceBackend) {
  const LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::F16, kSeed);
  auto cpu = backend("cpu");
  auto reference = backend("reference");
  const std::vector<int32_t> prompt = prompt_ids(5, model.config().n_vocab);
  const Trace a = decode(model, *cpu, prompt, 6);
  const Trace b = decode(model, *reference, prompt, 6);
  EXPECT_EQ(a.tokens, b.tokens);
  for (size_t s = 0; s < a.logits.size(); ++s) {
    // Both run the same f16 weights and f16 cache; only the summation order differs (the
    // reference sums in double), so the logits agree to about f32 rounding.
    EXPECT_LT(test::nmse(a.logits[s], b.logits[s]), 1e-9)
        << "step " << s << ": " << test::describe_difference(a.logits[s], b.logits[s]);
  }
}

TEST(LlamaSession, GraphModeGivesTheEagerTokensAndBitIdenticalLogits) {
  const LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::Q8_0, kSeed);
  auto eager = backend("cpu", false);
  auto graphed = backend("cpu", true);
  const std::vector<int32_t> prompt = prompt_ids(6, model.config().n_vocab);
  // 40 decode steps cross a kKvPadding boundary (n_kv 32 -> 64): a second capture.
  const Trace a = decode(model, *eager, prompt, 40);
  const Trace b = decode(model, *graphed, prompt, 40);
  EXPECT_EQ(a.tokens, b.tokens);
  for (size_t s = 0; s < a.logits.size(); ++s) {
    ASSERT_EQ(a.logits[s].size(), b.logits[s].size());
    EXPECT_EQ(std::memcmp(a.logits[s].data(), b.logits[s].data(), a.logits[s].size() * sizeof(float)), 0)
        << "step " << s << ": " << test::describe_difference(b.logits[s], a.logits[s]);
  }
  const GraphModeStats& stats = graphed->graph_mode()->stats();
  EXPECT_EQ(stats.captures, 2u) << format_stats(stats);
  EXPECT_EQ(stats.replays, 38u) << format_stats(stats);
  EXPECT_EQ(eager->graph_mode()->stats().replays, 0u);
}

TEST(LlamaSession, TokenByTokenMatchesOnePrefill) {
  // KV cache correctness: position i's logits from one 40-token prefill equal those of step i of
  // a token-by-token run, which reads K and V of earlier positions back from the cache.
  const LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::F32, kSeed);
  auto cpu = backend("cpu");
  const std::vector<int32_t> sequence = prompt_ids(40, model.config().n_vocab);
  for (DType cache : {DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(dtype_name(cache)) + " cache");
    LlamaSession whole(model, *cpu, 64, cache);
    const std::vector<float> all = to_vector(whole.eval(sequence, true));
    ASSERT_EQ(all.size(), sequence.size() * size_t(model.config().n_vocab));
    LlamaSession stepwise(model, *cpu, 64, cache);
    const size_t n_vocab = size_t(model.config().n_vocab);
    // The same values reach the cache either way, except that a batched matmul may sum in another
    // order: f32 results one ulp apart. In an f16 cache such a pair can round to neighbouring f16
    // values, a 2^-11 relative change of that entry, hence the looser bound; bf16's neighbours
    // are 2^-8 apart.
    const double bound = cache == DType::F32 ? 1e-11 : cache == DType::F16 ? 1e-8 : 1e-6;
    for (size_t i = 0; i < sequence.size(); ++i) {
      const std::vector<float> one = to_vector(stepwise.eval(std::span<const int32_t>(&sequence[i], 1)));
      const std::span<const float> expected(all.data() + i * n_vocab, n_vocab);
      EXPECT_LT(test::nmse(one, expected), bound)
          << "position " << i << ": " << test::describe_difference(one, expected);
    }
    // The last-token logits of a prefill are the last row of all logits.
    LlamaSession last(model, *cpu, 64, cache);
    const std::vector<float> tail = to_vector(last.eval(sequence));
    EXPECT_LT(test::nmse(tail, std::span<const float>(all.data() + (sequence.size() - 1) * n_vocab, n_vocab)), 1e-12);
  }
}

TEST(LlamaSession, QuantizedPrefillMatchesTokenByToken) {
  // A 24-token prefill multiplies the quantized weights in the integer GEMM, one token at a time
  // in the matrix-vector kernels: the same 8-bit activations and exact integer block sums, summed
  // in f32 in another order (bf16: the same bf16 activations, in pairs on AVX512_BF16 against
  // the GEMV's f32 FMAs). The logits agree to ~1e-13 until an f32 ulp moves one activation to
  // the neighbouring 8-bit step (about once in the ~60k roundings of this run); when that value
  // reaches the KV cache, every later position differs by ~3e-5 (q5_0 and q5_1 here, from
  // position 12). A wrong block, scale or offset in either path gives 1e-2 or more.
  LlamaConfig config = llama_preset("tiny");
  config.n_embd = 256;  // whole 256-element blocks for the K types
  config.n_ff = 512;
  auto cpu = backend("cpu");
  const std::vector<int32_t> sequence = prompt_ids(24, config.n_vocab);
  const size_t n_vocab = size_t(config.n_vocab);
  for (const WeightTypes& types :
       {WeightTypes::all(DType::Q8_0), WeightTypes::all(DType::Q4_0), WeightTypes::all(DType::Q5_1),
        WeightTypes::q4_k_m(), WeightTypes::all(DType::BF16)}) {
    SCOPED_TRACE(std::string(dtype_name(types.matrices)));
    const LlamaModel model = LlamaModel::generate(config, types, kSeed);
    LlamaSession whole(model, *cpu, 32, DType::F32);
    const std::vector<float> all = to_vector(whole.eval(sequence, true));
    LlamaSession stepwise(model, *cpu, 32, DType::F32);
    for (size_t i = 0; i < sequence.size(); ++i) {
      const std::vector<float> one = to_vector(stepwise.eval(std::span<const int32_t>(&sequence[i], 1)));
      const std::span<const float> expected(all.data() + i * n_vocab, n_vocab);
      EXPECT_LT(test::nmse(one, expected), 1e-3)
          << "position " << i << ": " << test::describe_difference(one, expected);
    }
  }
}

TEST(LlamaSession, ReusedGraphsGiveTheLogitsOfRebuiltOnes) {
  // Decode steps of one shape reuse the previous step's graph; rebuilding every step must give
  // the same bits, eager and in graph mode.
  const LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::F16, kSeed);
  const std::vector<int32_t> prompt = prompt_ids(5, model.config().n_vocab);
  for (bool graph_mode : {false, true}) {
    SCOPED_TRACE(graph_mode ? "graph mode" : "eager");
    auto b = backend("cpu", graph_mode);
    LlamaSession reusing(model, *b, 64), rebuilding(model, *b, 64);
    rebuilding.set_reuse_graphs(false);
    std::vector<float> a = to_vector(reusing.eval(prompt)), r = to_vector(rebuilding.eval(prompt));
    for (int step = 0; step < 40; ++step) {
      ASSERT_EQ(std::memcmp(a.data(), r.data(), a.size() * sizeof(float)), 0) << "step " << step;
      const int32_t next = greedy_token(a);
      a = to_vector(reusing.eval(std::span<const int32_t>(&next, 1)));
      r = to_vector(rebuilding.eval(std::span<const int32_t>(&next, 1)));
    }
    // Graphs were built for the prompt, the first decode step and the step where n_kv grew to 64.
    EXPECT_EQ(reusing.reused_graphs(), 40 - 2);
    EXPECT_EQ(rebuilding.reused_graphs(), 0);
  }
}

TEST(LlamaSession, TruncateContinuesFromAnEarlierPosition) {
  const LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::F32, kSeed);
  auto cpu = backend("cpu");
  const std::vector<int32_t> first = prompt_ids(10, model.config().n_vocab);
  std::vector<int32_t> second(first.begin(), first.begin() + 6);
  for (int32_t id : {3, 1, 4, 1}) second.push_back(id);
  LlamaSession rewound(model, *cpu, 32, DType::F32), fresh(model, *cpu, 32, DType::F32);
  rewound.eval(first);
  expect_error([&] { rewound.truncate(11); }, "cannot truncate to 11 positions, the sequence has 10");
  rewound.truncate(6);
  EXPECT_EQ(rewound.n_past(), 6);
  const std::vector<float> tail = to_vector(rewound.eval(std::span<const int32_t>(second).subspan(6), true));
  const std::vector<float> all = to_vector(fresh.eval(second, true));
  const size_t n_vocab = size_t(model.config().n_vocab);
  const std::span<const float> expected(all.data() + 6 * n_vocab, 4 * n_vocab);
  EXPECT_LT(test::nmse(tail, expected), 1e-11) << test::describe_difference(tail, expected);
}

TEST(LlamaSession, Q8_0ModelStaysWithinItsErrorBoundOfF32) {
  // Same seed, so the q8_0 model holds the f32 model's values quantized. q8_0 rounds each value to
  // 1/254 of its block's max: for uniform weights the relative RMS error is 1/(127 * 2) ~ 0.4%,
  // an NMSE of 1.5e-5 per matmul, and MUL_MAT rounds its activations the same way (quant.h), about
  // as much again. Every layer adds its error to the residual stream and the head adds its own,
  // so the logits' NMSE stays below (2 layers * 7 matmuls + 1) * 3e-5 ~ 5e-4 (8e-5 measured, 4e-5
  // of it from the weights); the f16 model's, for scale, is ~1e-7.
  const LlamaConfig config = llama_preset("tiny");
  const LlamaModel f32 = LlamaModel::generate(config, DType::F32, kSeed);
  const LlamaModel q8 = LlamaModel::generate(config, DType::Q8_0, kSeed);
  const LlamaModel f16 = LlamaModel::generate(config, DType::F16, kSeed);
  auto cpu = backend("cpu");
  const std::vector<int32_t> prompt = prompt_ids(8, config.n_vocab);
  LlamaSession s32(f32, *cpu, 32), s8(q8, *cpu, 32), s16(f16, *cpu, 32);
  const std::vector<float> ref = to_vector(s32.eval(prompt, true));
  const std::vector<float> quant = to_vector(s8.eval(prompt, true));
  const std::vector<float> half = to_vector(s16.eval(prompt, true));
  const double q8_error = test::nmse(quant, ref), f16_error = test::nmse(half, ref);
  EXPECT_LT(q8_error, 5e-4) << test::describe_difference(quant, ref);
  EXPECT_GT(q8_error, 1e-7) << "q8_0 weights should differ from f32";
  EXPECT_LT(f16_error, q8_error) << "f16 keeps more precision than q8_0";
}

// The logits' NMSE against the f32 model of the same seed, for each weight type, after a prompt.
std::vector<double> logit_errors(const LlamaConfig& config, std::initializer_list<WeightTypes> types) {
  auto cpu = backend("cpu");
  const std::vector<int32_t> prompt = prompt_ids(8, config.n_vocab);
  const LlamaModel f32 = LlamaModel::generate(config, DType::F32, kSeed);
  LlamaSession s32(f32, *cpu, 32);
  const std::vector<float> ref = to_vector(s32.eval(prompt, true));
  std::vector<double> errors;
  for (const WeightTypes& t : types) {
    const LlamaModel model = LlamaModel::generate(config, t, kSeed);
    LlamaSession session(model, *cpu, 32);
    const std::vector<float> logits = to_vector(session.eval(prompt, true));
    errors.push_back(test::nmse(logits, ref));
    EXPECT_GT(errors.back(), 1e-7) << dtype_name(t.matrices) << " weights should differ from f32";
  }
  return errors;
}

TEST(LlamaSession, Bf16ModelStaysWithinItsErrorBoundOfF32) {
  // bf16 keeps 8 significant bits: rounding to nearest moves a value by at most 2^-8 of itself,
  // an RMS of ~1.6e-3 and an NMSE of ~2.6e-6 per rounding. MUL_MAT rounds the activations of
  // bf16 weights to bf16 as well (quant.h), so ~5e-6 per matmul and (2 layers * 7 + 1) * 5e-6 ~
  // 8e-5 over the model, between f16 (11 bits) and q8_0 (max/254 per block). Measured: bf16
  // 1.2e-5, f16 1.3e-7, q8_0 8.4e-5.
  const std::vector<double> e =
      logit_errors(llama_preset("tiny"),
                   {WeightTypes::all(DType::BF16), WeightTypes::all(DType::F16), WeightTypes::all(DType::Q8_0)});
  EXPECT_LT(e[0], 8e-5) << "bf16";
  EXPECT_LT(e[1], e[0]) << "f16 keeps more precision than bf16";
  EXPECT_LT(e[0], e[2]) << "bf16 keeps more precision than q8_0";
}

TEST(LlamaSession, Q4_0ModelStaysWithinItsErrorBoundOfF32) {
  // As the q8_0 test above, with q4_0's step of max/8 instead of max/127: a relative RMS error of
  // (1/8)/sqrt(12) / (1/sqrt(3)) = 1/16 per weight, an NMSE of ~4e-3 per matmul (5e-3 with the
  // clamped opposite extremes), so (2 layers * 7 + 1) * 5e-3 ~ 7.5e-2 at most; q5_0 and q5_1
  // have half the step, a quarter of the error. Measured: q4_0 1.1e-2, q4_1 9.5e-3, q5_0 3.0e-3,
  // q5_1 2.3e-3 (q8_0 4e-5).
  const std::vector<double> e =
      logit_errors(llama_preset("tiny"),
                   {WeightTypes::all(DType::Q4_0), WeightTypes::all(DType::Q4_1), WeightTypes::all(DType::Q5_0),
                    WeightTypes::all(DType::Q5_1), WeightTypes::all(DType::Q8_0)});
  EXPECT_LT(e[0], 7.5e-2) << "q4_0";
  EXPECT_LT(e[1], 7.5e-2) << "q4_1";
  EXPECT_LT(e[2], 2e-2) << "q5_0";
  EXPECT_LT(e[3], 2e-2) << "q5_1";
  EXPECT_LT(e[4], e[2]) << "q8_0 keeps more precision than q5_0";
  EXPECT_LT(e[2], e[0]) << "q5_0 keeps more precision than q4_0";
}

TEST(LlamaSession, KQuantModelsStayWithinTheirErrorBoundsOfF32) {
  // The K types need rows of whole 256-element blocks. q4_K's sub-block step is its span / 15,
  // ~max/7.5 for uniform weights: about q4_0's error, 7.5e-2 at most over the model; q5_K halves
  // the step (2e-2) and q6_K's max/31 gives ~3.5e-4 per matmul, 15 * 3.5e-4 ~ 5e-3. The Q4_K_M
  // mix has q6_K in 5 of its 15 matmuls: at most 10 * 5e-3 + 5 * 3.5e-4 ~ 5e-2. Rounding the
  // activations to q8_K (ops.h) adds a little (q6_K: 6.2e-4 before). Measured: q4_K 1.0e-2,
  // q5_K 2.7e-3, q6_K 6.7e-4, Q4_K_M 5.9e-3.
  LlamaConfig config = llama_preset("tiny");
  config.n_embd = 256;
  config.n_ff = 512;
  const std::vector<double> e = logit_errors(config, {WeightTypes::all(DType::Q4_K), WeightTypes::all(DType::Q5_K),
                                                      WeightTypes::all(DType::Q6_K), WeightTypes::q4_k_m()});
  EXPECT_LT(e[0], 7.5e-2) << "q4_K";
  EXPECT_LT(e[1], 2e-2) << "q5_K";
  EXPECT_LT(e[2], 5e-3) << "q6_K";
  EXPECT_LT(e[3], 5e-2) << "q4_K_M";
  EXPECT_LT(e[2], e[1]) << "q6_K keeps more precision than q5_K";
  EXPECT_LT(e[1], e[0]) << "q5_K keeps more precision than q4_K";
  EXPECT_LT(e[3], e[0]) << "Q4_K_M keeps more precision than q4_K alone";
}

TEST(LlamaModel, Q4_K_MMixKeepsItsTypesThroughTheFile) {
  LlamaConfig config = micro_config();
  config.n_embd = 256;
  config.n_ff = 256;
  const LlamaModel model = LlamaModel::generate(config, WeightTypes::q4_k_m(), kSeed);
  EXPECT_FALSE(model.uniform_weights());
  const GgufFile file = model_file(model);
  EXPECT_EQ(file.get("general.file_type").get<uint32_t>(), 15u);  // LLAMA_FTYPE_MOSTLY_Q4_K_M
  const LlamaModel loaded = LlamaModel::from_gguf(file);
  EXPECT_EQ(loaded.weight_type(), DType::Q4_K);
  EXPECT_EQ(loaded.matrix_types(), (std::vector<DType>{DType::Q4_K, DType::Q6_K}));
  EXPECT_EQ(loaded.token_embd()->type, DType::Q4_K);
  EXPECT_EQ(loaded.output()->type, DType::Q6_K);
  for (const BlockWeights& w : loaded.layers()) {
    EXPECT_EQ(w.wk->type, DType::Q4_K);
    EXPECT_EQ(w.wv->type, DType::Q6_K);
    EXPECT_EQ(w.w_up->type, DType::Q4_K);
    EXPECT_EQ(w.w_down->type, DType::Q6_K);
    EXPECT_EQ(w.ffn_norm->type, DType::F32);
  }
  auto cpu = backend("cpu");
  const std::vector<int32_t> prompt = prompt_ids(4, config.n_vocab);
  LlamaSession a(model, *cpu, 32), b(loaded, *cpu, 32);
  EXPECT_EQ(a.generate(prompt, 6).tokens, b.generate(prompt, 6).tokens);
  EXPECT_TRUE(LlamaModel::generate(config, DType::Q4_K, kSeed).uniform_weights());
  EXPECT_EQ(LlamaModel::generate(config, DType::Q4_K, kSeed).matrix_types(), std::vector<DType>{DType::Q4_K});
}

TEST(LlamaModel, QuantizedModelsRoundTripThroughGgufAndRunTheSame) {
  LlamaConfig config = micro_config();
  config.n_embd = 256;
  config.n_ff = 256;
  auto cpu = backend("cpu");
  const std::vector<int32_t> prompt = prompt_ids(4, config.n_vocab);
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    const LlamaModel model = LlamaModel::generate(config, type, kSeed);
    const GgufFile file = model_file(model);
    EXPECT_EQ(file.get("general.quantization_version").get<uint32_t>(), 2u) << dtype_name(type);
    const LlamaModel loaded = LlamaModel::from_gguf(file);
    EXPECT_EQ(loaded.weight_type(), type);
    EXPECT_EQ(loaded.output()->type, type);
    EXPECT_EQ(loaded.layers()[0].attn_norm->type, DType::F32) << "norms stay f32";
    const Tensor& w = *model.layers()[1].w_down;
    ASSERT_EQ(loaded.layers()[1].w_down->nbytes(), w.nbytes());
    EXPECT_EQ(std::memcmp(loaded.layers()[1].w_down->data, w.data, w.nbytes()), 0) << dtype_name(type);
    LlamaSession a(model, *cpu, 32), b(loaded, *cpu, 32);
    EXPECT_EQ(a.generate(prompt, 6).tokens, b.generate(prompt, 6).tokens) << dtype_name(type);
  }
}

TEST(LlamaModel, GenerateNamesTheTensorWhoseRowsCannotBeWholeBlocks) {
  LlamaConfig config = micro_config();  // n_embd 64, n_ff 160
  expect_error(
      [&] { LlamaModel::generate(config, DType::Q4_K, kSeed); },
      "q4_K weights need rows of whole 256-element blocks: tensor 'token_embd.weight' has ne[0] = n_embd = 64");
  config.n_embd = 256;
  expect_error(
      [&] { LlamaModel::generate(config, DType::Q6_K, kSeed); },
      "q6_K weights need rows of whole 256-element blocks: tensor 'blk.0.ffn_down.weight' has ne[0] = n_ff = 160");
  config.n_ff = 176;
  expect_error([&] { LlamaModel::generate(config, DType::Q4_0, kSeed); },
               "tensor 'blk.0.ffn_down.weight' has ne[0] = n_ff = 176");
  // In the mix, only ffn_down's rows are n_ff long.
  WeightTypes mix = WeightTypes::q4_k_m();
  mix.ffn_down = DType::Q8_0;
  config.n_ff = 160;
  EXPECT_NO_THROW(LlamaModel::generate(config, mix, kSeed));
  mix.attn_v = DType::F32;
  EXPECT_NO_THROW(LlamaModel::generate(config, mix, kSeed));
}

LlamaConfig qwen2_config() {
  LlamaConfig config = llama_preset("tiny");
  config.arch = Architecture::kQwen2;
  return config;
}

// gguf-gen streams the weights into the file instead of generating the model first: the same
// bytes, for every kind of tensor (quantized, mixed, biases, norms, another vocabulary).
TEST(LlamaModel, GenerateGgufWritesTheFileOfTheGeneratedModel) {
  LlamaConfig small = llama_preset("small");
  small.n_ff = 768;
  LlamaConfig three_layers = llama_preset("tiny");
  three_layers.n_layer = 3;
  const struct {
    LlamaConfig config;
    WeightTypes types;
    uint64_t seed;
  } cases[] = {{llama_preset("tiny"), WeightTypes::all(DType::F16), kSeed},
               {three_layers, WeightTypes::all(DType::Q8_0), 42},
               {small, WeightTypes::q4_k_m(), 7},
               {qwen2_config(), WeightTypes::all(DType::F32), UINT64_MAX}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(architecture_name(c.config.arch)) + " " + std::string(dtype_name(c.types.matrices)));
    const Vocab vocab = Vocab::minimal_byte_level(c.config.n_vocab);
    const std::vector<uint8_t> streamed = LlamaModel::generate_gguf(c.config, c.types, c.seed, "m", vocab).to_bytes();
    EXPECT_EQ(streamed, LlamaModel::generate(c.config, c.types, c.seed).to_gguf("m", vocab).to_bytes());
  }
}

TEST(LlamaSession, GeneratedFileLoadsAndRunsLikeTheModelItCameFrom) {
  const LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::Q8_0, kSeed);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tg_llama_" + std::to_string(getpid()) + ".gguf")).string();
  model.to_gguf("tiny").write_file(path);
  {
    const GgufFile file = GgufFile::open(path);
    const LlamaModel loaded = LlamaModel::from_gguf(file);
    auto cpu = backend("cpu");
    const std::vector<int32_t> prompt = prompt_ids(4, model.config().n_vocab);
    LlamaSession a(model, *cpu, 64), b(loaded, *cpu, 64);
    const GenerationResult ra = a.generate(prompt, 12), rb = b.generate(prompt, 12);
    EXPECT_EQ(ra.tokens, rb.tokens);
    EXPECT_EQ(ra.tokens.size(), 12u);
    EXPECT_EQ(rb.decode_steps, 11);
    EXPECT_EQ(rb.prefill_tokens, 4);
    EXPECT_EQ(b.n_past(), 4 + 11);
  }
  std::filesystem::remove(path);
}

TEST(LlamaModel, Qwen2BlocksAddTheirBiasesAndRotateNeoxStyle) {
  const BlockConfig block = qwen2_config().block_config(32, DType::F32, DType::F16);
  EXPECT_TRUE(block.qkv_bias);
  EXPECT_EQ(block.rope_mode, RopeMode::NEOX);
  EXPECT_FALSE(llama_preset("tiny").block_config(32, DType::F32, DType::F16).qkv_bias);
  Context ctx;
  const BlockWeights w = make_block_weights(ctx, block, 7);
  ASSERT_TRUE(w.bq && w.bk && w.bv);
  const KvCache cache = make_kv_cache(ctx, block);
  Context graph_ctx{ContextOptions{.no_alloc = true}};
  const StepInputs in = make_step_inputs(graph_ctx, block, 2, 32);
  const Graph graph = Graph::build(build_block(graph_ctx, block, w, cache, in, 32));
  int ropes = 0, bias_adds = 0;
  for (const Tensor* t : graph.nodes()) {
    if (t->op == Op::ROPE) {
      ++ropes;
      EXPECT_EQ(t->op_params[2], int32_t(RopeMode::NEOX));
    }
    if (t->op == Op::ADD && (t->src[1] == w.bq || t->src[1] == w.bk || t->src[1] == w.bv)) ++bias_adds;
  }
  EXPECT_EQ(ropes, 2);
  EXPECT_EQ(bias_adds, 3);
}

TEST(LlamaSession, Qwen2SurvivesTheFileAndMatchesTheReference) {
  const LlamaModel model = LlamaModel::generate(qwen2_config(), DType::F32, kSeed);
  const GgufFile file = model_file(model);
  EXPECT_EQ(file.get("general.architecture").get<std::string>(), "qwen2");
  EXPECT_EQ(file.get("qwen2.embedding_length").to_int(), 128);
  EXPECT_EQ(file.find("llama.embedding_length"), nullptr);
  ASSERT_NE(file.find_tensor("blk.1.attn_v.bias"), nullptr);
  EXPECT_EQ(file.find_tensor("blk.1.attn_v.bias")->ne[0], 64);  // kv_dim: 2 KV heads of 32
  const LlamaModel loaded = LlamaModel::from_gguf(file);
  EXPECT_EQ(loaded.config().arch, Architecture::kQwen2);
  ASSERT_NE(loaded.layers()[1].bk, nullptr);

  auto cpu = backend("cpu");
  auto reference = backend("reference");
  const std::vector<int32_t> prompt = prompt_ids(6, model.config().n_vocab);
  const Trace a = decode(loaded, *cpu, prompt, 4);
  const Trace b = decode(loaded, *reference, prompt, 4);
  for (size_t s = 0; s < a.logits.size(); ++s) EXPECT_LT(test::nmse(a.logits[s], b.logits[s]), 1e-9) << "step " << s;

  // The biases reach the logits: without them the model computes something else.
  const LlamaModel unbiased = LlamaModel::generate(qwen2_config(), DType::F32, kSeed);
  for (const BlockWeights& w : unbiased.layers()) {
    for (Tensor* bias : {w.bq, w.bk, w.bv}) std::memset(bias->data, 0, bias->nbytes());
  }
  const Trace c = decode(unbiased, *cpu, prompt, 4);
  for (size_t s = 0; s < a.logits.size(); ++s) EXPECT_GT(test::nmse(a.logits[s], c.logits[s]), 1e-6) << "step " << s;
}

TEST(LlamaModel, Qwen2FilesNeedTheirBiases) {
  // (A llama file with biases is refused by RejectsMissingMisshapenAndUnexpectedTensors.)
  const LlamaModel qwen2 = LlamaModel::generate(qwen2_config(), DType::F32, kSeed);
  expect_error([&] { LlamaModel::from_gguf(model_file_without(qwen2, "blk.1.attn_k.bias")); },
               "model.gguf: missing tensor 'blk.1.attn_k.bias'");
  const std::vector<uint8_t> half(64 * 2, 0);
  expect_error(
      [&] {
        LlamaModel::from_gguf(model_file_without(qwen2, "blk.0.attn_v.bias", [&](GgufWriter& w) {
          const int64_t ne[] = {64};
          w.add_tensor("blk.0.attn_v.bias", DType::F16, ne, half.data());
        }));
      },
      "tensor 'blk.0.attn_v.bias' is f16; biases must be f32");
}

TEST(LlamaSession, LinearRopeScalingSurvivesTheFileAndMatchesTheReference) {
  LlamaConfig config = llama_preset("tiny");
  config.rope_freq_scale = 0.25f;
  const LlamaModel scaled = LlamaModel::generate(config, DType::F32, kSeed);
  const GgufFile file = model_file(scaled);
  EXPECT_EQ(file.get("llama.rope.scaling.factor").get<float>(), 4.0f);
  const LlamaModel loaded = LlamaModel::from_gguf(file);
  EXPECT_EQ(loaded.config().rope_freq_scale, 0.25f);

  auto cpu = backend("cpu");
  auto reference = backend("reference");
  const std::vector<int32_t> prompt = prompt_ids(6, config.n_vocab);
  const Trace a = decode(loaded, *cpu, prompt, 4);
  const Trace b = decode(loaded, *reference, prompt, 4);
  const Trace unscaled = decode(LlamaModel::generate(llama_preset("tiny"), DType::F32, kSeed), *cpu, prompt, 4);
  for (size_t s = 0; s < a.logits.size(); ++s) {
    EXPECT_LT(test::nmse(a.logits[s], b.logits[s]), 1e-9) << "step " << s;
    // Position 0 alone rotates by nothing, so a prompt of 6 already differs.
    EXPECT_GT(test::nmse(a.logits[s], unscaled.logits[s]), 1e-6) << "step " << s << ": the scale was not applied";
  }
}

TEST(LlamaSession, RopeFrequencyFactorsAreReadAndApplied) {
  // llama 3 files carry rope_freqs.weight [head_dim / 2], dividing each pair's frequency.
  const LlamaModel base = LlamaModel::generate(llama_preset("tiny"), DType::F32, kSeed);
  const int64_t half = base.config().head_dim() / 2;
  const GgufFile plain_file = model_file(base);
  const LlamaModel plain = LlamaModel::from_gguf(plain_file);
  EXPECT_EQ(plain.rope_freqs(), nullptr);
  std::vector<float> ones(size_t(half), 1.0f), factors(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) factors[size_t(i)] = 1.0f + float(i % 8);
  auto with_factors = [&](const std::vector<float>& f) {
    return model_file(base, [&](GgufWriter& w) {
      w.add_tensor("rope_freqs.weight", DType::F32, std::vector<int64_t>{half}, f.data());
    });
  };
  auto cpu = backend("cpu");
  auto reference = backend("reference");
  const std::vector<int32_t> prompt = prompt_ids(6, base.config().n_vocab);
  const Trace unscaled = decode(plain, *cpu, prompt, 3);

  // Factors of 1 change nothing, bit for bit.
  const GgufFile ones_file = with_factors(ones);
  const LlamaModel with_ones = LlamaModel::from_gguf(ones_file);
  ASSERT_NE(with_ones.rope_freqs(), nullptr);
  EXPECT_EQ(with_ones.layers().back().rope_freqs, with_ones.rope_freqs()) << "every block shares them";
  EXPECT_EQ(decode(with_ones, *cpu, prompt, 3).logits, unscaled.logits);

  // Other factors change the logits, on the CPU as in the reference, and survive a round trip.
  const GgufFile scaled_file = with_factors(factors);
  const LlamaModel scaled = LlamaModel::from_gguf(scaled_file);
  const Trace a = decode(scaled, *cpu, prompt, 3), b = decode(scaled, *reference, prompt, 3);
  for (size_t s = 0; s < a.logits.size(); ++s) {
    EXPECT_LT(test::nmse(a.logits[s], b.logits[s]), 1e-9) << "step " << s;
    EXPECT_GT(test::nmse(a.logits[s], unscaled.logits[s]), 1e-6) << "step " << s << ": the factors were not applied";
  }
  const GgufFile again = GgufFile::parse(scaled.to_gguf("again").to_bytes(), "again.gguf");
  ASSERT_NE(again.find_tensor("rope_freqs.weight"), nullptr);
  EXPECT_EQ(decode(LlamaModel::from_gguf(again), *cpu, prompt, 3).logits, a.logits);

  // Their shape and type are checked like every other tensor's.
  expect_error(
      [&] {
        std::vector<float> too_many(size_t(2 * half), 1.0f);
        const GgufFile f = model_file(base, [&](GgufWriter& w) {
          w.add_tensor("rope_freqs.weight", DType::F32, std::vector<int64_t>{2 * half}, too_many.data());
        });
        LlamaModel::from_gguf(f);
      },
      "tensor 'rope_freqs.weight' has shape [32], expected [16]");
  expect_error(
      [&] {
        std::vector<uint16_t> halves(size_t(half), 0x3c00);
        const GgufFile f = model_file(base, [&](GgufWriter& w) {
          w.add_tensor("rope_freqs.weight", DType::F16, std::vector<int64_t>{half}, halves.data());
        });
        LlamaModel::from_gguf(f);
      },
      "tensor 'rope_freqs.weight' is f16; RoPE frequency factors must be f32");
}

TEST(LlamaSession, TiedOutputUsesTheEmbedding) {
  // Without output.weight the head is token_embd: the logits equal those of a file whose
  // output.weight is a copy of the embedding.
  const LlamaModel model = LlamaModel::generate(micro_config(), DType::F16, kSeed);
  const GgufFile full = model_file(model);
  auto rebuilt = [&](bool copy_embedding) {
    GgufWriter w;
    for (const auto& [key, value] : full.metadata()) w.set(key, value);
    for (const GgufTensorInfo& t : full.tensors()) {
      const GgufTensorInfo& source = t.name == "output.weight" ? *full.find_tensor("token_embd.weight") : t;
      if (t.name != "output.weight" || copy_embedding) {
        w.add_tensor(t.name, t.type, std::span(t.ne).first(size_t(t.n_dims)), full.tensor_data(source));
      }
    }
    return GgufFile::parse(w.to_bytes());
  };
  const GgufFile tied_file = rebuilt(false), copied_file = rebuilt(true);
  const LlamaModel tied = LlamaModel::from_gguf(tied_file), copied = LlamaModel::from_gguf(copied_file);
  EXPECT_TRUE(tied.tied_output());
  EXPECT_EQ(tied.output(), tied.token_embd());
  EXPECT_FALSE(copied.tied_output());
  auto cpu = backend("cpu");
  LlamaSession a(tied, *cpu, 32), b(copied, *cpu, 32), c(model, *cpu, 32);
  const std::vector<int32_t> prompt = prompt_ids(3, model.config().n_vocab);
  const std::vector<float> la = to_vector(a.eval(prompt)), lb = to_vector(b.eval(prompt)),
                           lc = to_vector(c.eval(prompt));
  ASSERT_EQ(la.size(), lb.size());
  EXPECT_EQ(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)), 0) << test::describe_difference(la, lb);
  EXPECT_GT(test::nmse(la, lc), 1e-2) << "the generated model's own output.weight gives other logits";
}

TEST(LlamaSession, RejectsBadRequests) {
  const LlamaModel model = LlamaModel::generate(micro_config(), DType::F32, kSeed);
  auto cpu = backend("cpu");
  expect_error([&] { LlamaSession(model, *cpu, 97); }, "n_ctx 97 is outside 1..96");
  LlamaSession session(model, *cpu, 8);
  const int32_t bad[] = {3, 96};
  expect_error([&] { session.eval(bad); }, "token 1 has id 96, outside the vocabulary [0, 96)");
  const int32_t negative[] = {-1};
  expect_error([&] { session.eval(negative); }, "token 0 has id -1");
  expect_error([&] { session.eval({}); }, "at least one token");
  const std::vector<int32_t> nine(9, 1);
  expect_error([&] { session.eval(nine); }, "context full: 0 + 9 tokens exceed n_ctx 8");
  expect_error([&] { session.generate(std::vector<int32_t>(4, 1), 6); },
               "4 prompt tokens + 6 generated tokens do not fit in n_ctx 8");
  EXPECT_EQ(session.n_past(), 0) << "a rejected request leaves the session as it was";
  EXPECT_EQ(session.generate(std::vector<int32_t>(4, 1), 5).tokens.size(), 5u);
}

TEST(LlamaSession, GenerationEndsAtTheStopToken) {
  const LlamaModel model = LlamaModel::generate(micro_config(), DType::F32, kSeed);
  const std::vector<int32_t> prompt = {1, 5, 9};
  auto b = backend("cpu");
  const GenerationResult full = LlamaSession(model, *b, 32).generate(prompt, 8);
  EXPECT_FALSE(full.stopped);
  for (size_t k : {size_t(0), size_t(2), size_t(7)}) {
    // The first occurrence of the k-th token ends the run there.
    const int32_t stop = full.tokens[k];
    const size_t first = size_t(std::find(full.tokens.begin(), full.tokens.end(), stop) - full.tokens.begin());
    const int32_t stops[] = {-1, stop};
    const GenerationResult r = LlamaSession(model, *b, 32).generate(prompt, 8, {}, stops);
    EXPECT_EQ(r.tokens, std::vector<int32_t>(full.tokens.begin(), full.tokens.begin() + std::ptrdiff_t(first) + 1));
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.decode_steps, int64_t(first));
  }
}

TEST(LlamaSession, SampledTokensRepeatWithTheirSeedInGraphModeAndEager) {
  // Graph mode's logits are eager's bit for bit, so a seed draws the same tokens in both.
  const LlamaModel model = LlamaModel::generate(llama_preset("tiny"), DType::F16, kSeed);
  const std::vector<int32_t> prompt = prompt_ids(4, model.config().n_vocab);
  auto generate = [&](bool graph_mode, const SamplerOptions& sampling) {
    auto b = backend("cpu", graph_mode);
    return LlamaSession(model, *b, 32).generate(prompt, 16, {}, {}, sampling).tokens;
  };
  const SamplerOptions hot{2.0, 0, 1.0, 0.0, 11};
  const std::vector<int32_t> sampled = generate(true, hot);
  EXPECT_EQ(sampled, generate(false, hot));
  EXPECT_NE(sampled, generate(true, SamplerOptions{})) << "sampling at temperature 2 should leave the greedy path";
  SamplerOptions other = hot;
  other.seed = 12;
  EXPECT_NE(sampled, generate(true, other));
  expect_error([&] { generate(true, SamplerOptions{-1.0}); }, "sampler: temperature -1");
}

}  // namespace
}  // namespace tg::model
