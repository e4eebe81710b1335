#include "tilegraph/sim/memory.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <string>

#include "tilegraph/core/error.h"

namespace tg::sim {

namespace {

std::string hex(uint64_t x) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(x));
  return buf;
}

std::string range(uint64_t addr, uint64_t bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "[0x%llx, 0x%llx)", static_cast<unsigned long long>(addr),
                static_cast<unsigned long long>(addr + bytes));
  return buf;
}

// Sets bits [begin, end) of a bitmap.
void set_bits(uint64_t* bits, uint64_t begin, uint64_t end) {
  while (begin < end && begin % 64) {
    bits[begin / 64] |= uint64_t(1) << (begin % 64);
    ++begin;
  }
  for (; begin + 64 <= end; begin += 64) bits[begin / 64] = ~uint64_t(0);
  for (; begin < end; ++begin) bits[begin / 64] |= uint64_t(1) << (begin % 64);
}

// The first clear bit in [begin, end), or end.
uint64_t first_clear(const uint64_t* bits, uint64_t begin, uint64_t end) {
  while (begin < end && begin % 64) {
    if (!(bits[begin / 64] >> (begin % 64) & 1)) return begin;
    ++begin;
  }
  for (; begin + 64 <= end; begin += 64) {
    if (bits[begin / 64] != ~uint64_t(0)) return begin + uint64_t(std::countr_one(bits[begin / 64]));
  }
  for (; begin < end; ++begin) {
    if (!(bits[begin / 64] >> (begin % 64) & 1)) return begin;
  }
  return end;
}

}  // namespace

// ---- SPM ----

Spm::Spm(int tile, uint64_t bytes) : tile_(tile), size_(bytes), data_(bytes), written_((bytes + 63) / 64) {}

void Spm::check_range(std::string_view instr, uint64_t addr, uint64_t bytes) const {
  if (addr > size_ || bytes > size_ - addr) {
    throw Error(std::string(instr) + " on tile " + std::to_string(tile_) + ": SPM access " + range(addr, bytes) +
                " is outside the tile's " + std::to_string(size_) + "-byte SPM");
  }
}

uint64_t Spm::first_unwritten(uint64_t addr, uint64_t bytes) const {
  return first_clear(written_.data(), addr, addr + bytes);
}

void Spm::mark_written(uint64_t addr, uint64_t bytes) {
  if (!bytes) return;
  set_bits(written_.data(), addr, addr + bytes);
  high_water_ = std::max(high_water_, addr + bytes);
}

const uint8_t* Spm::read_span(std::string_view instr, uint64_t addr, uint64_t bytes) const {
  check_range(instr, addr, bytes);
  const uint64_t missing = first_unwritten(addr, bytes);
  if (missing != addr + bytes) {
    throw Error(std::string(instr) + " on tile " + std::to_string(tile_) + ": reads SPM " + range(addr, bytes) +
                " but the byte at " + hex(missing) + " was never written");
  }
  if (log_ && bytes) log_->push_back({tile_, addr, bytes, false});
  return data_.data() + addr;
}

uint8_t* Spm::write_span(std::string_view instr, uint64_t addr, uint64_t bytes) {
  check_range(instr, addr, bytes);
  mark_written(addr, bytes);
  if (log_ && bytes) log_->push_back({tile_, addr, bytes, true});
  return data_.data() + addr;
}

// Host accesses take no simulated time and order with nothing: they are not logged.
void Spm::write(uint64_t addr, const void* data, uint64_t bytes) {
  check_range("host write", addr, bytes);
  mark_written(addr, bytes);
  std::memcpy(data_.data() + addr, data, bytes);
}

void Spm::read(uint64_t addr, void* data, uint64_t bytes) const {
  check_range("host read", addr, bytes);
  const uint64_t missing = first_unwritten(addr, bytes);
  if (missing != addr + bytes) {
    throw Error("host read on tile " + std::to_string(tile_) + ": reads SPM " + range(addr, bytes) +
                " but the byte at " + hex(missing) + " was never written");
  }
  std::memcpy(data, data_.data() + addr, bytes);
}

bool Spm::is_initialised(uint64_t addr, uint64_t bytes) const {
  return addr <= size_ && bytes <= size_ - addr && first_unwritten(addr, bytes) == addr + bytes;
}

// ---- DDR ----

namespace {
constexpr uint64_t kPageBytes = uint64_t(1) << 16;
}

struct Ddr::Page {
  uint8_t data[kPageBytes];
  uint64_t written[kPageBytes / 64] = {};
};

Ddr::Ddr(uint64_t bytes) : size_(bytes) {}
Ddr::~Ddr() = default;

uint64_t Ddr::allocated_bytes() const { return pages_.size() * kPageBytes; }

void Ddr::check_range(std::string_view who, uint64_t addr, uint64_t bytes) const {
  if (addr > size_ || bytes > size_ - addr) {
    throw Error(std::string(who) + ": DDR access " + range(addr, bytes) + " is outside the chip's " +
                std::to_string(size_) + "-byte DDR");
  }
}

void Ddr::copy_out(std::string_view who, uint64_t addr, void* dst, uint64_t bytes) const {
  check_range(who, addr, bytes);
  auto* out = static_cast<uint8_t*>(dst);
  const uint64_t end = addr + bytes;
  for (uint64_t a = addr; a < end;) {
    const uint64_t page = a / kPageBytes, offset = a % kPageBytes;
    const uint64_t len = std::min(kPageBytes - offset, end - a);
    const auto it = pages_.find(page);
    const uint64_t missing =
        it == pages_.end() ? a : page * kPageBytes + first_clear(it->second->written, offset, offset + len);
    if (missing != a + len) {
      throw Error(std::string(who) + ": reads DDR " + range(addr, bytes) + " but the byte at " + hex(missing) +
                  " was never written");
    }
    std::memcpy(out, it->second->data + offset, len);
    out += len;
    a += len;
  }
}

void Ddr::copy_in(uint64_t addr, const void* src, uint64_t bytes) {
  const auto* in = static_cast<const uint8_t*>(src);
  const uint64_t end = addr + bytes;
  for (uint64_t a = addr; a < end;) {
    const uint64_t page = a / kPageBytes, offset = a % kPageBytes;
    const uint64_t len = std::min(kPageBytes - offset, end - a);
    std::unique_ptr<Page>& p = pages_[page];
    if (!p) p = std::make_unique<Page>();
    std::memcpy(p->data + offset, in, len);
    set_bits(p->written, offset, offset + len);
    in += len;
    a += len;
  }
}

void Ddr::write(uint64_t addr, const void* data, uint64_t bytes) {
  check_range("host write", addr, bytes);
  copy_in(addr, data, bytes);
}

void Ddr::read(uint64_t addr, void* data, uint64_t bytes) const { copy_out("host read", addr, data, bytes); }

void Ddr::load(std::string_view instr, uint64_t addr, void* dst, uint64_t bytes) const {
  copy_out(instr, addr, dst, bytes);
}

void Ddr::store(std::string_view instr, uint64_t addr, const void* src, uint64_t bytes) {
  check_range(instr, addr, bytes);
  copy_in(addr, src, bytes);
}

}  // namespace tg::sim
