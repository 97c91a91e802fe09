// hookfuse/autodiff/threads.hpp: opt-in multi-threaded matrix products (intra-op parallelism).
//
// hookfuse runs on one thread unless the program is compiled with OpenMP (-fopenmp; in CMake,
// link OpenMP::OpenMP_CXX next to hookfuse::hookfuse). Then the large matrix products of the
// forward and backward pass (both batch and weight-gradient GEMMs) are split across threads by
// Eigen's own parallel GEMM; everything else in the step stays on the calling thread.
//
// Thread count: set_intra_op_parallelism_threads(n) (TensorFlow's ConfigProto
// intra_op_parallelism_threads), or the OMP_NUM_THREADS environment variable; OpenMP's default
// is one thread per core. With more than one thread, each large product allocates Eigen's
// packing buffers (the zero-allocation guarantee of a step holds for one thread).
#pragma once

#include "hookfuse/detail/eigen.hpp"

namespace hookfuse {

/// Sets the number of threads of the matrix products (n >= 1; 0 restores OpenMP's default).
/// Mirrors tf.config.threading.set_intra_op_parallelism_threads. Without OpenMP it does nothing.
inline void set_intra_op_parallelism_threads(int n) { Eigen::setNbThreads(n); }

/// The number of threads the matrix products use (1 without OpenMP).
inline int intra_op_parallelism_threads() { return Eigen::nbThreads(); }

/// True when this translation unit was compiled with OpenMP (hookfuse can use threads).
inline constexpr bool has_openmp =
#ifdef EIGEN_HAS_OPENMP
    true;
#else
    false;
#endif

}  // namespace hookfuse
