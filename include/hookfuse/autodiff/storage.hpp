// hookfuse/autodiff/storage.hpp: matrix types and buffers behind every tensor of a bound graph.
#pragma once

#include <cstddef>

#include "hookfuse/detail/eigen.hpp"
#include <type_traits>

namespace hookfuse {

using Eigen::Dynamic;
using Eigen::Index;

namespace detail {

/// Rows are the batch, so tensors are row-major (one example contiguous), except column vectors,
/// which Eigen requires to be column-major.
template <int R, int C>
inline constexpr int storage_order = (C == 1 && R != 1) ? Eigen::ColMajor : Eigen::RowMajor;

template <class S, int R, int C>
using matrix_t = Eigen::Matrix<S, R, C, storage_order<R, C>>;

/// The alignment Eigen guarantees for the data of a matrix_t: heap storage (any dynamic size) is
/// aligned to EIGEN_MAX_ALIGN_BYTES, but a fixed-size matrix only when its size is a multiple of
/// the packet size (a 9 x 7 double matrix has no alignment beyond its scalar's).
template <class S, int R, int C>
inline constexpr int alignment_of = Eigen::internal::traits<matrix_t<S, R, C>>::Alignment;

template <class S, int R, int C>
using map_t = Eigen::Map<matrix_t<S, R, C>, alignment_of<S, R, C>>;

template <class S, int R, int C>
using const_map_t = Eigen::Map<const matrix_t<S, R, C>, alignment_of<S, R, C>>;

/// Runtime shape of a tensor: rows (the batch for batched tensors) and columns.
struct Shape {
  Index rows = 0;
  Index cols = 0;
  constexpr bool operator==(const Shape&) const = default;
};

/// Storage of one tensor. Fixed sizes live inside the object; dynamic sizes are allocated once by
/// `reserve` (at bind time) for the largest shape, and `view()` exposes the current shape, so a
/// shorter last batch reuses the same memory.
template <class S, int R, int C>
class Buffer {
 public:
  static constexpr bool fixed = R != Dynamic && C != Dynamic;

  Buffer() {
    if constexpr (fixed) storage_.setZero();
  }
  void reserve(Shape max) {
    if constexpr (!fixed) storage_.resize(max.rows * max.cols);
    shape_ = max;
  }
  void set_shape(Shape s) { shape_ = s; }
  Shape shape() const { return shape_; }
  /// Heap bytes reserved: 0 for a fixed size (stored inside the object).
  std::size_t heap_bytes() const {
    if constexpr (fixed) return 0;
    else return static_cast<std::size_t>(storage_.size()) * sizeof(S);
  }
  map_t<S, R, C> view() { return {storage_.data(), shape_.rows, shape_.cols}; }
  const_map_t<S, R, C> view() const { return {storage_.data(), shape_.rows, shape_.cols}; }

 private:
  std::conditional_t<fixed, matrix_t<S, R, C>, Eigen::Matrix<S, Dynamic, 1>> storage_;
  Shape shape_{R == Dynamic ? 0 : R, C == Dynamic ? 0 : C};
};

/// Compile-time dimension arithmetic: Dynamic when either side is.
constexpr int same_dim(int a, int b) { return a == Dynamic ? b : a; }
/// Two compile-time dimensions can be equal at run time.
constexpr bool dim_fits(int x, int y) { return x == Dynamic || y == Dynamic || x == y; }

}  // namespace detail
}  // namespace hookfuse
