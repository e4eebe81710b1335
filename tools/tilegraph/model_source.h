#pragma once
// The model a command runs (`run`, `perplexity`): a GGUF file, or the embedded default (the small
// preset with generated f16 weights), with its vocabulary when it has one this build reads. The
// configuration and vocabulary come first, so that a command can check its flags against them
// before the weights are generated or bound.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tilegraph/model/gguf.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/vocab.h"

namespace tg::cli {

struct ModelSource {
  std::optional<model::GgufFile> file;  // stays mapped while the model's tensors point into it
  model::LlamaConfig config;
  std::optional<model::Vocab> vocab;
  std::string no_vocab;     // why `vocab` is empty
  std::string description;  // the path, or what the embedded default is

  // `path` empty: the embedded default. `map`: use the file in place, else read it into memory.
  static ModelSource open(const std::optional<std::string>& path, bool map);
  model::LlamaModel load() const;
  // The names of the matrices' types, the nominal one first.
  static std::vector<std::string> type_names(const model::LlamaModel& llama);
  // "f16 weights", or for a mix "q4_K and q6_K weights".
  static std::string weights_description(const model::LlamaModel& llama);
};

// The bytes of the regular file at `path`, or of standard input when `path` is "-", less one final
// newline (as llama.cpp's -f: editors end files with one); errors name `option`. A directory, a
// FIFO or a device is refused before it is read, and more than kMaxTextFileBytes (64 MiB; the
// wikitext-2 test text that perplexity is usually measured on is 1.3 MB) is refused as soon as the
// limit is passed.
inline constexpr uint64_t kMaxTextFileBytes = uint64_t(64) << 20;
std::string read_text_file(const std::string& option, const std::string& path);

}  // namespace tg::cli
