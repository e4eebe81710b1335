// Test kernel template that takes minutes to compile and little memory: a constant expression
// that loops until GCC's limit on constexpr evaluation (-fconstexpr-ops-limit, 2^33 operations).
// For the tests that interrupt a compile.
#include <cstdint>

constexpr uint64_t spin() {
  uint64_t x = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    for (uint64_t j = 0; j < 200000; ++j) x += i ^ j;
  }
  return x;
}

constexpr uint64_t kSpun = spin();

extern "C" void run(uint32_t, void*, const void*) { static_cast<void>(kSpun); }
