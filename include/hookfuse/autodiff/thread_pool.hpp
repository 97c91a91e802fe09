// hookfuse/autodiff/thread_pool.hpp: the process-wide intra-op thread pool of the matrix
// products (hosted builds only; an embedded build has no threads).
//
// One pool per process, sized by hookfuse::set_intra_op_parallelism_threads(n)
// (autodiff/threads.hpp): n - 1 worker threads, created in that call and nowhere else; the
// calling thread of a product is the n-th. A product hands the pool one task of n parts
// (IntraOpPool::try_run): the caller runs part 0, and every thread claims the next unclaimed
// part from one atomic word until none is left. Wake-up and completion are atomics, spun on
// briefly and then waited on (C++20 atomic wait/notify, a futex on Linux): a step allocates
// nothing, takes no lock and creates no thread. The pool serves one product at a time: a second
// thread that finds it busy (two sessions on two user threads) is refused and computes its
// product alone, so no product waits for another. Workers are joined when the pool is resized
// and at exit.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace hookfuse::detail {

/// The number of threads of the matrix products (1: no pool in use). Read by every large
/// product; written by IntraOpPool only (resize, destruction).
inline std::atomic<int> intra_op_threads{1};

/// The rows (or columns) per part when `total` are split over `threads` parts whose boundaries
/// are multiples of `align`: ceil(total / threads) rounded up to a multiple of `align`. The
/// parts are then ceil(total / chunk), fewer than `threads` when the alignment leaves too few.
inline std::ptrdiff_t aligned_chunk(std::ptrdiff_t total, int threads,
                                    std::ptrdiff_t align) noexcept {
  const std::ptrdiff_t per_thread = (total + threads - 1) / threads;
  return (per_thread + align - 1) / align * align;
}

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

  /// Spins of a waiting thread before it sleeps in an atomic wait: about 0.1 ms (a PAUSE takes
  /// 25 ns on an AMD EPYC, up to 40 ns on recent Intel cores), longer than the gaps between the
  /// products of a step and between steps, so the workers of a training loop stay awake, while
  /// an idle pool soon costs no CPU.
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
      for (int i = 0; i < n - 1; ++i) {
        workers_[static_cast<std::size_t>(i)] = std::thread([this, now] { work(now); });
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

  /// Runs task(context, p) for every p in [0, parts) (1 <= parts <= the thread count, at most
  /// 65535) and returns when all have finished: true. The calling thread runs part 0, then
  /// claims any part no worker has claimed yet, so a worker that is slow to wake (its core busy
  /// with another process) costs time but never stalls the product. Returns false, running
  /// nothing, when another thread is using the pool or it has fewer than `parts` threads.
  bool try_run(int parts, Task task, void* context) noexcept {
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    if (parts > workers_started_ + 1) {
      busy_.store(false, std::memory_order_release);
      return false;
    }
    task_ = task;
    context_ = context;
    done_.store(0, std::memory_order_relaxed);
    const std::uint32_t gen = generation_.load(std::memory_order_relaxed) + 1;
    claims_.store(pack(gen, parts, 1), std::memory_order_release);  // part 0 is the caller's
    generation_.store(gen, std::memory_order_release);
    generation_.notify_all();
    task(context, 0);
    done_.fetch_add(1, std::memory_order_acq_rel);
    run_claimed(gen);
    int spins = 0;
    for (int finished; (finished = done_.load(std::memory_order_acquire)) != parts;) {
      if (++spins < kSpins)
        spin_pause();
      else
        done_.wait(finished, std::memory_order_acquire);
    }
    busy_.store(false, std::memory_order_release);
    return true;
  }

 private:
  IntraOpPool() = default;

  /// The claim word: the generation (32 bits), the task's parts and the next unclaimed part.
  static std::uint64_t pack(std::uint32_t gen, int parts, int next) noexcept {
    return (std::uint64_t{gen} << 32) | (static_cast<std::uint64_t>(parts) << 16) |
           static_cast<std::uint64_t>(next);
  }

  /// Claims and runs the unclaimed parts of generation `gen`, one at a time, until none is left.
  /// A claim succeeds only while that generation's caller waits for its parts, so task_ and
  /// context_ are still the ones it wrote.
  void run_claimed(std::uint32_t gen) noexcept {
    std::uint64_t word = claims_.load(std::memory_order_acquire);
    for (;;) {
      const int parts = static_cast<int>((word >> 16) & 0xffff);
      const int next = static_cast<int>(word & 0xffff);
      if (static_cast<std::uint32_t>(word >> 32) != gen || next >= parts) return;
      if (!claims_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
        continue;
      task_(context_, next);
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == parts) done_.notify_one();
      word = claims_.load(std::memory_order_acquire);
    }
  }

  /// Takes the pool for resizing: waits (yielding) until no product uses it.
  void acquire() {
    while (busy_.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
  }

  /// A worker: waits for each new generation after `seen` and claims parts of it.
  void work(std::uint32_t seen) noexcept {
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
      if (stop_.load(std::memory_order_acquire)) return;
      run_claimed(now);
    }
  }

  /// Stops and joins the workers (the pool taken by acquire()).
  void stop_workers() {
    if (workers_started_ > 0) {
      stop_.store(true, std::memory_order_release);
      generation_.fetch_add(1, std::memory_order_release);
      generation_.notify_all();
      for (int i = 0; i < workers_started_; ++i) workers_[static_cast<std::size_t>(i)].join();
    }
    workers_.reset();
    workers_started_ = 0;
    stop_.store(false, std::memory_order_relaxed);
  }

  alignas(64) std::atomic<bool> busy_{false};
  alignas(64) std::atomic<std::uint32_t> generation_{0};
  alignas(64) std::atomic<std::uint64_t> claims_{0};
  alignas(64) std::atomic<int> done_{0};
  std::atomic<bool> stop_{false};
  // Written by the thread holding busy_ before it publishes a generation; read by a worker only
  // after it claims a part of that generation.
  Task task_ = nullptr;
  void* context_ = nullptr;
  int workers_started_ = 0;
  std::unique_ptr<std::thread[]> workers_;
};

}  // namespace hookfuse::detail
