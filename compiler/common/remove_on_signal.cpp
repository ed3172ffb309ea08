#include "compiler/common/remove_on_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace spmmc {
namespace {

constexpr int kSlots = 64;
constexpr size_t kMaxPath = 4096;

// A registered path. `state` makes it safe to read from a signal handler: the handler only reads
// `path` of an armed slot, and a slot is armed only after its path is complete.
enum SlotState : int { kFree = 0, kFilling = 1, kArmed = 2 };
struct Slot {
  std::atomic<int> state{kFree};
  char path[kMaxPath];
};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

Slot g_slots[kSlots];

// Async-signal-safe: atomics, unlink and raise only.
extern "C" void remove_registered_files_and_die(int signal_number) {
  const int saved_errno = errno;
  for (Slot& slot : g_slots)
    if (slot.state.load(std::memory_order_acquire) == kArmed) ::unlink(slot.path);
  errno = saved_errno;
  // SA_RESETHAND restored the default action; the signal is blocked until this handler returns,
  // so it is delivered, and ends the process, right after.
  ::raise(signal_number);
}

}  // namespace

void remove_files_on_termination_signals() {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old_action;
    if (::sigaction(signal_number, nullptr, &old_action) == 0 && old_action.sa_handler == SIG_IGN) continue;
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = remove_registered_files_and_die;
    sigemptyset(&action.sa_mask);
    // One cleanup at a time: the other termination signals wait while it runs.
    for (const int other : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, other);
    action.sa_flags = SA_RESETHAND;
    ::sigaction(signal_number, &action, nullptr);
  }
  struct sigaction ignore;
  std::memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGXFSZ, &ignore, nullptr);
}

RemovedOnSignal::RemovedOnSignal(const std::string& path) {
  if (path.size() >= kMaxPath) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kArmed, std::memory_order_release);
    slot_ = i;
    return;
  }
}

RemovedOnSignal::~RemovedOnSignal() {
  if (slot_ >= 0) g_slots[slot_].state.store(kFree, std::memory_order_release);
}

}  // namespace spmmc
