// LlamaModel::to_gguf and generate_gguf: the metadata and tensor layout llama.cpp writes for a
// llama (or qwen2) model, with a minimal SentencePiece-style vocabulary unless given one, so that
// GGUF tools and llama.cpp can open the file.
#include <string>
#include <unordered_map>
#include <vector>

#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf_keys.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/vocab.h"

namespace tg::model {

namespace {

// llama.cpp's llama_ftype for a file whose matrices are all `type` (the K types: the "_S" mixes,
// the closest to all of one type).
uint32_t file_type(DType type) {
  switch (type) {
    case DType::F32: return 0;    // LLAMA_FTYPE_ALL_F32
    case DType::F16: return 1;    // LLAMA_FTYPE_MOSTLY_F16
    case DType::Q4_0: return 2;   // LLAMA_FTYPE_MOSTLY_Q4_0
    case DType::Q4_1: return 3;   // LLAMA_FTYPE_MOSTLY_Q4_1
    case DType::Q8_0: return 7;   // LLAMA_FTYPE_MOSTLY_Q8_0
    case DType::Q5_0: return 8;   // LLAMA_FTYPE_MOSTLY_Q5_0
    case DType::Q5_1: return 9;   // LLAMA_FTYPE_MOSTLY_Q5_1
    case DType::Q4_K: return 14;  // LLAMA_FTYPE_MOSTLY_Q4_K_S
    case DType::Q5_K: return 16;  // LLAMA_FTYPE_MOSTLY_Q5_K_S
    case DType::Q6_K: return 18;  // LLAMA_FTYPE_MOSTLY_Q6_K
    case DType::BF16: return 32;  // LLAMA_FTYPE_MOSTLY_BF16
    case DType::I32: break;
  }
  throw Error("llama: no file type for " + std::string(dtype_name(type)) + " weights");
}

// The file type of `model`: llama.cpp's "_M" mixes keep some matrices at more bits than the rest.
uint32_t file_type(const LlamaModel& model) {
  if (!model.uniform_weights()) {
    if (model.weight_type() == DType::Q4_K) return 15;  // LLAMA_FTYPE_MOSTLY_Q4_K_M
    if (model.weight_type() == DType::Q5_K) return 17;  // LLAMA_FTYPE_MOSTLY_Q5_K_M
  }
  return file_type(model.weight_type());
}

}  // namespace

GgufWriter LlamaModel::to_gguf(const std::string& name) const {
  return to_gguf(name, Vocab::minimal_sentencepiece(config_.n_vocab));
}

GgufWriter LlamaModel::to_gguf(const std::string& name, const Vocab& vocab) const {
  return gguf_writer(name, vocab, [](GgufWriter& w, const Tensor& t) { w.add_tensor(t.name, t); });
}

GgufWriter LlamaModel::generate_gguf(const LlamaConfig& config, const WeightTypes& types, uint64_t seed,
                                     const std::string& name, const Vocab& vocab) {
  std::vector<GeneratedTensor> generated;
  const LlamaModel headers = declare_generated(config, types, seed, false, generated);
  std::unordered_map<const Tensor*, UniformWeights> contents;
  for (const GeneratedTensor& g : generated) contents.emplace(g.tensor, g.contents);
  return headers.gguf_writer(name, vocab, [&contents](GgufWriter& w, const Tensor& t) {
    // The source outlives `headers`: it keeps what it needs by value.
    const UniformWeights weights = contents.at(&t);
    const DType type = t.type;
    const int64_t ne0 = t.ne[0], rows = t.nrows();
    w.add_tensor(t.name, t, [weights, type, ne0, rows](const GgufWriter::ByteSink& sink) {
      weights.generate(type, ne0, rows, sink);
    });
  });
}

GgufWriter LlamaModel::gguf_writer(const std::string& name, const Vocab& vocab,
                                   const std::function<void(GgufWriter&, const Tensor&)>& add) const {
  const LlamaConfig& c = config_;
  if (vocab.size() != c.n_vocab) {
    throw Error("llama: the vocabulary has " + std::to_string(vocab.size()) + " tokens, the model n_vocab " +
                std::to_string(c.n_vocab));
  }
  GgufWriter w;
  const std::string arch(architecture_name(c.arch));
  const std::string prefix = arch + ".";
  w.set(gguf_keys::kArchitecture, arch);
  w.set(gguf_keys::kName, name);
  w.set(gguf_keys::kFileType, file_type(*this));
  if (is_quantized(weight_type())) w.set(gguf_keys::kQuantizationVersion, uint32_t(2));
  w.set(prefix + gguf_keys::kVocabSize, uint32_t(c.n_vocab));
  w.set(prefix + gguf_keys::kContextLength, uint32_t(c.n_ctx_train));
  w.set(prefix + gguf_keys::kEmbeddingLength, uint32_t(c.n_embd));
  w.set(prefix + gguf_keys::kBlockCount, uint32_t(c.n_layer));
  w.set(prefix + gguf_keys::kFeedForwardLength, uint32_t(c.n_ff));
  w.set(prefix + gguf_keys::kRopeDimensionCount, uint32_t(c.head_dim()));
  w.set(prefix + gguf_keys::kHeadCount, uint32_t(c.n_head));
  w.set(prefix + gguf_keys::kHeadCountKv, uint32_t(c.n_head_kv));
  w.set(prefix + gguf_keys::kLayerNormRmsEpsilon, c.rms_eps);
  w.set(prefix + gguf_keys::kRopeFreqBase, c.rope_base);
  if (c.rope_freq_scale != 1.0f) {
    w.set(prefix + gguf_keys::kRopeScalingType, "linear");
    w.set(prefix + gguf_keys::kRopeScalingFactor, 1.0f / c.rope_freq_scale);
  }
  vocab.write_to(w);

  // llama.cpp's order: RoPE factors, embedding, the blocks, the final norm and head.
  if (rope_freqs()) add(w, *rope_freqs());
  add(w, *token_embd_);
  for (const BlockWeights& l : layers_) {
    for (const Tensor* t : l.tensors()) {
      if (t) add(w, *t);
    }
  }
  add(w, *output_norm_);
  if (!tied_output()) add(w, *output_);
  return w;
}

}  // namespace tg::model
