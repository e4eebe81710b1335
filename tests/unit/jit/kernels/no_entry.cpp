// Test kernel template that compiles but defines no `run`.
#include <cstdint>

extern "C" uint32_t not_the_entry_point(uint32_t x) { return x + 1; }
