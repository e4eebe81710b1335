#pragma once
// Counts heap allocations (global operator new, this test program replaces it) made while a
// CountAllocations object is alive, on any thread: to check that steady kernel runs allocate
// nothing.
#include <cstdint>

namespace tg::evg::test {

class CountAllocations {
 public:
  CountAllocations();
  ~CountAllocations();
  CountAllocations(const CountAllocations&) = delete;
  CountAllocations& operator=(const CountAllocations&) = delete;
  int64_t count() const;
};

}  // namespace tg::evg::test
