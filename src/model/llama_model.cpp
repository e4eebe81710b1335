#include "tilegraph/model/llama_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <span>
#include <string>

#include "printable.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/random_weights.h"

namespace tg::model {

namespace {

[[noreturn]] void fail(const std::string& why) { throw Error("llama: " + why); }

std::string layer_name(int64_t layer, const char* tensor, const char* part = "weight") {
  return "blk." + std::to_string(layer) + "." + tensor + "." + part;
}

// Matrices may be any weight type; norm gains are applied with MUL, which needs a float type;
// ROPE takes its frequency factors in f32 only, and the projections' biases are f32 as llama.cpp
// writes them.
enum class Role { kMatrix, kNorm, kFactors, kBias };

bool type_allowed(Role role, DType type) {
  switch (role) {
    case Role::kMatrix: return type != DType::I32;
    case Role::kNorm: return dtype_traits(type).is_float;
    case Role::kFactors:
    case Role::kBias: return type == DType::F32;
  }
  return false;
}

const char* allowed_types(Role role) {
  switch (role) {
    case Role::kMatrix: return "matrices must be f32, f16, bf16 or a quantized type";
    case Role::kNorm: return "norm weights must be f32, f16 or bf16";
    case Role::kFactors: return "RoPE frequency factors must be f32";
    case Role::kBias: return "biases must be f32";
  }
  return "";
}

}  // namespace

LlamaModel::LlamaModel() = default;
LlamaModel::LlamaModel(LlamaModel&&) noexcept = default;
LlamaModel& LlamaModel::operator=(LlamaModel&&) noexcept = default;
LlamaModel::~LlamaModel() = default;

LlamaModel LlamaModel::from_gguf(const GgufFile& file) {
  LlamaModel m;
  m.config_ = llama_config_from_gguf(file);
  const LlamaConfig& c = m.config_;
  m.ctx_ = std::make_unique<Context>(ContextOptions{.no_alloc = true});
  std::set<std::string> used;

  auto tensor = [&](const std::string& name, std::initializer_list<int64_t> expected, Role role) -> Tensor* {
    const GgufTensorInfo* info = file.find_tensor(name);
    if (!info) fail(file.source() + ": missing tensor '" + name + "'");
    std::array<int64_t, kMaxDims> want = {1, 1, 1, 1};
    std::copy(expected.begin(), expected.end(), want.begin());
    if (info->ne != want) {
      const std::span<const int64_t> actual = std::span<const int64_t>(info->ne).first(size_t(info->n_dims));
      fail("tensor '" + name + "' has shape " + shape_string(actual) + ", expected " +
           shape_string(std::span<const int64_t>(expected.begin(), expected.size())));
    }
    if (!type_allowed(role, info->type)) {
      fail("tensor '" + name + "' is " + std::string(dtype_name(info->type)) + "; " + allowed_types(role));
    }
    Tensor* t = m.ctx_->new_tensor(info->type, std::span(info->ne));
    // The mapping is read-only; backends only read weights.
    t->data = const_cast<void*>(file.tensor_data(*info));
    t->set_name(name);
    t->flags |= kFlagParam;
    used.insert(name);
    return t;
  };

  const int64_t kv_dim = c.head_dim() * c.n_head_kv;
  m.token_embd_ = tensor("token_embd.weight", {c.n_embd, c.n_vocab}, Role::kMatrix);
  Tensor* rope_freqs =
      file.find_tensor("rope_freqs.weight") ? tensor("rope_freqs.weight", {c.head_dim() / 2}, Role::kFactors) : nullptr;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    BlockWeights w;
    w.attn_norm = tensor(layer_name(l, "attn_norm"), {c.n_embd}, Role::kNorm);
    w.wq = tensor(layer_name(l, "attn_q"), {c.n_embd, c.n_embd}, Role::kMatrix);
    w.wk = tensor(layer_name(l, "attn_k"), {c.n_embd, kv_dim}, Role::kMatrix);
    w.wv = tensor(layer_name(l, "attn_v"), {c.n_embd, kv_dim}, Role::kMatrix);
    if (c.arch == Architecture::kQwen2) {
      w.bq = tensor(layer_name(l, "attn_q", "bias"), {c.n_embd}, Role::kBias);
      w.bk = tensor(layer_name(l, "attn_k", "bias"), {kv_dim}, Role::kBias);
      w.bv = tensor(layer_name(l, "attn_v", "bias"), {kv_dim}, Role::kBias);
    }
    w.wo = tensor(layer_name(l, "attn_output"), {c.n_embd, c.n_embd}, Role::kMatrix);
    w.ffn_norm = tensor(layer_name(l, "ffn_norm"), {c.n_embd}, Role::kNorm);
    w.w_gate = tensor(layer_name(l, "ffn_gate"), {c.n_embd, c.n_ff}, Role::kMatrix);
    w.w_up = tensor(layer_name(l, "ffn_up"), {c.n_embd, c.n_ff}, Role::kMatrix);
    w.w_down = tensor(layer_name(l, "ffn_down"), {c.n_ff, c.n_embd}, Role::kMatrix);
    w.rope_freqs = rope_freqs;
    m.layers_.push_back(w);
  }
  m.output_norm_ = tensor("output_norm.weight", {c.n_embd}, Role::kNorm);
  m.output_ =
      file.find_tensor("output.weight") ? tensor("output.weight", {c.n_embd, c.n_vocab}, Role::kMatrix) : m.token_embd_;
  // Anything else (biases llama has not, per-layer norms of other architectures, ...) belongs to
  // a variant this builder does not implement; ignoring it would compute a different model.
  for (const GgufTensorInfo& info : file.tensors()) {
    if (!used.count(info.name)) {
      fail(file.source() + ": unexpected tensor " + printable(info.name, '\'') + " (not part of the " +
           std::string(architecture_name(c.arch)) + " layout this builder runs)");
    }
  }
  return m;
}

