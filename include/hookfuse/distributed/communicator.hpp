// hookfuse/distributed/communicator.hpp: the MPI process group data-parallel training runs on
// (Horovod's hvd.init(), hvd.rank(), hvd.size(), hvd.allreduce(op=hvd.Average),
// hvd.broadcast), over MPI's C API (Open MPI, MPICH; the CMake target hookfuse::mpi).
//
//     int main(int argc, char** argv) {
//       hookfuse::distributed::MpiEnvironment mpi(argc, argv);   // MPI_Init_thread .. MPI_Finalize
//       hookfuse::distributed::Communicator comm;                 // MPI_COMM_WORLD, duplicated
//       ... comm.rank(), comm.size(), comm.allreduce_average(span), comm.broadcast(span, 0)
//     }
//
// Every MPI call's return code is checked: the communicator is a duplicate of the one given,
// with MPI_ERRORS_RETURN as its error handler (the user's communicator keeps its own), so an
// error reaches the caller as MpiError naming the MPI call and MPI_Error_string's text. The
// collective operations must be called by every rank of the group, in the same order, with
// the same element counts (MPI's rule): a rank that skips one leaves the others waiting.
#pragma once

// MPI's C API only: Open MPI's and MPICH's mpi.h otherwise bring their deprecated C++ bindings
// into C++ code (and, with them, a link dependency on libmpi_cxx).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"

namespace hookfuse::distributed {

/// An MPI call that returned an error code. what(): "hookfuse: MPI_Allreduce failed: <the text
/// of MPI_Error_string for the code> (error code N)", or a message naming the misuse (MPI not
/// initialised, a buffer of more than INT_MAX elements).
class MpiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

/// Fails with MpiError naming `call` and MPI_Error_string(code).
[[noreturn]] inline void mpi_fail(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS || length <= 0) {
    length = 0;
    text[0] = '\0';
  }
  hookfuse::detail::fail<MpiError>(
      (hookfuse::detail::ErrorMessage()
       << "hookfuse: " << call << " failed: "
       << (length > 0 ? std::string_view(text, static_cast<std::size_t>(length))
                      : std::string_view("(no error string)"))
       << " (error code " << code << ")")
          .str());
}
/// mpi_fail(call, code) unless code is MPI_SUCCESS.
inline void check_mpi(int code, const char* call) {
  if (code != MPI_SUCCESS) mpi_fail(call, code);
}

/// The MPI datatype of T: float, double, std::int32_t, std::int64_t, std::uint64_t.
template <class T>
MPI_Datatype mpi_type() {
  using U = std::remove_const_t<T>;
  if constexpr (std::is_same_v<U, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<U, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<U, std::int32_t>) return MPI_INT32_T;
  else if constexpr (std::is_same_v<U, std::int64_t>) return MPI_INT64_T;
  else if constexpr (std::is_same_v<U, std::uint64_t>) return MPI_UINT64_T;
  else static_assert(sizeof(T) == 0, "hookfuse: no MPI datatype for this element type");
}

/// A span's size as MPI's int count; MpiError naming `call` when it exceeds INT_MAX.
inline int mpi_count(std::size_t n, const char* call) {
  if (n > static_cast<std::size_t>(INT_MAX))
    hookfuse::detail::fail<MpiError>(
        (hookfuse::detail::ErrorMessage() << "hookfuse: " << call << ": " << n
                                          << " elements in one buffer, more than MPI's int count "
                                             "allows (INT_MAX)")
            .str());
  return static_cast<int>(n);
}

}  // namespace detail

/// MPI for the lifetime of this object (hvd.init() and hvd.shutdown()): MPI_Init_thread with
/// MPI_THREAD_FUNNELED (only the thread that creates it calls MPI) in the constructor,
/// MPI_Finalize in the destructor. When MPI is already initialised (the program did it), it
/// does neither. Create it first in main() and let it outlive every Communicator. Throws
/// MpiError naming MPI_Init_thread when initialisation fails (Open MPI usually aborts itself).
class MpiEnvironment {
 public:
  MpiEnvironment() : MpiEnvironment(nullptr, nullptr) {}
  /// main's argc and argv, passed to MPI_Init_thread (which may remove MPI's own arguments).
  MpiEnvironment(int& argc, char**& argv) : MpiEnvironment(&argc, &argv) {}
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;
  ~MpiEnvironment() {
    int finalized = 0;
    if (owns_ && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) MPI_Finalize();
  }
  /// The thread support level MPI provides (MPI_THREAD_SINGLE .. MPI_THREAD_MULTIPLE).
  int thread_support() const { return provided_; }

 private:
  MpiEnvironment(int* argc, char*** argv) {
    int initialized = 0;
    detail::check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
    if (initialized) {
      detail::check_mpi(MPI_Query_thread(&provided_), "MPI_Query_thread");
      return;
    }
    detail::check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided_),
                      "MPI_Init_thread");
    owns_ = true;
  }
  bool owns_ = false;
  int provided_ = MPI_THREAD_SINGLE;
};

