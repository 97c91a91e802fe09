// hookfuse/io/tensor_shape.hpp: a TensorFlow shape as a checkpoint stores it (TensorShapeProto):
// rank 0 is a scalar, [256] a vector, [784, 256] a matrix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"

namespace hookfuse::io {
namespace detail {

/// Product of `dims`, or nullopt when a dimension is negative or the product overflows int64.
[[nodiscard]] inline std::optional<std::int64_t> checked_num_elements(
    std::span<const std::int64_t> dims) noexcept {
  std::int64_t n = 1;
  for (const std::int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

}  // namespace detail

/// TensorFlow's `TensorShape` as stored in a checkpoint: the size of each dimension, outermost
/// first (row-major). `TensorShape{}` is a scalar (rank 0, one element); `{0}` and `{3, 0}` are
/// empty tensors. hookfuse keeps a bias as a [1, n] row in memory; its TensorFlow shape is {n}.
///
/// A class template only so that its member functions are compiled where they are used (see
/// "Compile time" in docs/checkpoints.md); use it as `TensorShape`.
template <class = void>
class BasicTensorShape {
 public:
  /// Rank 0: a scalar.
  BasicTensorShape() = default;
  /// `TensorShape({784, 256})`; also what `add("w", {784, 256}, data)` builds.
  BasicTensorShape(std::initializer_list<std::int64_t> dims) : dims_(dims) {}
  /// From any sequence of dimension sizes (a std::vector, std::array or span of int64).
  explicit BasicTensorShape(std::span<const std::int64_t> dims) : dims_(dims.begin(), dims.end()) {}

  /// The rank (TensorFlow's `TensorShape::dims()`): 0 for a scalar.
  [[nodiscard]] int dims() const noexcept { return static_cast<int>(dims_.size()); }
  /// Size of dimension `i`, 0 <= i < dims() (unchecked, as TensorFlow's).
  [[nodiscard]] std::int64_t dim_size(int i) const noexcept {
    return dims_[static_cast<std::size_t>(i)];
  }
  /// All dimension sizes, outermost first.
  [[nodiscard]] std::span<const std::int64_t> dim_sizes() const noexcept { return dims_; }

  /// Product of the dimension sizes (1 for a scalar, 0 for an empty tensor). Throws
  /// hookfuse::ValueError for a negative dimension or a product past int64.
  [[nodiscard]] std::int64_t num_elements() const {
    const auto n = detail::checked_num_elements(dims_);
    if (!n) {
      ::hookfuse::detail::fail<ValueError>(
          "TensorShape " + debug_string() +
          ": expected non-negative dimensions whose product fits in int64");
    }
    return *n;
  }

  /// "[784,256]", "[]" for a scalar (TensorFlow's `TensorShape::DebugString`).
  [[nodiscard]] std::string debug_string() const {
    std::string s = "[";
    for (std::size_t i = 0; i < dims_.size(); ++i) {
      if (i != 0) s += ',';
      s += std::to_string(dims_[i]);
    }
    return s + ']';
  }

  friend bool operator==(const BasicTensorShape&, const BasicTensorShape&) = default;

 private:
  std::vector<std::int64_t> dims_;
};

/// TensorFlow's `TensorShape` (see BasicTensorShape).
using TensorShape = BasicTensorShape<void>;

}  // namespace hookfuse::io