LlamaModel LlamaModel::generate(const LlamaConfig& config, const WeightTypes& types, uint64_t seed) {
  std::vector<GeneratedTensor> generated;
  LlamaModel m = declare_generated(config, types, seed, true, generated);
  for (const GeneratedTensor& g : generated) g.contents.fill(*g.tensor);
  return m;
}

LlamaModel LlamaModel::declare_generated(const LlamaConfig& config, const WeightTypes& types, uint64_t seed,
                                         bool allocate, std::vector<GeneratedTensor>& generated) {
  config.validate();
  // Every matrix row is n_embd long except ffn_down's (n_ff); name the first that cannot be whole
  // blocks, as a user choosing a type for a model's sizes needs to know which one.
  struct Row {
    const char* tensor;
    DType type;
    const char* size;
    int64_t ne0;
  };
  for (const Row& row : {Row{"token_embd.weight", types.matrices, "n_embd", config.n_embd},
                         Row{"blk.0.attn_v.weight", types.attn_v, "n_embd", config.n_embd},
                         Row{"blk.0.ffn_down.weight", types.ffn_down, "n_ff", config.n_ff},
                         Row{"output.weight", types.output, "n_embd", config.n_embd}}) {
    if (row.type == DType::I32) fail("weights cannot be i32");
    const int64_t block_size = int64_t(dtype_traits(row.type).block_size);
    if (row.ne0 % block_size == 0) continue;
    fail(std::string(dtype_name(row.type)) + " weights need rows of whole " + std::to_string(block_size) +
         "-element blocks: tensor '" + row.tensor + "' has ne[0] = " + row.size + " = " + std::to_string(row.ne0));
  }
  LlamaModel m;
  m.config_ = config;
  m.ctx_ = std::make_unique<Context>(ContextOptions{.no_alloc = !allocate});
  Context& ctx = *m.ctx_;
  BlockConfig block = config.block_config(1, types.matrices, DType::F16);
  block.wv_type = types.attn_v;
  block.w_down_type = types.ffn_down;

  auto tensor = [&](DType type, std::initializer_list<int64_t> ne, const std::string& name, UniformWeights contents) {
    Tensor* t = ctx.new_tensor(type, ne);
    t->set_name(name);
    t->flags |= kFlagParam;
    generated.push_back({t, contents});
    return t;
  };
  auto named = [](Tensor* t, const std::string& name) { t->set_name(name); };
  m.token_embd_ = tensor(types.matrices, {config.n_embd, config.n_vocab}, "token_embd.weight", {seed, 1.0f});
  for (int64_t l = 0; l < config.n_layer; ++l) {
    // declare_block_weights draws one seed per tensor from its seed: 100 apart keeps layers distinct.
    BlockWeights w = declare_block_weights(ctx, block, seed + 100 * uint64_t(l + 1), generated);
    named(w.attn_norm, layer_name(l, "attn_norm"));
    named(w.wq, layer_name(l, "attn_q"));
    named(w.wk, layer_name(l, "attn_k"));
    named(w.wv, layer_name(l, "attn_v"));
    if (w.bq) {
      named(w.bq, layer_name(l, "attn_q", "bias"));
      named(w.bk, layer_name(l, "attn_k", "bias"));
      named(w.bv, layer_name(l, "attn_v", "bias"));
    }
    named(w.wo, layer_name(l, "attn_output"));
    named(w.ffn_norm, layer_name(l, "ffn_norm"));
    named(w.w_gate, layer_name(l, "ffn_gate"));
    named(w.w_up, layer_name(l, "ffn_up"));
    named(w.w_down, layer_name(l, "ffn_down"));
    m.layers_.push_back(w);
  }
  m.output_norm_ = tensor(DType::F32, {config.n_embd}, "output_norm.weight", {seed + 1, 0.1f, 1.0f});
  m.output_ = tensor(types.output, {config.n_embd, config.n_vocab}, "output.weight",
                     {seed + 2, 1.0f / std::sqrt(float(config.n_embd))});
  return m;
}

