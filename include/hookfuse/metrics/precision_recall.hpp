// hookfuse/metrics/precision_recall.hpp: streaming binary precision and recall
// (tf.compat.v1.metrics.precision and recall, metrics_impl.py), from float32 counts of true
// positives, false positives and false negatives.
#pragma once

#include <span>
#include <type_traits>

#include "hookfuse/detail/eigen.hpp"
#include "hookfuse/metrics/detail/inputs.hpp"

namespace hookfuse::metrics {
namespace detail {

/// The batch's true positives, false positives and false negatives, labels and predictions
/// cast to bool as TF does (nonzero, NaN included, is true), as float32 sums (TF's
/// _count_condition: reduce_sum of the cast conditions).
struct BinaryCounts {
  float tp = 0.0f;
  float fp = 0.0f;
  float fn = 0.0f;
};

template <class L, class P>
BinaryCounts binary_counts(const char* who, const L& labels, const P& predictions) {
  check_same_shape(who, labels, predictions);
  BinaryCounts c;
  for (Eigen::Index i = 0; i < labels.rows(); ++i)
    for (Eigen::Index j = 0; j < labels.cols(); ++j) {
      const bool label = labels.coeff(i, j) != typename L::Scalar{};
      const bool predicted = predictions.coeff(i, j) != typename P::Scalar{};
      if (label && predicted) c.tp += 1.0f;
      if (!label && predicted) c.fp += 1.0f;
      if (label && !predicted) c.fn += 1.0f;
    }
  return c;
}

/// TF's compute_precision / compute_recall: where(a + b > 0, a / (a + b), 0).
inline float ratio_or_zero(float a, float b) { return a + b > 0.0f ? a / (a + b) : 0.0f; }

}  // namespace detail

namespace detail {
/// Which count Precision (false positives) or Recall (false negatives) sets against the true
/// positives.
struct FalsePositives {
  static constexpr const char* who = "hookfuse::metrics::Precision";
  static float of(const BinaryCounts& c) { return c.fp; }
};
struct FalseNegatives {
  static constexpr const char* who = "hookfuse::metrics::Recall";
  static float of(const BinaryCounts& c) { return c.fn; }
};
}  // namespace detail

/// true_positives / (true_positives + Other), 0 while that sum is 0 (TF's `where(tp + other >
/// 0, tp / (tp + other), 0)`): Precision (Other: false positives) and Recall (false
/// negatives). `labels` and `predictions` [batch, k] of one shape, any arithmetic scalars, both
/// cast to bool (nonzero is true: threshold probabilities before calling, e.g.
/// `(p.array() > 0.5f)`). Different shapes throw ValueError, nothing updated. The two counts are
/// float32 local variables, as TF's.
template <class Other>
class BinaryRatio {
 public:
  static constexpr int num_inputs = 2;

  template <detail::ArithmeticMatrix L, detail::ArithmeticMatrix P>
  float update(const Eigen::MatrixBase<L>& labels, const Eigen::MatrixBase<P>& predictions) {
    const detail::Nested<L> l(labels.derived());
    const detail::Nested<P> p(predictions.derived());
    const detail::BinaryCounts c = detail::binary_counts(Other::who, l, p);
    true_positives_ += c.tp;
    other_ += Other::of(c);
    return value();
  }

  [[nodiscard]] float value() const { return detail::ratio_or_zero(true_positives_, other_); }
  [[nodiscard]] float true_positives() const { return true_positives_; }
  /// The false positives (Precision) or false negatives (Recall) so far.
  [[nodiscard]] float false_positives()
      const requires std::is_same_v<Other, detail::FalsePositives> {
    return other_;
  }
  [[nodiscard]] float false_negatives()
      const requires std::is_same_v<Other, detail::FalseNegatives> {
    return other_;
  }
  void reset() { true_positives_ = other_ = 0.0f; }
  /// The local variables, true positives then the other count, each a span of one float32
  /// (metrics/reduce.hpp).
  template <class F>
  void for_each_local_variable(F&& f) {
    f(std::span<float>(&true_positives_, 1));
    f(std::span<float>(&other_, 1));
  }

 private:
  float true_positives_ = 0.0f;
  float other_ = 0.0f;
};

/// tf.compat.v1.metrics.precision(labels, predictions): tp / (tp + fp) (BinaryRatio).
using Precision = BinaryRatio<detail::FalsePositives>;
/// tf.compat.v1.metrics.recall(labels, predictions): tp / (tp + fn), 0 while no positive label
/// was seen (BinaryRatio).
using Recall = BinaryRatio<detail::FalseNegatives>;

}  // namespace hookfuse::metrics
