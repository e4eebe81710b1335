#pragma once
// The in-memory map from a request (template path as given, macros, kernel type, include
// dirs) to its loaded kernel: the JIT's memory hit, which has to cost well under a
// microsecond (torch_catlass's JitCompiler pays a SHA-256 per call). Hence: no lock on reads — an insert-only
// open-addressing table whose slots are published with release stores, grown by copying into
// a new table that replaces the old one atomically (old tables stay alive, so a reader still in
// one is safe; it can only miss an entry added since, and then takes the slow path) — and a
// hash that reads each string a word at a time without calls.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/jit/kernel.h"
#include "tilegraph/jit/macros.h"

namespace tg::jit {

struct RequestView {
  std::string_view template_path;
  const MacroMap* macros;
  KernelType type;
  const std::vector<std::string>* include_dirs;
};

class RequestTable {
 public:
  struct Hit {
    EntryFn entry;
    const std::string* id;  // owned by the caller of insert, who outlives the table
  };

  RequestTable();
  ~RequestTable();
  RequestTable(const RequestTable&) = delete;
  RequestTable& operator=(const RequestTable&) = delete;

  // Lock-free; nullptr on a miss.
  const Hit* find(const RequestView& request) const;
  // Adds the request unless it is already there.
  void insert(const RequestView& request, Hit hit);

 private:
  struct Entry;
  struct Table;

  std::atomic<const Table*> table_;
  std::mutex write_mutex_;
  size_t count_ = 0;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<std::unique_ptr<Table>> tables_;  // every generation, for readers still in one
};

}  // namespace tg::jit
