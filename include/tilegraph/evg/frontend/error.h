#pragma once
// Errors of the string front end: a tg::Error whose message reads
//   evg: 1:17: unknown name 'Cx' (declared: C, bias, alpha)
// with the line and column (1-based) of the offending token and, where there is one, its name.
#include <string>

#include "tilegraph/core/error.h"

namespace tg::evg::frontend {

struct SourcePosition {
  int line = 1;
  int column = 1;
};

class FrontEndError : public Error {
 public:
  FrontEndError(SourcePosition position, std::string name, const std::string& message)
      : Error("evg: " + std::to_string(position.line) + ":" + std::to_string(position.column) + ": " + message),
        position_(position),
        name_(std::move(name)) {}

  SourcePosition position() const { return position_; }
  // The name or token the error is about ("" if none).
  const std::string& name() const { return name_; }

 private:
  SourcePosition position_;
  std::string name_;
};

}  // namespace tg::evg::frontend
