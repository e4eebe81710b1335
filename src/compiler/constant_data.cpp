#include "tilegraph/compiler/constant_data.h"

#include "tilegraph/core/error.h"

namespace tg::compiler {

uint64_t fingerprint(std::span<const std::byte> bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (std::byte b : bytes) {
    hash ^= uint64_t(b);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

void ConstantData::add(const std::string& key, HostTensor tensor) {
  const uint64_t print = fingerprint(tensor.bytes());
  entries_.insert_or_assign(key, Entry{std::move(tensor), print});
}

const HostTensor& ConstantData::get(const std::string& key, uint64_t bytes, uint64_t expected_fingerprint) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) throw Error("constant data: no data for '" + key + "'");
  const Entry& entry = it->second;
  if (entry.tensor.nbytes() != bytes || entry.fingerprint != expected_fingerprint) {
    throw Error("constant data: '" + key + "' holds other data than the module was built with (" +
                std::to_string(entry.tensor.nbytes()) + " bytes, fingerprint " + std::to_string(entry.fingerprint) +
                "; expected " + std::to_string(bytes) + " bytes, fingerprint " + std::to_string(expected_fingerprint) +
                ")");
  }
  return entry.tensor;
}

}  // namespace tg::compiler
