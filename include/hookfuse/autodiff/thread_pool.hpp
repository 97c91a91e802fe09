// hookfuse/autodiff/thread_pool.hpp: the process-wide intra-op thread pool of the matrix
// products (hosted builds only; an embedded build has no threads).
//
// One pool per process, sized by hookfuse::set_intra_op_parallelism_threads(n)
// (autodiff/threads.hpp): n - 1 worker threads, created in that call and nowhere else; the
// calling thread of a product is the n-th. A product hands the pool one task of n parts
// (IntraOpPool::try_run): the caller runs part 0, worker i part i. Wake-up and completion are
// two atomics, spun on briefly and then waited on (C++20 atomic wait/notify, a futex on Linux):
// a step allocates nothing, takes no lock and creates no thread. The pool serves one product at
// a time: a second thread that finds it busy (two sessions on two user threads) is refused and
// computes its product alone, so nothing ever waits for another caller. Workers are joined when
// the pool is resized and at exit.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace hookfuse::detail {

/// The number of threads of the matrix products (1: no pool in use). Read by every large
/// product; written by IntraOpPool::resize only.
inline std::atomic<int> intra_op_threads{1};

/// One pause of a spin loop (the x86 PAUSE instruction; a compiler barrier elsewhere).
inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

class IntraOpPool {
 public:
  /// A part of a task: `part` in [0, parts). Must not throw.
  using Task = void (*)(void* context, int part) noexcept;

  /// Spins of a waiting thread before it sleeps in an atomic wait: a few tens of microseconds,
  /// about the gap between two products of a step, so the workers of a running step stay awake
  /// and an idle pool costs no CPU.
  static constexpr int kSpins = 4000;

  /// The pool (created on first use, joined at exit).
  static IntraOpPool& instance() {
    static IntraOpPool pool;
    return pool;
  }

  IntraOpPool(const IntraOpPool&) = delete;
  IntraOpPool& operator=(const IntraOpPool&) = delete;
  ~IntraOpPool() {
    acquire();
    stop_workers();
    intra_op_threads.store(1, std::memory_order_relaxed);
  }

  /// n threads in all (n >= 1, checked by the caller): joins the current workers, then starts
  /// n - 1 new ones. Waits for a product in progress to end. If a thread cannot be started, the
  /// pool is left with one thread and the std::system_error propagates.
  void resize(int n) {
    acquire();
    stop_workers();
    intra_op_threads.store(1, std::memory_order_relaxed);
    try {
      workers_ = std::make_unique<std::thread[]>(static_cast<std::size_t>(n - 1));
      const std::uint32_t now = generation_.load(std::memory_order_relaxed);
      for (int i = 1; i < n; ++i) {
        workers_[static_cast<std::size_t>(i - 1)] = std::thread([this, i, now] { work(i, now); });
        ++workers_started_;
      }
    } catch (...) {
      stop_workers();
      busy_.store(false, std::memory_order_release);
      throw;
    }
    intra_op_threads.store(n, std::memory_order_relaxed);
    busy_.store(false, std::memory_order_release);
  }

  /// Runs task(context, p) for every p in [0, parts) (1 <= parts <= the thread count), part 0
  /// on the calling thread, and returns when all have finished: true. Returns false, running
  /// nothing, when another thread is using the pool or it has fewer than `parts` threads.
  bool try_run(int parts, Task task, void* context) noexcept {
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    if (parts > workers_started_ + 1) {
      busy_.store(false, std::memory_order_release);
      return false;
    }
    task_ = task;
    context_ = context;
    parts_ = parts;
    pending_.store(workers_started_, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    task(context, 0);
    int spins = 0;
    for (int left; (left = pending_.load(std::memory_order_acquire)) != 0;) {
      if (++spins < kSpins)
        spin_pause();
      else
        pending_.wait(left, std::memory_order_acquire);
    }
    busy_.store(false, std::memory_order_release);
    return true;
  }

 private:
  IntraOpPool() = default;

  /// Takes the pool for resizing: waits (yielding) until no product uses it.
  void acquire() {
    while (busy_.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
  }

  /// Worker `index`: waits for each new generation after `seen`, runs its part (if the task has
  /// one for it) and counts itself done; every worker counts, so the caller's return also means
  /// no worker still reads the task.
  void work(int index, std::uint32_t seen) noexcept {
    for (;;) {
      int spins = 0;
      std::uint32_t now;
      while ((now = generation_.load(std::memory_order_acquire)) == seen) {
        if (++spins < kSpins)
          spin_pause();
        else
          generation_.wait(seen, std::memory_order_acquire);
      }
      seen = now;
      if (stop_) return;
      if (index < parts_) task_(context_, index);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
  }

  /// Stops and joins the workers (the pool taken by acquire()).
  void stop_workers() {
    if (workers_started_ > 0) {
      stop_ = true;
      generation_.fetch_add(1, std::memory_order_release);
      generation_.notify_all();
      for (int i = 0; i < workers_started_; ++i) workers_[static_cast<std::size_t>(i)].join();
    }
    workers_.reset();
    workers_started_ = 0;
    stop_ = false;
  }

  alignas(64) std::atomic<bool> busy_{false};
  alignas(64) std::atomic<std::uint32_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  // Written by the thread holding busy_ before it bumps generation_; read by the workers after
  // they see the bump.
  Task task_ = nullptr;
  void* context_ = nullptr;
  int parts_ = 0;
  bool stop_ = false;
  int workers_started_ = 0;
  std::unique_ptr<std::thread[]> workers_;
};

}  // namespace hookfuse::detail
