#pragma once
// The chip's memories: each tile's SPM and the shared DDR. Both are byte-addressed, check every
// access against their size, and remember which bytes were written, so that reading memory
// nothing wrote is an error instead of a silently wrong answer. The DDR is allocated in pages as
// it is written: its 64 GB are an address space, not an allocation.
//
// Host access (write/read) is how a test or a runtime puts inputs in and takes results out; it
// takes no simulated time. Instructions use the checked accessors, which name the instruction in
// their errors.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tg::sim {

// The address an optional operand has when it is absent.
inline constexpr uint64_t kNoAddress = ~uint64_t(0);

// One SPM range an instruction read or wrote, as the chip's hazard check records it.
struct SpmAccess {
  int tile = 0;
  uint64_t addr = 0, bytes = 0;
  bool write = false;
};

class Spm {
 public:
  Spm(int tile, uint64_t bytes);

  uint64_t size() const { return size_; }
  int tile() const { return tile_; }
  // One past the highest byte ever written (by the host or an instruction).
  uint64_t high_water() const { return high_water_; }

  void write(uint64_t addr, const void* data, uint64_t bytes);
  void read(uint64_t addr, void* data, uint64_t bytes) const;  // throws for bytes never written
  bool is_initialised(uint64_t addr, uint64_t bytes) const;

  // Checked access for instruction `instr`: bounds, and for reads that every byte was written.
  const uint8_t* read_span(std::string_view instr, uint64_t addr, uint64_t bytes) const;
  uint8_t* write_span(std::string_view instr, uint64_t addr, uint64_t bytes);
  // Bounds only (an operand that is both read and written, checked once).
  void check_range(std::string_view instr, uint64_t addr, uint64_t bytes) const;
  // Where read_span and write_span record the ranges instructions touch (null: nowhere).
  void set_access_log(std::vector<SpmAccess>* log) { log_ = log; }

 private:
  void mark_written(uint64_t addr, uint64_t bytes);
  // The first byte in [addr, addr + bytes) never written, or addr + bytes if none.
  uint64_t first_unwritten(uint64_t addr, uint64_t bytes) const;

  int tile_;
  uint64_t size_;
  uint64_t high_water_ = 0;
  std::vector<uint8_t> data_;
  std::vector<uint64_t> written_;  // one bit per byte
  std::vector<SpmAccess>* log_ = nullptr;
};

class Ddr {
 public:
  explicit Ddr(uint64_t bytes);
  ~Ddr();

  uint64_t size() const { return size_; }
  uint64_t allocated_bytes() const;  // pages backing what has been written

  void write(uint64_t addr, const void* data, uint64_t bytes);
  void read(uint64_t addr, void* data, uint64_t bytes) const;  // throws for bytes never written

  // Checked copies for instruction `instr`.
  void load(std::string_view instr, uint64_t addr, void* dst, uint64_t bytes) const;
  void store(std::string_view instr, uint64_t addr, const void* src, uint64_t bytes);

 private:
  struct Page;
  void check_range(std::string_view who, uint64_t addr, uint64_t bytes) const;
  void copy_out(std::string_view who, uint64_t addr, void* dst, uint64_t bytes) const;
  void copy_in(uint64_t addr, const void* src, uint64_t bytes);

  uint64_t size_;
  std::unordered_map<uint64_t, std::unique_ptr<Page>> pages_;
};

}  // namespace tg::sim
