#include "tilegraph/model/chat_template.h"

#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf_keys.h"

namespace tg::model {

std::string_view chat_template_name(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::kChatml: return "chatml";
    case ChatTemplate::kLlama3: return "llama3";
    case ChatTemplate::kLlama2: return "llama2";
  }
  return "unknown";
}

std::optional<ChatTemplate> chat_template_from_name(std::string_view name) {
  for (ChatTemplate t : {ChatTemplate::kChatml, ChatTemplate::kLlama3, ChatTemplate::kLlama2}) {
    if (name == chat_template_name(t)) return t;
  }
  return std::nullopt;
}

std::optional<ChatTemplate> detect_chat_template(std::string_view jinja) {
  const auto has = [&](std::string_view marker) { return jinja.find(marker) != std::string_view::npos; };
  if (has("<|im_start|>")) return ChatTemplate::kChatml;
  if (has("<|start_header_id|>")) return ChatTemplate::kLlama3;
  if (has("[INST]")) return ChatTemplate::kLlama2;
  return std::nullopt;
}

std::optional<ChatTemplate> chat_template_of(const GgufFile& file) {
  const GgufValue* value = file.find(gguf_keys::kChatTemplate);
  if (!value) return std::nullopt;
  if (value->type() != GgufType::STRING) {
    throw Error(file.source() + ": tokenizer.chat_template must be a string, got " + value->describe());
  }
  return detect_chat_template(value->get<std::string>());
}

std::vector<TextPart> chat_parts(ChatTemplate t, std::string_view user, std::string_view system) {
  std::vector<TextPart> parts;
  const auto markup = [&](std::string_view text) { parts.push_back({text, true}); };
  const auto message = [&](std::string_view text) { parts.push_back({text, false}); };
  if (t == ChatTemplate::kLlama2) {
    markup("[INST] ");
    if (!system.empty()) {
      markup("<<SYS>>\n");
      message(system);
      markup("\n<</SYS>>\n\n");
    }
    message(user);
    markup(" [/INST]");
    return parts;
  }
  // ChatML and llama 3 wrap each turn's role and text in their own markers.
  struct Markers {
    std::string_view before_role, after_role, after_text;
  };
  const Markers m = t == ChatTemplate::kChatml ? Markers{"<|im_start|>", "\n", "<|im_end|>\n"}
                                               : Markers{"<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>"};
  const auto turn = [&](std::string_view role, std::string_view text) {
    markup(m.before_role);
    markup(role);
    markup(m.after_role);
    message(text);
    markup(m.after_text);
  };
  if (!system.empty()) turn("system", system);
  turn("user", user);
  markup(m.before_role);
  markup("assistant");
  markup(m.after_role);
  return parts;
}

std::string format_chat(ChatTemplate t, std::string_view user, std::string_view system) {
  std::string out;
  for (const TextPart& part : chat_parts(t, user, system)) out += part.text;
  return out;
}

}  // namespace tg::model
