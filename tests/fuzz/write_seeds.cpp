// Writes the fuzzers' starting corpora: small models with each kind of vocabulary for fuzz_gguf,
// and a few texts for fuzz_tokenizers. Usage: tg_fuzz_seeds GGUF_DIR TEXT_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/vocab.h"

namespace {

void write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string small_model(const tg::model::Vocab& vocab, tg::DType type) {
  tg::model::LlamaConfig c;
  c.n_vocab = vocab.size();
  c.n_ctx_train = 64;
  c.n_embd = 32;
  c.n_layer = 1;
  c.n_ff = 64;
  c.n_head = 4;
  c.n_head_kv = 2;
  const std::vector<uint8_t> bytes =
      tg::model::LlamaModel::generate_gguf(c, tg::model::WeightTypes::all(type), 7, "seed", vocab).to_bytes();
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s GGUF_DIR TEXT_DIR\n", argv[0]);
    return 2;
  }
  using tg::model::Vocab;
  const std::filesystem::path gguf = argv[1], text = argv[2];
  std::filesystem::create_directories(gguf);
  std::filesystem::create_directories(text);
  write(gguf / "spm_q8_0.gguf", small_model(Vocab::minimal_sentencepiece(300), tg::DType::Q8_0));
  write(gguf / "llama3_f16.gguf", small_model(Vocab::minimal_byte_level(300), tg::DType::F16));
  write(gguf / "qwen2_f32.gguf", small_model(Vocab::minimal_qwen2(320), tg::DType::F32));
  // The first byte picks the vocabulary and whether control tokens are parsed (fuzz_tokenizers).
  const std::string texts[] = {"Hello world, the 42 quick foxes!", "<s>[INST] hi </s><|im_start|>user\n<|im_end|>",
                               "  leading spaces\tand\ttabs\n\nnew lines",
                               "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xff\xfe bad"};
  for (int vocab = 0; vocab < 6; ++vocab) {
    for (size_t i = 0; i < std::size(texts); ++i) {
      write(text / (std::to_string(vocab) + "_" + std::to_string(i) + ".txt"), std::string(1, char(vocab)) + texts[i]);
    }
  }
  return 0;
}