/// A group of ranks to train on: a duplicate of an MPI communicator (MPI_COMM_WORLD by default),
/// whose errors return to the caller as MpiError. Creating one is collective (MPI_Comm_dup):
/// every rank of `comm` creates it, with MPI initialised (MpiEnvironment). Move-only; the
/// destructor frees the duplicate (MPI_Comm_free), so destroy it before MPI_Finalize. The
/// operations are const: they change buffers, not the communicator.
class Communicator {
 public:
  /// Throws MpiError when MPI is not initialised ("create a MpiEnvironment first") or
  /// MPI_Comm_dup, MPI_Comm_set_errhandler, MPI_Comm_rank or MPI_Comm_size fails.
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD) {
    int initialized = 0;
    detail::check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
    if (!initialized)
      hookfuse::detail::fail<MpiError>(
          "hookfuse: distributed::Communicator: MPI is not initialised (create a "
          "distributed::MpiEnvironment first, as hvd.init())");
    detail::check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    detail::check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
                      "MPI_Comm_set_errhandler");
    detail::check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    detail::check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator(Communicator&& o) noexcept
      : comm_(std::exchange(o.comm_, MPI_COMM_NULL)), rank_(o.rank_), size_(o.size_) {}
  Communicator& operator=(Communicator&& o) noexcept {
    if (this != &o) {
      release();
      comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
      rank_ = o.rank_;
      size_ = o.size_;
    }
    return *this;
  }
  ~Communicator() { release(); }

  /// This process's rank, 0 .. size() - 1 (hvd.rank()).
  int rank() const { return rank_; }
  /// The number of ranks (hvd.size()).
  int size() const { return size_; }
  /// The duplicated MPI communicator, for calls of the program's own.
  MPI_Comm native() const { return comm_; }

  /// Sums `values` element-wise over every rank, in place (MPI_Allreduce with MPI_IN_PLACE and
  /// MPI_SUM): afterwards every rank holds the same sums. T: float, double, std::int32_t,
  /// std::int64_t. Every rank passes the same number of elements. Throws MpiError naming
  /// MPI_Allreduce.
  template <class T>
  void allreduce_sum(std::span<T> values) const {
    allreduce(values, MPI_SUM);
  }
  /// The element-wise maximum over every rank, in place (MPI_MAX); as allreduce_sum.
  template <class T>
  void allreduce_max(std::span<T> values) const {
    allreduce(values, MPI_MAX);
  }
  /// The element-wise mean over every rank, in place: one MPI_Allreduce(MPI_SUM), then a
  /// division by size() (hvd.allreduce(tensor, op=hvd.Average)). T: float or double; the
  /// division is in T. Throws MpiError naming MPI_Allreduce.
  template <class T>
  void allreduce_average(std::span<T> values) const {
    static_assert(std::is_floating_point_v<T> && !std::is_const_v<T>,
                  "hookfuse: allreduce_average averages a span of float or double");
    allreduce(values, MPI_SUM);
    if (size_ > 1) {
      const T inv = T(1) / static_cast<T>(size_);
      for (T& v : values) v *= inv;
    }
  }

  /// Copies the root's `values` to every other rank, in place (MPI_Bcast; hvd.broadcast).
  /// T: float, double, std::int32_t, std::int64_t. Every rank passes the same number of
  /// elements. Throws std::invalid_argument unless 0 <= root_rank < size(), MpiError naming
  /// MPI_Bcast.
  template <class T>
  void broadcast(std::span<T> values, int root_rank) const {
    check_root(root_rank, "Communicator::broadcast");
    detail::check_mpi(MPI_Bcast(values.data(), detail::mpi_count(values.size(), "MPI_Bcast"),
                                detail::mpi_type<T>(), root_rank, comm_),
                      "MPI_Bcast");
  }
  /// The same for raw bytes (MPI_BYTE): `bytes` bytes at `data`.
  void broadcast_bytes(void* data, std::size_t bytes, int root_rank) const {
    check_root(root_rank, "Communicator::broadcast_bytes");
    detail::check_mpi(MPI_Bcast(data, detail::mpi_count(bytes, "MPI_Bcast"), MPI_BYTE, root_rank,
                                comm_),
                      "MPI_Bcast");
  }

  /// Waits until every rank has called it (MPI_Barrier). Throws MpiError naming MPI_Barrier.
  void barrier() const { detail::check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

  /// Throws std::invalid_argument naming `who` unless 0 <= root_rank < size().
  void check_root(int root_rank, const char* who) const {
    if (root_rank < 0 || root_rank >= size_)
      hookfuse::detail::fail<std::invalid_argument>(
          (hookfuse::detail::ErrorMessage() << who << ": root_rank must be in [0, " << size_
                                            << ") (the communicator's size), got " << root_rank)
              .str());
  }

 private:
  template <class T>
  void allreduce(std::span<T> values, MPI_Op op) const {
    if (values.empty()) return;
    detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(),
                                    detail::mpi_count(values.size(), "MPI_Allreduce"),
                                    detail::mpi_type<T>(), op, comm_),
                      "MPI_Allreduce");
  }
  void release() {
    int finalized = 0;
    if (comm_ != MPI_COMM_NULL && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized)
      MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace hookfuse::distributed
