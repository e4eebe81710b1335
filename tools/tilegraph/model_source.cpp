#include "model_source.h"

#include <unistd.h>

#include "tilegraph/core/error.h"
#include "tilegraph/core/input_file.h"

namespace tg::cli {

namespace {

constexpr const char* kDefaultPreset = "small";
constexpr DType kDefaultWeightType = DType::F16;
constexpr uint64_t kDefaultSeed = 42;

}  // namespace

ModelSource ModelSource::open(const std::optional<std::string>& path, bool map) {
  if (path && path->empty()) throw Error("--model: the path is empty (leave --model out to run the embedded default)");
  ModelSource m;
  if (!path) {
    m.config = model::llama_preset(kDefaultPreset);
    m.vocab = model::Vocab::minimal_sentencepiece(m.config.n_vocab);
    m.description = std::string("embedded default (") + kDefaultPreset + " preset, generated " +
                    std::string(dtype_name(kDefaultWeightType)) + " weights, seed " + std::to_string(kDefaultSeed) +
                    ")";
    return m;
  }
  m.file.emplace(model::GgufFile::open(*path, map ? model::GgufFile::Access::kMap : model::GgufFile::Access::kRead));
  m.config = model::llama_config_from_gguf(*m.file);
  std::string unsupported;
  m.vocab = model::Vocab::from_gguf(*m.file, &unsupported);
  if (!m.vocab) {
    m.no_vocab = unsupported.empty() ? "it has no tokenizer.ggml.tokens"
                                     : "its tokenizer.ggml.model " + unsupported + " is not supported";
  }
  m.description = *path;
  return m;
}

model::LlamaModel ModelSource::load() const {
  if (!file) return model::LlamaModel::generate(config, kDefaultWeightType, kDefaultSeed);
  return model::LlamaModel::from_gguf(*file);
}

std::vector<std::string> ModelSource::type_names(const model::LlamaModel& llama) {
  std::vector<std::string> names;
  for (DType type : llama.matrix_types()) names.emplace_back(dtype_name(type));
  return names;
}

std::string ModelSource::weights_description(const model::LlamaModel& llama) {
  const std::vector<std::string> names = type_names(llama);
  std::string text = names.front();
  for (size_t i = 1; i < names.size(); ++i) text += (i + 1 == names.size() ? " and " : ", ") + names[i];
  return text + " weights";
}

std::string read_text_file(const std::string& option, const std::string& path) {
  std::string text = path == "-" ? read_at_most(STDIN_FILENO, kMaxTextFileBytes, option, "standard input")
                                 : read_input_file(path, kMaxTextFileBytes, option);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace tg::cli
