// HugePageArena: allocations back to back, aligned and apart, in 2 MiB-aligned segments that are
// unmapped with their last allocation.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "huge_page_arena.h"

namespace tg::cpu {
namespace {

constexpr size_t kMiB = size_t(1) << 20;

// Whether the page at p is mapped (mincore fails with ENOMEM on an unmapped range).
bool mapped(const void* p) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  unsigned char resident = 0;
  void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) / page * page);
  return mincore(start, page, &resident) == 0 || errno != ENOMEM;
}

TEST(HugePageArena, AllocationsAreAlignedApartAndWritable) {
  HugePageArena arena;
  std::vector<std::shared_ptr<uint8_t>> blocks;
  std::vector<size_t> sizes = {1, 63, 64, 65, 4097, 3 * kMiB + 5, 1};
  for (size_t size : sizes) blocks.push_back(arena.allocate(size));
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks[i].get()) % HugePageArena::kAlignment, 0u) << i;
    std::memset(blocks[i].get(), int(i + 1), sizes[i]);
  }
  // Back to back in one segment: each starts at the last one's end rounded to a cache line.
  for (size_t i = 1; i < blocks.size(); ++i) {
    const size_t rounded =
        (sizes[i - 1] + HugePageArena::kAlignment - 1) / HugePageArena::kAlignment * HugePageArena::kAlignment;
    EXPECT_EQ(blocks[i].get(), blocks[i - 1].get() + rounded) << i;
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks[0].get()) % (2 * kMiB), 0u) << "a segment starts on a 2 MiB page";
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_TRUE(std::all_of(blocks[i].get(), blocks[i].get() + sizes[i], [&](uint8_t b) { return b == i + 1; })) << i;
  }
}

TEST(HugePageArena, ASegmentIsUnmappedWithItsLastAllocation) {
  HugePageArena arena;
  std::shared_ptr<uint8_t> first = arena.allocate(kMiB);
  std::shared_ptr<uint8_t> second = arena.allocate(kMiB);
  const uint8_t* const base = first.get();
  second.get()[0] = 1;
  first.reset();
  EXPECT_TRUE(mapped(base)) << "unmapped while an allocation in it lives";
  second.reset();
  EXPECT_FALSE(mapped(base));
  // The next allocation gets a fresh segment, not the freed one's memory.
  std::shared_ptr<uint8_t> third = arena.allocate(64);
  third.get()[0] = 2;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(third.get()) % (2 * kMiB), 0u);
}

TEST(HugePageArena, WhatDoesNotFitTakesANewSegment) {
  HugePageArena arena;
  std::shared_ptr<uint8_t> small = arena.allocate(64);
  // Larger than a segment: a segment of its own size, whose end is writable.
  const size_t big = HugePageArena::kSegmentBytes + 3 * kMiB;
  std::shared_ptr<uint8_t> large = arena.allocate(big);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.get()) % (2 * kMiB), 0u);
  large.get()[big - 1] = 7;
  EXPECT_EQ(large.get()[big - 1], 7);
  const uint8_t* const large_base = large.get();
  large.reset();
  EXPECT_FALSE(mapped(large_base));
  EXPECT_TRUE(mapped(small.get()));
}

// Out of address space (here: RLIMIT_AS just above what the process maps) is a null allocation,
// which the weight copies take as "no copy", not an error. In a child process, whose limit it is.
TEST(HugePageArena, NoAddressSpaceIsANullAllocation) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::ifstream status("/proc/self/status");
    size_t mapped_kib = 0;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("VmSize:", 0) == 0) mapped_kib = std::stoul(line.substr(7));
    }
    const rlimit limit{(mapped_kib << 10) + 16 * kMiB, (mapped_kib << 10) + 16 * kMiB};
    if (mapped_kib == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    HugePageArena arena;
    const std::shared_ptr<uint8_t> first = arena.allocate(64), second = arena.allocate(64);
    _exit(!first && !second ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: memory beyond the limit, 3: cannot lower the limit";
}

}  // namespace
}  // namespace tg::cpu
