// hookfuse/autodiff/threads.hpp: multi-threaded matrix products (intra-op parallelism).
//
// hookfuse runs on one thread unless set_intra_op_parallelism_threads(n) asks for more. Then
// the large matrix products of the forward and backward pass (batch and weight-gradient GEMMs)
// are split across n threads of hookfuse's own pool (autodiff/thread_pool.hpp): the destination
// is cut into n parts along its larger dimension and each thread computes one part with Eigen's
// sequential kernel, into packing buffers reserved on first use. The threads are created in that
// call, never during a step, and a threaded step allocates nothing. The elementwise update of a
// large variable by an optimizer that declares it elementwise (Adam, RMSProp, Adagrad, unfused
// Momentum; session/optimizer_slots.hpp) is split by rows the same way. Everything else in the
// step (elementwise ops, reductions, the hooks) stays on the calling thread. No OpenMP is needed. An embedded build (HOOKFUSE_EMBEDDED) has no threads: the count is 1.
#pragma once

#include "hookfuse/config.hpp"

#include <stdexcept>

#ifndef HOOKFUSE_EMBEDDED
#include <string>

#include "hookfuse/autodiff/thread_pool.hpp"
#endif

namespace hookfuse {

/// Sets the number of threads of the matrix products: n >= 1 (1, the default, is the calling
/// thread alone). Mirrors tf.config.threading.set_intra_op_parallelism_threads. Starts the n - 1
/// worker threads here (after joining the previous ones; it waits for a product in progress on
/// another thread to end); a step never creates a thread. Process-wide: every session uses the
/// same pool, one product at a time; a product on another user thread that finds the pool busy
/// runs on its own thread. Errors: std::invalid_argument naming n when n < 1;
/// std::system_error when a thread cannot be started (the count is then 1). Under
/// HOOKFUSE_EMBEDDED any n >= 1 is accepted and the products stay on one thread.
inline void set_intra_op_parallelism_threads(int n) {
  if (n < 1) {
#ifdef HOOKFUSE_EMBEDDED
    detail::fail<std::invalid_argument>(
        "hookfuse: set_intra_op_parallelism_threads: n must be >= 1");
#else
    detail::fail<std::invalid_argument>(
        "hookfuse: set_intra_op_parallelism_threads: n must be >= 1, got " + std::to_string(n));
#endif
  }
#ifndef HOOKFUSE_EMBEDDED
  if (n != detail::intra_op_threads.load(std::memory_order_relaxed))
    detail::IntraOpPool::instance().resize(n);
#endif
}

/// The number of threads of the matrix products (1 unless set_intra_op_parallelism_threads
/// set more; always 1 under HOOKFUSE_EMBEDDED).
inline int intra_op_parallelism_threads() {
#ifdef HOOKFUSE_EMBEDDED
  return 1;
#else
  return detail::intra_op_threads.load(std::memory_order_relaxed);
#endif
}

}  // namespace hookfuse
