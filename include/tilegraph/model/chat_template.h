#pragma once
// Turning a chat message into the prompt an instruct model was trained on. GGUF files carry
// their template as Jinja (tokenizer.chat_template); like llama.cpp, this recognises the common
// families by their markers and writes them out in code rather than running Jinja.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/model/gguf.h"
#include "tilegraph/model/vocab.h"

namespace tg::model {

enum class ChatTemplate {
  kChatml,  // <|im_start|>role\n...<|im_end|>\n (Qwen, many fine-tunes)
  kLlama3,  // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
  kLlama2,  // [INST] <<SYS>>\n...\n<</SYS>>\n\n... [/INST]
};

std::string_view chat_template_name(ChatTemplate t);  // "chatml", "llama3", "llama2"
// The template named `name`, if there is one.
std::optional<ChatTemplate> chat_template_from_name(std::string_view name);
// The family of a Jinja template, by its markers; nothing for one this code does not write.
std::optional<ChatTemplate> detect_chat_template(std::string_view jinja);
// The file's tokenizer.chat_template, detected; nothing when it has none or an unknown one.
// Throws tg::Error when the key is not a string.
std::optional<ChatTemplate> chat_template_of(const GgufFile& file);

// One turn: an optional system message and the user's, ending where the assistant's reply
// starts. The beginning-of-sequence token is left to the tokenizer (llama 2 and 3 add it).
std::string format_chat(ChatTemplate t, std::string_view user, std::string_view system = {});
// The same turn as parts for Vocab::encode: the template's markup may hold control tokens
// (<|im_start|>, <|eot_id|>), the messages are plain text, as in llama.cpp's chat path, so a
// message cannot end its turn or start another. The parts view `user`, `system` and constants.
std::vector<TextPart> chat_parts(ChatTemplate t, std::string_view user, std::string_view system = {});

}  // namespace tg::model
