#include "temporary_files.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

namespace tg::model {

namespace {

enum SlotState : int { kFree, kFilling, kReady };

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
std::array<Slot, 16> slots;

void remove_and_die(int signal) {
  for (Slot& slot : slots) {
    if (slot.state.load(std::memory_order_acquire) == kReady) ::unlink(slot.path);
  }
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

}  // namespace

RegisteredTemporary::RegisteredTemporary(const std::string& path) {
  if (path.size() >= PATH_MAX) return;
  for (size_t i = 0; i < slots.size(); ++i) {
    int free = kFree;
    if (!slots[i].state.compare_exchange_strong(free, kFilling, std::memory_order_acquire)) continue;
    std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
    slots[i].state.store(kReady, std::memory_order_release);
    slot_ = int(i);
    return;
  }
}

RegisteredTemporary::~RegisteredTemporary() {
  if (slot_ >= 0) slots[size_t(slot_)].state.store(kFree, std::memory_order_release);
}

void install_temporary_cleanup() {
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction cleanup {};
    cleanup.sa_handler = remove_and_die;
    sigemptyset(&cleanup.sa_mask);
    ::sigaction(signal, &cleanup, nullptr);
  }
}

}  // namespace tg::model
