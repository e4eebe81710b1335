#pragma once
// The bytes of the constants a module refers to with #tx8be.external<key, ...> instead of holding
// them: large weights stay where the model keeps them (a mapped GGUF file, a model context)
// rather than being copied into the IR. The importer fills a ConstantData; the interpreter reads
// it. Each entry borrows its bytes.
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "tilegraph/compiler/host_tensor.h"

namespace tg::compiler {

// 64-bit FNV-1a of `bytes`: the fingerprint #tx8be.external records, so that data stored under
// the same key but different from what the module was built with is refused.
uint64_t fingerprint(std::span<const std::byte> bytes);

class ConstantData {
 public:
  // Registers `tensor` under `key` (replacing an entry of that key).
  void add(const std::string& key, HostTensor tensor);
  // The entry under `key`, checked against the size and fingerprint the module recorded;
  // throws tg::Error naming the key when it is missing or different.
  const HostTensor& get(const std::string& key, uint64_t bytes, uint64_t expected_fingerprint) const;
  bool contains(const std::string& key) const { return entries_.count(key) != 0; }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    HostTensor tensor;
    uint64_t fingerprint;
  };
  std::map<std::string, Entry> entries_;
};

}  // namespace tg::compiler