std::vector<DType> LlamaModel::matrix_types() const {
  std::vector<DType> types = {weight_type()};
  const auto note = [&types](const Tensor* t) {
    if (std::ranges::find(types, t->type) == types.end()) types.push_back(t->type);
  };
  note(token_embd_);
  for (const BlockWeights& w : layers_) {
    for (const Tensor* t : {w.wq, w.wk, w.wv, w.wo, w.w_gate, w.w_up, w.w_down}) note(t);
  }
  note(output_);
  return types;
}

size_t LlamaModel::decode_weight_bytes() const {
  size_t bytes = output_norm_->nbytes() + output_->nbytes() + token_embd_->row_bytes();
  for (const BlockWeights& w : layers_) {
    for (const Tensor* t : w.tensors()) {
      if (t) bytes += t->nbytes();
    }
  }
  return bytes;
}

size_t LlamaModel::prepared_bytes() const {
  size_t bytes = 0;
  for (const std::unique_ptr<PreparedWeight>& p : prepared_) bytes += p->bytes();
  return bytes;
}

std::vector<LlamaModel::Conversion> LlamaModel::place_weights(Backend& backend, bool prepare) {
  std::vector<Tensor*> weights = {token_embd_, output_norm_};
  if (output_ != token_embd_) weights.push_back(output_);
  if (rope_freqs()) weights.push_back(rope_freqs());
  for (const BlockWeights& w : layers_) {
    for (Tensor* t : w.tensors()) {
      if (t) weights.push_back(t);
    }
  }
  std::vector<Conversion> conversions;
  for (const Tensor* t : weights) {
    const DType to = backend.weight_type(t->type);
    if (to == t->type) continue;
    auto same = [&](const Conversion& c) { return c.from == t->type && c.to == to; };
    auto it = std::ranges::find_if(conversions, same);
    if (it == conversions.end()) it = conversions.insert(conversions.end(), Conversion{t->type, to});
    ++it->tensors;
  }
  // Every weight but an embedding that only GET_ROWS reads (as stored).
  const auto prepare_matrices = [&] {
    if (!prepare) return;
    for (Tensor* t : weights) {
      if (t == token_embd_ && !tied_output()) continue;
      if (std::unique_ptr<PreparedWeight> p = backend.prepare_weight(*t)) prepared_.push_back(std::move(p));
    }
  };
  if (backend.host_buffers() && conversions.empty()) {
    prepare_matrices();
    return conversions;
  }

  const auto aligned = [](size_t bytes) {
    return (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  };
  std::vector<size_t> offsets;
  size_t total = 0;
  for (const Tensor* t : weights) {
    offsets.push_back(total);
    total += aligned(row_size(backend.weight_type(t->type), t->ne[0]) * size_t(t->nrows()));
  }
  std::unique_ptr<Buffer> buffer = backend.alloc_buffer(total);
  if (!buffer || buffer->size() < total) {
    throw Error(std::string(backend.name()) + ": no buffer of " + std::to_string(total) + " bytes for the weights");
  }
  std::vector<float> row;
  std::vector<uint8_t> converted;
  for (size_t i = 0; i < weights.size(); ++i) {
    Tensor* t = weights[i];
    if (!t->is_contiguous()) fail("weight '" + std::string(t->name) + "' is not contiguous");
    const DType to = backend.weight_type(t->type);
    if (to == t->type) {
      buffer->set(offsets[i], t->data, t->nbytes());
    } else {
      // Through f32 a row at a time, as llama.cpp's quantize tool requantizes.
      const size_t from_row = t->row_bytes(), to_row = row_size(to, t->ne[0]);
      row.resize(size_t(t->ne[0]));
      converted.resize(to_row);
      for (int64_t r = 0; r < t->nrows(); ++r) {
        row_to_f32(t->type, static_cast<const char*>(t->data) + size_t(r) * from_row, row.data(), t->ne[0]);
        row_from_f32(to, row.data(), converted.data(), t->ne[0]);
        buffer->set(offsets[i] + size_t(r) * to_row, converted.data(), to_row);
      }
      t->type = to;
      t->nb[0] = dtype_traits(to).type_size;
      t->nb[1] = to_row;
      for (int d = 2; d < kMaxDims; ++d) t->nb[d] = t->nb[d - 1] * size_t(t->ne[d - 1]);
    }
    t->data = static_cast<char*>(buffer->base()) + offsets[i];
  }
  weights_buffer_ = std::move(buffer);
  prepare_matrices();
  return conversions;
}

}  // namespace tg::model
