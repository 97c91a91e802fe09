// hookfuse/metrics/mean_per_class_accuracy.hpp: the streaming mean of the per-class accuracies
// (tf.compat.v1.metrics.mean_per_class_accuracy, metrics_impl.py).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hookfuse/autodiff/reduce_ops.hpp"  // InvalidArgumentError
#include "hookfuse/detail/eigen.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/metrics/detail/inputs.hpp"

namespace hookfuse::metrics {

/// tf.compat.v1.metrics.mean_per_class_accuracy(labels, predictions, num_classes): two float32
/// local variables of num_classes entries, `total` (examples whose label is c) and `count` (of
/// those, the correctly predicted), and the value
///   mean over c in [0, num_classes) of div_no_nan(count[c], total[c])
/// so, as in TensorFlow, a class no label has named yet counts as accuracy 0 in the mean. 0
/// before any update.
///
/// `labels` [batch, k] of class ids (any arithmetic scalar, cast to int64 as TF does: a float
/// label truncates toward zero) and `predictions` of the same shape (ids, cast to the labels'
/// type and compared, as Accuracy), or labels [batch, 1] with predictions [batch, classes > 1]:
/// then the row's arg-max (first maximum) is the predicted id. A prediction outside the classes
/// is simply wrong. Throws ValueError for num_classes < 1 (construction) and for shapes that do
/// not match; InvalidArgumentError naming the element for a label outside [0, num_classes) (TF's
/// scatter_add rejects the index). A batch that throws leaves the counts unchanged.
///
/// update() returns the mean, like value(); TF's update_op returns the per-class vector, which
/// is per_class_accuracy() here.
class MeanPerClassAccuracy {
 public:
  static constexpr int num_inputs = 2;

  explicit MeanPerClassAccuracy(int num_classes) {
    if (num_classes < 1)
      hookfuse::detail::fail<ValueError>(
          (hookfuse::detail::ErrorMessage()
           << "hookfuse::metrics::MeanPerClassAccuracy: num_classes must be at least 1, got "
           << num_classes)
              .str());
    total_.assign(static_cast<std::size_t>(num_classes), 0.0f);
    count_.assign(static_cast<std::size_t>(num_classes), 0.0f);
  }

  template <detail::ArithmeticMatrix L, detail::ArithmeticMatrix P>
  float update(const Eigen::MatrixBase<L>& labels, const Eigen::MatrixBase<P>& predictions) {
    static constexpr const char* who = "hookfuse::metrics::MeanPerClassAccuracy";
    const detail::Nested<L> l(labels.derived());
    const detail::Nested<P> p(predictions.derived());
    const bool by_argmax = l.cols() == 1 && p.cols() > 1;
    if (by_argmax)
      detail::check_rows(who, "labels", l.rows(), "predictions", p.rows());
    else
      detail::check_same_shape(who, l, p);
    const auto classes = static_cast<std::int64_t>(total_.size());
    for (Eigen::Index i = 0; i < l.rows(); ++i)
      for (Eigen::Index j = 0; j < l.cols(); ++j) {
        std::int64_t id = 0;
        if (!detail::to_class_id(l.coeff(i, j), id) || id < 0 || id >= classes)
          bad_label(l.coeff(i, j), i, j);
      }
    for (Eigen::Index i = 0; i < l.rows(); ++i)
      for (Eigen::Index j = 0; j < l.cols(); ++j) {
        std::int64_t id = 0;
        detail::to_class_id(l.coeff(i, j), id);
        const bool correct = by_argmax ? detail::cast_equal(l.coeff(i, 0), detail::row_argmax(p, i))
                                       : detail::cast_equal(l.coeff(i, j), p.coeff(i, j));
        total_[static_cast<std::size_t>(id)] += 1.0f;
        if (correct) count_[static_cast<std::size_t>(id)] += 1.0f;
      }
    return value();
  }

  /// The mean over all num_classes classes of count / total (0 for a class with total 0).
  [[nodiscard]] float value() const {
    float sum = 0.0f;
    for (std::size_t c = 0; c < total_.size(); ++c) sum += per_class(c);
    return sum / static_cast<float>(total_.size());
  }
  /// Each class's accuracy, count / total (0 where total is 0): what TF's update_op returns.
  [[nodiscard]] std::vector<float> per_class_accuracy() const {
    std::vector<float> out(total_.size());
    for (std::size_t c = 0; c < total_.size(); ++c) out[c] = per_class(c);
    return out;
  }
  void reset() {
    std::fill(total_.begin(), total_.end(), 0.0f);
    std::fill(count_.begin(), count_.end(), 0.0f);
  }

  /// The local variables, total then count, each a span of num_classes float32 counts
  /// (metrics/reduce.hpp).
  template <class F>
  void for_each_local_variable(F&& f) {
    f(std::span<float>(total_));
    f(std::span<float>(count_));
  }

  [[nodiscard]] int num_classes() const { return static_cast<int>(total_.size()); }
  /// The local variables: examples per label class, and those predicted correctly.
  [[nodiscard]] const std::vector<float>& total() const { return total_; }
  [[nodiscard]] const std::vector<float>& count() const { return count_; }

 private:
  template <class S>
  [[noreturn]] void bad_label(S label, Eigen::Index i, Eigen::Index j) const {
    hookfuse::detail::ErrorMessage m;
    m << "hookfuse::metrics::MeanPerClassAccuracy: labels(" << i << ", " << j << ") = ";
    detail::append_value(m, label);
    m << ", outside the valid range [0, " << num_classes() << ")";
    hookfuse::detail::fail<InvalidArgumentError>(m.str());
  }

  [[nodiscard]] float per_class(std::size_t c) const {
    return total_[c] > 0.0f ? count_[c] / total_[c] : 0.0f;
  }

  std::vector<float> total_;
  std::vector<float> count_;
};

}  // namespace hookfuse::metrics
