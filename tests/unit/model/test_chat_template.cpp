// Chat templates (chat_template.h): detection from the file's Jinja, and the exact text of each
// family's turn.
#include <gtest/gtest.h>

#include <string>

#include "common/expect_error.h"
#include "tilegraph/model/chat_template.h"
#include "tilegraph/model/gguf.h"

namespace tg::model {
namespace {

using test::expect_error;

TEST(ChatTemplate, WritesEachFamilysTurn) {
  EXPECT_EQ(format_chat(ChatTemplate::kChatml, "Hi?", "Be brief."),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(format_chat(ChatTemplate::kChatml, "Hi?"), "<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(
      format_chat(ChatTemplate::kLlama3, "Hi?", "Be brief."),
      "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
      "<|start_header_id|>user<|end_header_id|>\n\nHi?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(
      format_chat(ChatTemplate::kLlama3, "Hi?"),
      "<|start_header_id|>user<|end_header_id|>\n\nHi?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(format_chat(ChatTemplate::kLlama2, "Hi?", "Be brief."),
            "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi? [/INST]");
  EXPECT_EQ(format_chat(ChatTemplate::kLlama2, "Hi?"), "[INST] Hi? [/INST]");
}

TEST(ChatTemplate, DetectsTheFamilyByItsMarkers) {
  // Abridged from the templates Qwen2.5, llama 3.1 and llama 2 chat files carry.
  EXPECT_EQ(
      detect_chat_template("{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content "
                           "+ '<|im_end|>' + '\\n' }}{%- endfor %}"),
      ChatTemplate::kChatml);
  EXPECT_EQ(detect_chat_template("{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ "
                                 "message['content'] | trim + '<|eot_id|>' }}"),
            ChatTemplate::kLlama3);
  EXPECT_EQ(detect_chat_template("{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"), ChatTemplate::kLlama2);
  EXPECT_EQ(detect_chat_template("{{ '<start_of_turn>user\\n' + content }}"), std::nullopt) << "gemma's is not written";
  EXPECT_EQ(detect_chat_template(""), std::nullopt);
  for (ChatTemplate t : {ChatTemplate::kChatml, ChatTemplate::kLlama3, ChatTemplate::kLlama2}) {
    EXPECT_EQ(chat_template_from_name(chat_template_name(t)), t);
  }
  EXPECT_EQ(chat_template_from_name("gemma"), std::nullopt);
}

TEST(ChatTemplate, ReadsTheFilesKey) {
  auto file = [](const std::function<void(GgufWriter&)>& edit) {
    GgufWriter w;
    w.set("general.architecture", "llama");
    edit(w);
    return GgufFile::parse(w.to_bytes(), "chat.gguf");
  };
  EXPECT_EQ(chat_template_of(file([](GgufWriter&) {})), std::nullopt);
  EXPECT_EQ(chat_template_of(file([](GgufWriter& w) { w.set("tokenizer.chat_template", "<|im_start|>"); })),
            ChatTemplate::kChatml);
  expect_error([&] { chat_template_of(file([](GgufWriter& w) { w.set("tokenizer.chat_template", uint32_t(3)); })); },
               "chat.gguf: tokenizer.chat_template must be a string, got u32 3");
}

}  // namespace
}  // namespace tg::model
