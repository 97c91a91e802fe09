// hookfuse/metrics/mean.hpp: the streaming means of tf.compat.v1.metrics (metrics_impl.py):
// mean, mean_squared_error, mean_absolute_error and accuracy, each a `total` / `count` pair.
//
// Each metric is TensorFlow's (value, update_op) pair as one object: update(...) is the update op
// (adds the batch to the local variables and returns the updated value), value() the value
// tensor, reset() what local_variables_initializer does before each evaluation. The local
// variables are float32, as TF1's metric_variable makes them, so a value prints as TensorFlow's
// does (and a count stops growing by 1 past 2^24 examples, as there).
#pragma once

#include <cmath>
#include <span>
#include <type_traits>

#include "hookfuse/detail/eigen.hpp"
#include "hookfuse/metrics/detail/inputs.hpp"

namespace hookfuse::metrics {

namespace detail {

/// What every total / count metric shows: value() = total / count (0 while count is 0), the two
/// float32 local variables, and reset() (local_variables_initializer).
class TotalCountMetric {
 public:
  [[nodiscard]] float value() const { return state_.value(); }
  [[nodiscard]] float total() const { return state_.total; }
  [[nodiscard]] float count() const { return state_.count; }
  void reset() { state_.reset(); }
  /// The local variables, total then count, each as a span of one float32 (metrics/reduce.hpp).
  template <class F>
  void for_each_local_variable(F&& f) {
    f(std::span<float>(&state_.total, 1));
    f(std::span<float>(&state_.count, 1));
  }

 protected:
  TotalCount state_;
};

}  // namespace detail

/// tf.compat.v1.metrics.mean(values, weights): total += sum(values * weights), count +=
/// sum(weights) (weights default to 1), value = total / count, 0 before any update (div_no_nan).
/// `values` [batch, k], any arithmetic scalar, cast to float32 before summing as TF does.
/// `weights` broadcast to the values: [1, 1], [batch, 1], [1, k] or [batch, k]; other shapes
/// throw ValueError, and the metric is unchanged.
class Mean : public detail::TotalCountMetric {
 public:
  static constexpr int num_inputs = 1;

  template <detail::ArithmeticMatrix V>
  float update(const Eigen::MatrixBase<V>& values) {
    const detail::Nested<V> v(values.derived());
    float sum = 0.0f;
    for (Eigen::Index i = 0; i < v.rows(); ++i)
      for (Eigen::Index j = 0; j < v.cols(); ++j) sum += static_cast<float>(v.coeff(i, j));
    return state_.add(sum, static_cast<float>(v.size()));
  }

  template <detail::ArithmeticMatrix V, detail::ArithmeticMatrix W>
  float update(const Eigen::MatrixBase<V>& values, const Eigen::MatrixBase<W>& weights) {
    const detail::Nested<V> v(values.derived());
    const detail::Nested<W> w(weights.derived());
    detail::check_weights("hookfuse::metrics::Mean", w, v.rows(), v.cols());
    float sum = 0.0f;
    float count = 0.0f;
    for (Eigen::Index i = 0; i < v.rows(); ++i)
      for (Eigen::Index j = 0; j < v.cols(); ++j) {
        const float wij = detail::weight_at(w, i, j);
        sum += static_cast<float>(v.coeff(i, j)) * wij;
        count += wij;
      }
    return state_.add(sum, count);
  }

};

namespace detail {

/// The mean of f(label, prediction) over every element, f computed in double when either input
/// is double (TF computes it in the inputs' dtype) and cast to float32 for the sum, as
/// tf.compat.v1.metrics.mean does with the errors it is given.
template <class F, class L, class P>
float mean_of_elementwise(TotalCount& state, const char* who, const L& labels, const P& predictions,
                          F f) {
  check_same_shape(who, labels, predictions);
  using C = std::common_type_t<typename L::Scalar, typename P::Scalar, float>;
  float sum = 0.0f;
  for (Eigen::Index i = 0; i < labels.rows(); ++i)
    for (Eigen::Index j = 0; j < labels.cols(); ++j)
      sum += static_cast<float>(
          f(static_cast<C>(labels.coeff(i, j)), static_cast<C>(predictions.coeff(i, j))));
  return state.add(sum, static_cast<float>(labels.size()));
}

template <class F, class L, class P, class W>
float mean_of_elementwise(TotalCount& state, const char* who, const L& labels, const P& predictions,
                          const W& weights, F f) {
  check_same_shape(who, labels, predictions);
  check_weights(who, weights, labels.rows(), labels.cols());
  using C = std::common_type_t<typename L::Scalar, typename P::Scalar, float>;
  float sum = 0.0f;
  float count = 0.0f;
  for (Eigen::Index i = 0; i < labels.rows(); ++i)
    for (Eigen::Index j = 0; j < labels.cols(); ++j) {
      const float wij = weight_at(weights, i, j);
      sum += static_cast<float>(
                 f(static_cast<C>(labels.coeff(i, j)), static_cast<C>(predictions.coeff(i, j)))) *
             wij;
      count += wij;
    }
  return state.add(sum, count);
}

struct SquaredDifference {
  static constexpr const char* who = "hookfuse::metrics::MeanSquaredError";
  template <class C>
  C operator()(C a, C b) const {
    return (a - b) * (a - b);
  }
};
struct AbsoluteDifference {
  static constexpr const char* who = "hookfuse::metrics::MeanAbsoluteError";
  template <class C>
  C operator()(C a, C b) const {
    return std::abs(b - a);
  }
};

}  // namespace detail

/// The streaming mean of Difference(labels, predictions) over every element (all rows and
/// columns), as Mean: MeanSquaredError and MeanAbsoluteError. `labels` and `predictions`
/// [batch, k] of the same shape (ValueError otherwise, nothing updated); `weights` as for Mean.
template <class Difference>
class MeanOfDifference : public detail::TotalCountMetric {
 public:
  static constexpr int num_inputs = 2;

