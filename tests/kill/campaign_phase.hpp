// tests/kill/campaign_phase.hpp: what the kill campaign's child is doing, in a page of a file
// both processes map (MAP_SHARED). The child stores its phase before and after each part of its
// work; the driver polls the page to time its SIGKILL (into a save, into an event write) and,
// once the child is dead, reads where the kill landed. Plain lock-free atomics: a SIGKILL never
// leaves one half written.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace hookfuse_test {

enum class Phase : int {
  none = 0,     // not started (or killed before its first store)
  startup = 1,  // from main() until the session exists: restore of the latest checkpoint
  train = 2,    // a training step, between saves
  save = 3,     // inside Saver::save: bundle files, state file, retention
  event = 4,    // inside the event file write (add_scalar + flush)
  done = 5,     // a clean exit
};

inline const char* phase_name(Phase p) {
  switch (p) {
    case Phase::none:
      return "exec, before main()";
    case Phase::startup:
      return "start-up/restore";
    case Phase::train:
      return "training step (between saves)";
    case Phase::save:
      return "save";
    case Phase::event:
      return "event-file write";
    case Phase::done:
      return "clean exit";
  }
  return "?";
}

struct SharedPhase {
  std::atomic<int> phase{0};
  std::atomic<std::int64_t> step{-1};    // the global step of the save or event under way
  std::atomic<std::int64_t> saves{0};    // saves started by this child
  std::atomic<std::int64_t> save_ns{0};  // duration of the child's last complete save
  std::atomic<std::int64_t> events{0};   // event writes started by this child

  void set(Phase p, std::int64_t s) {
    step.store(s, std::memory_order_relaxed);
    phase.store(static_cast<int>(p), std::memory_order_release);
  }
  Phase get() const { return static_cast<Phase>(phase.load(std::memory_order_acquire)); }
};

static_assert(std::atomic<int>::is_always_lock_free &&
              std::atomic<std::int64_t>::is_always_lock_free);

/// Maps the shared page of `path` (created and sized if needed); nullptr on failure.
inline SharedPhase* map_phase(const char* path) {
  const int fd = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  if (::ftruncate(fd, 4096) != 0) {
    ::close(fd);
    return nullptr;
  }
  void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  return p == MAP_FAILED ? nullptr : static_cast<SharedPhase*>(p);
}

}  // namespace hookfuse_test
