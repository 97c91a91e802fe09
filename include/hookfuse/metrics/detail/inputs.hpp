// hookfuse/metrics/detail/inputs.hpp: what every streaming metric does with its inputs before it
// counts anything: shape checks, TensorFlow's casts, the row's arg-max, the total / count pair.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/eigen.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"

namespace hookfuse::metrics::detail {

using hookfuse::detail::ErrorMessage;
using hookfuse::detail::fail;

/// An Eigen matrix or expression whose scalar is a C++ arithmetic type (bool, integers, float,
/// double): what a metric reads.
template <class D>
concept ArithmeticMatrix =
    std::is_base_of_v<Eigen::MatrixBase<D>, D> && std::is_arithmetic_v<typename D::Scalar>;

/// `m` as something whose coefficients are cheap to read twice (once to check, once to count):
/// a matrix, map or block by reference, a coefficient-wise expression as itself, a product
/// evaluated once into a temporary (Eigen's nested_eval).
template <class D>
using Nested = typename Eigen::internal::nested_eval<D, 2>::type;

/// ValueError "<who>: <what_a> has R1 rows, <what_b> R2 (rows are the batch)" unless equal
/// (TensorFlow: ValueError from assert_is_compatible_with when the graph is built).
inline void check_rows(const char* who, const char* what_a, Eigen::Index a, const char* what_b,
                       Eigen::Index b) {
  if (a == b) return;
  fail<ValueError>((ErrorMessage() << who << ": " << what_a << " have " << static_cast<long long>(a)
                                   << " rows, " << what_b << " " << static_cast<long long>(b)
                                   << " (rows are the batch: they must match)")
                       .str());
}

/// ValueError naming both shapes unless `labels` and `predictions` have the same shape.
template <class L, class P>
void check_same_shape(const char* who, const L& labels, const P& predictions) {
  check_rows(who, "labels", labels.rows(), "predictions", predictions.rows());
  if (labels.cols() == predictions.cols()) return;
  fail<ValueError>((ErrorMessage()
                    << who << ": labels [" << static_cast<long long>(labels.rows()) << ", "
                    << static_cast<long long>(labels.cols()) << "] and predictions ["
                    << static_cast<long long>(predictions.rows()) << ", "
                    << static_cast<long long>(predictions.cols()) << "] must have the same shape")
                       .str());
}

/// ValueError unless `weights` broadcast to [rows, cols] as TensorFlow's broadcast_weights
/// allows: each dimension 1 or equal ([1, 1], [rows, 1], [1, cols], [rows, cols]).
template <class W>
void check_weights(const char* who, const W& weights, Eigen::Index rows, Eigen::Index cols) {
  const bool rows_ok = weights.rows() == rows || weights.rows() == 1;
  const bool cols_ok = weights.cols() == cols || weights.cols() == 1;
  if (rows_ok && cols_ok) return;
  fail<ValueError>((ErrorMessage()
                    << who << ": weights [" << static_cast<long long>(weights.rows()) << ", "
                    << static_cast<long long>(weights.cols())
                    << "] do not broadcast to the values [" << static_cast<long long>(rows) << ", "
                    << static_cast<long long>(cols) << "] (each dimension must be 1 or equal)")
                       .str());
}

/// The weight of element (i, j) of a value broadcast from `weights`, as float32.
template <class W>
float weight_at(const W& weights, Eigen::Index i, Eigen::Index j) {
  return static_cast<float>(
      weights.coeff(weights.rows() == 1 ? 0 : i, weights.cols() == 1 ? 0 : j));
}

/// Whether converting `v` to the integer type I (truncation toward zero) is defined: its
/// integer part lies in [min, max]. min is 0 or a power of two, exact in double; max + 1 is a
/// power of two once rounded (2^63 for int64), so `< max + 1` is exact too.
template <class I>
bool truncates_into(double v) {
  const double t = std::trunc(v);  // NaN stays NaN: both comparisons false
  return t >= static_cast<double>(std::numeric_limits<I>::min()) &&
         t < static_cast<double>(std::numeric_limits<I>::max()) + 1.0;
}

/// TensorFlow's `math_ops.cast(p, labels.dtype)` followed by `math_ops.equal`: the prediction is
/// converted to the label's type (float to integer truncates toward zero; to bool, nonzero is
/// true), then compared. A floating-point prediction that no integer label type holds (NaN,
/// infinities, beyond the type's range) equals no label: C++ leaves that conversion undefined.
template <class Ls, class Ps>
bool cast_equal(Ls label, Ps prediction) {
  if constexpr (std::is_same_v<Ls, bool>) {
    return label == (prediction != Ps{});
  } else if constexpr (std::is_integral_v<Ls> && std::is_floating_point_v<Ps>) {
    if (!truncates_into<Ls>(static_cast<double>(prediction))) return false;
    return static_cast<Ls>(prediction) == label;
  } else {
    return static_cast<Ls>(prediction) == label;
  }
}

/// Index of the first largest coefficient of row `i` (tf.argmax's tie rule: the smallest
/// index). A NaN is never larger than the running maximum.
template <class P>
Eigen::Index row_argmax(const P& predictions, Eigen::Index i) {
  Eigen::Index best = 0;
  for (Eigen::Index j = 1; j < predictions.cols(); ++j)
    if (predictions.coeff(i, j) > predictions.coeff(i, best)) best = j;
  return best;
}

/// A class id read from a label, as TensorFlow's cast to int64 (truncation toward zero); false
/// for a value no int64 holds (NaN, infinities, beyond +-2^63).
template <class S>
bool to_class_id(S value, std::int64_t& id) {
  if constexpr (std::is_floating_point_v<S>) {
    if (!truncates_into<std::int64_t>(static_cast<double>(value))) return false;
    id = static_cast<std::int64_t>(value);
    return true;
  } else if constexpr (std::is_unsigned_v<S>) {
    if (static_cast<unsigned long long>(value) >
        static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max()))
      return false;
    id = static_cast<std::int64_t>(value);
    return true;
  } else {
    id = static_cast<std::int64_t>(value);
    return true;
  }
}

/// Appends a label or prediction to an error message: an integer as itself, a floating-point
/// value as printf's %g.
template <class S>
void append_value(ErrorMessage& m, S v) {
  if constexpr (std::is_floating_point_v<S>)
    m << v;
  else if constexpr (std::is_unsigned_v<S>)
    m << static_cast<std::size_t>(v);
  else
    m << static_cast<long long>(v);
}

/// The two float32 local variables of tf.compat.v1.metrics.mean (`total`, `count`) and its value
/// `div_no_nan(total, maximum(count, 0))`: 0 while count is 0 (or negative, with negative
/// weights).
struct TotalCount {
  float total = 0.0f;
  float count = 0.0f;

  [[nodiscard]] float value() const { return count > 0.0f ? total / count : 0.0f; }
  /// total += batch_total; count += batch_count (TF's two assign_adds), then the value.
  float add(float batch_total, float batch_count) {
    total += batch_total;
    count += batch_count;
    return value();
  }
  void reset() { total = count = 0.0f; }
};

}  // namespace hookfuse::metrics::detail
