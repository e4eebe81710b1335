#pragma once
// expect_error(fn, part): fn must throw tg::Error with `part` somewhere in its message.
#include <gtest/gtest.h>

#include <string>

#include "tilegraph/core/error.h"

namespace tg::test {

template <class Fn>
void expect_error(Fn&& fn, const std::string& part) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected \"" << part << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "message: " << e.what() << "\nexpected: " << part;
  }
}

}  // namespace tg::test
