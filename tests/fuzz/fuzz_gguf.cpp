// libFuzzer target: the GGUF reader and everything a command does with a model file before it
// runs it (the configuration, the vocabulary, the model's tensors). Any input must load or fail
// with tg::Error; libFuzzer reports a crash, an AddressSanitizer finding, another exception
// (uncaught: an abort) or an allocation past -rss_limit_mb.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/vocab.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tg::model;
  try {
    const GgufFile file = GgufFile::parse(std::vector<uint8_t>(data, data + size), "fuzz.gguf");
    if (const std::optional<Vocab> vocab = Vocab::from_gguf(file)) {
      vocab->decode(vocab->encode("Hello <s>world</s> \xff", true));
    }
    llama_config_from_gguf(file);
    LlamaModel::from_gguf(file);
  } catch (const tg::Error&) {
    // a clean refusal
  }
  return 0;
}
