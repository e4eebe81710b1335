#pragma once
// Text from a model file, made safe to put in an error message.
#include <string>
#include <string_view>

namespace tg::model {

// `text` between `quote`s: at most 80 bytes of it ("..." marks the cut), with control bytes,
// non-ASCII bytes and the quote itself as \xNN, so a hostile file cannot garble a terminal or
// flood the log.
std::string printable(std::string_view text, char quote);

}  // namespace tg::model