  template <detail::ArithmeticMatrix L, detail::ArithmeticMatrix P>
  float update(const Eigen::MatrixBase<L>& labels, const Eigen::MatrixBase<P>& predictions) {
    const detail::Nested<L> l(labels.derived());
    const detail::Nested<P> p(predictions.derived());
    return detail::mean_of_elementwise(state_, Difference::who, l, p, Difference{});
  }
  template <detail::ArithmeticMatrix L, detail::ArithmeticMatrix P, detail::ArithmeticMatrix W>
  float update(const Eigen::MatrixBase<L>& labels, const Eigen::MatrixBase<P>& predictions,
               const Eigen::MatrixBase<W>& weights) {
    const detail::Nested<L> l(labels.derived());
    const detail::Nested<P> p(predictions.derived());
    const detail::Nested<W> w(weights.derived());
    return detail::mean_of_elementwise(state_, Difference::who, l, p, w, Difference{});
  }

};

/// tf.compat.v1.metrics.mean_squared_error(labels, predictions, weights): the mean of
/// squared_difference(labels, predictions) over every element (MeanOfDifference).
using MeanSquaredError = MeanOfDifference<detail::SquaredDifference>;
/// tf.compat.v1.metrics.mean_absolute_error(labels, predictions, weights): the mean of
/// abs(predictions - labels) over every element (MeanOfDifference).
using MeanAbsoluteError = MeanOfDifference<detail::AbsoluteDifference>;

/// tf.compat.v1.metrics.accuracy(labels, predictions, weights): the streaming mean of
/// is_correct = cast(equal(cast(predictions, labels.dtype), labels), float32), so over several
/// batches it is (correct examples) / (examples), not the mean of the batch accuracies.
///   - labels [batch, k] and predictions of the same shape: element by element (class ids, or
///     any values compared for equality after TF's cast of the prediction to the label's type);
///   - labels [batch, 1] and predictions [batch, classes] (classes > 1): the row's arg-max (the
///     first maximum, as tf.argmax) is the predicted class id.
/// Any arithmetic scalar types. Rows that differ, or any other pair of shapes, throw ValueError
/// naming both shapes, and nothing is updated. `weights` as for Mean, broadcast to is_correct
/// ([batch, 1] in the arg-max form).
class Accuracy : public detail::TotalCountMetric {
 public:
  static constexpr int num_inputs = 2;

  template <detail::ArithmeticMatrix L, detail::ArithmeticMatrix P>
  float update(const Eigen::MatrixBase<L>& labels, const Eigen::MatrixBase<P>& predictions) {
    const detail::Nested<L> l(labels.derived());
    const detail::Nested<P> p(predictions.derived());
    const Eigen::Index cols = checked_cols(l, p);
    const float correct =
        count_correct(l, p, cols, [](Eigen::Index, Eigen::Index) { return 1.0f; });
    return state_.add(correct, static_cast<float>(l.rows() * cols));
  }
  template <detail::ArithmeticMatrix L, detail::ArithmeticMatrix P, detail::ArithmeticMatrix W>
  float update(const Eigen::MatrixBase<L>& labels, const Eigen::MatrixBase<P>& predictions,
               const Eigen::MatrixBase<W>& weights) {
    const detail::Nested<L> l(labels.derived());
    const detail::Nested<P> p(predictions.derived());
    const detail::Nested<W> w(weights.derived());
    const Eigen::Index cols = checked_cols(l, p);
    detail::check_weights(who, w, l.rows(), cols);
    float count = 0.0f;
    for (Eigen::Index i = 0; i < l.rows(); ++i)
      for (Eigen::Index j = 0; j < cols; ++j) count += detail::weight_at(w, i, j);
    const float correct = count_correct(
        l, p, cols, [&w](Eigen::Index i, Eigen::Index j) { return detail::weight_at(w, i, j); });
    return state_.add(correct, count);
  }

 private:
  static constexpr const char* who = "hookfuse::metrics::Accuracy";

  // The columns of is_correct: 1 in the arg-max form (labels [batch, 1], predictions
  // [batch, classes > 1]), else the labels' (same shape as the predictions). ValueError otherwise.
  template <class L, class P>
  static Eigen::Index checked_cols(const L& l, const P& p) {
    if (l.cols() == 1 && p.cols() > 1) {
      detail::check_rows(who, "labels", l.rows(), "predictions", p.rows());
      return 1;
    }
    detail::check_same_shape(who, l, p);
    return l.cols();
  }

  // sum(is_correct * weight(i, j)) over the batch, in float32.
  template <class L, class P, class Wf>
  static float count_correct(const L& l, const P& p, Eigen::Index cols, Wf weight) {
    const bool by_argmax = l.cols() == 1 && p.cols() > 1;
    float sum = 0.0f;
    for (Eigen::Index i = 0; i < l.rows(); ++i)
      for (Eigen::Index j = 0; j < cols; ++j) {
        const bool correct = by_argmax ? detail::cast_equal(l.coeff(i, 0), detail::row_argmax(p, i))
                                       : detail::cast_equal(l.coeff(i, j), p.coeff(i, j));
        if (correct) sum += weight(i, j);
      }
    return sum;
  }
};

}  // namespace hookfuse::metrics
