#include "tilegraph/model/chat_template.h"

#include "tilegraph/core/error.h"

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
  const GgufValue* value = file.find("tokenizer.chat_template");
  if (!value) return std::nullopt;
  if (value->type() != GgufType::STRING) {
    throw Error(file.source() + ": tokenizer.chat_template must be a string, got " + value->describe());
  }
  return detect_chat_template(value->get<std::string>());
}

std::string format_chat(ChatTemplate t, std::string_view user, std::string_view system) {
  std::string out;
  switch (t) {
    case ChatTemplate::kChatml: {
      const auto turn = [&](std::string_view role, std::string_view text) {
        out.append("<|im_start|>").append(role).append("\n").append(text).append("<|im_end|>\n");
      };
      if (!system.empty()) turn("system", system);
      turn("user", user);
      out += "<|im_start|>assistant\n";
      return out;
    }
    case ChatTemplate::kLlama3: {
      const auto turn = [&](std::string_view role, std::string_view text) {
        out.append("<|start_header_id|>").append(role).append("<|end_header_id|>\n\n").append(text).append("<|eot_id|>");
      };
      if (!system.empty()) turn("system", system);
      turn("user", user);
      out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      return out;
    }
    case ChatTemplate::kLlama2:
      out = "[INST] ";
      if (!system.empty()) out.append("<<SYS>>\n").append(system).append("\n<</SYS>>\n\n");
      out.append(user).append(" [/INST]");
      return out;
  }
  return out;
}

}  // namespace tg::model
