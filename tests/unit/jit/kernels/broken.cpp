// Test kernel template that does not compile: the tests look for the compiler's diagnostic.
#include <cstdint>

extern "C" void run(uint32_t block_num, void* stream, const void* params) {
  (void)stream;
  (void)params;
  this_identifier_is_not_declared_anywhere = block_num;
}
