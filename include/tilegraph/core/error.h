#pragma once
// The one exception type tilegraph throws. Messages name the operation and the offending values,
// e.g. "mul_mat: a.ne[0]=64 != b.ne[0]=32 (a=[64,32,1,1] b=[32,8,1,1])".
#include <stdexcept>
#include <string>

namespace tg {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tg
