// hookfuse/metrics/auc.hpp: the streaming area under the ROC or precision-recall curve of
// tf.compat.v1.metrics.auc (metrics_impl.py: auc and _confusion_matrix_at_thresholds), with
// TensorFlow's thresholds and its trapezoidal summation.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "hookfuse/autodiff/reduce_ops.hpp"  // InvalidArgumentError
#include "hookfuse/detail/eigen.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/metrics/detail/inputs.hpp"

namespace hookfuse::metrics {

/// The curve whose area AUC computes: TF's curve='ROC' (true positive rate against false positive
/// rate) or curve='PR' (precision against recall).
enum class Curve { ROC, PR };

/// tf.compat.v1.metrics.auc(labels, predictions, num_thresholds, curve) with its default
/// summation_method='trapezoidal'.
///
/// Thresholds, as TF builds them: `[0 - 1e-7] + [(i + 1) / (num_thresholds - 1) for i in
/// range(num_thresholds - 2)] + [1 + 1e-7]`, in double, stored as float32 (TF's constant). Four
/// float32 local variables of num_thresholds counts each: at threshold t, a prediction p is
/// positive when p > t (both float32), giving true positives, false negatives, true negatives
/// and false positives. The value, recomputed from the counts after each update, is TF's:
///   rec = (tp + 1e-6) / (tp + fn + 1e-6)
///   ROC: x = fp / (fp + tn + 1e-6), y = rec;   PR: x = rec, y = (tp + 1e-6) / (tp + fp + 1e-6)
///   auc = sum_i (x[i] - x[i + 1]) * (y[i] + y[i + 1]) / 2      (float32 throughout)
/// so it approximates the exact area to within the thresholds' spacing, and is 0 before any
/// update. TF logs a warning that the trapezoidal rule misestimates PR-AUCs; the value here is
/// the same number, without the warning.
///
/// `labels` and `predictions` [batch, k] of one shape: labels cast to bool (nonzero is
/// positive), predictions any arithmetic scalar in [0, 1], cast to float32. Throws ValueError
/// for different shapes and for num_thresholds < 2 at construction; InvalidArgumentError naming
/// the element for a prediction outside [0, 1] or NaN (TF's assert "predictions must be in
/// [0, 1]"). A batch that throws leaves the counts unchanged.
class AUC {
 public:
  static constexpr int num_inputs = 2;

  explicit AUC(int num_thresholds = 200, Curve curve = Curve::ROC) : curve_(curve) {
    if (num_thresholds < 2)
      hookfuse::detail::fail<ValueError>(
          (hookfuse::detail::ErrorMessage()
           << "hookfuse::metrics::AUC: num_thresholds must be at least 2 (the endpoints "
              "-1e-7 and 1 + 1e-7), got "
           << num_thresholds)
              .str());
    const auto n = static_cast<std::size_t>(num_thresholds);
    thresholds_.reserve(n);
    constexpr double kepsilon = 1e-7;
    thresholds_.push_back(static_cast<float>(0.0 - kepsilon));
    for (int i = 0; i < num_thresholds - 2; ++i)
      thresholds_.push_back(static_cast<float>((i + 1) * 1.0 / (num_thresholds - 1)));
    thresholds_.push_back(static_cast<float>(1.0 + kepsilon));
    tp_.assign(n, 0.0f);
    fn_.assign(n, 0.0f);
    tn_.assign(n, 0.0f);
    fp_.assign(n, 0.0f);
    above_.assign(n + 1, BucketCounts{});
  }

  template <detail::ArithmeticMatrix L, detail::ArithmeticMatrix P>
  float update(const Eigen::MatrixBase<L>& labels, const Eigen::MatrixBase<P>& predictions) {
    static constexpr const char* who = "hookfuse::metrics::AUC";
    const detail::Nested<L> l(labels.derived());
    const detail::Nested<P> p(predictions.derived());
    detail::check_same_shape(who, l, p);
    for (Eigen::Index i = 0; i < p.rows(); ++i)
      for (Eigen::Index j = 0; j < p.cols(); ++j) {
        // In the predictions' own type, as TF's assert runs before its cast to float32.
        using Ps = typename P::Scalar;
        const Ps v = p.coeff(i, j);
        bool in_range = true;
        if constexpr (!std::is_same_v<Ps, bool>) in_range = v >= Ps(0) && v <= Ps(1);
        if (!in_range) {
          hookfuse::detail::ErrorMessage m;
          m << who << ": predictions must be in [0, 1], got predictions(" << i << ", " << j
            << ") = ";
          detail::append_value(m, v);
          hookfuse::detail::fail<InvalidArgumentError>(m.str());
        }
      }
    // A prediction is above exactly the thresholds before the first one >= it (sorted
    // thresholds): count the batch's positives and negatives by that number k, then
    // tp[t] = positives with k > t, fn[t] = the other positives (likewise fp, tn).
    std::fill(above_.begin(), above_.end(), BucketCounts{});
    std::int64_t positives = 0;
    std::int64_t negatives = 0;
    for (Eigen::Index i = 0; i < p.rows(); ++i)
      for (Eigen::Index j = 0; j < p.cols(); ++j) {
        const auto v = static_cast<float>(p.coeff(i, j));
        const auto k = static_cast<std::size_t>(
            std::lower_bound(thresholds_.begin(), thresholds_.end(), v) - thresholds_.begin());
        if (l.coeff(i, j) != typename L::Scalar{}) {
          ++above_[k].positives;
          ++positives;
        } else {
          ++above_[k].negatives;
          ++negatives;
        }
      }
    std::int64_t pos_above = 0;  // positives above threshold t: k > t
    std::int64_t neg_above = 0;
    for (std::size_t t = thresholds_.size(); t-- > 0;) {
      pos_above += above_[t + 1].positives;
      neg_above += above_[t + 1].negatives;
      tp_[t] += static_cast<float>(pos_above);
      fn_[t] += static_cast<float>(positives - pos_above);
      fp_[t] += static_cast<float>(neg_above);
      tn_[t] += static_cast<float>(negatives - neg_above);
    }
    return value();
  }

  /// The area under the curve from the counts so far (TF's compute_auc); 0 before any update.
  [[nodiscard]] float value() const {
    constexpr float epsilon = 1.0e-6f;
    const std::size_t n = thresholds_.size();
    auto x = [&](std::size_t t) {
      return curve_ == Curve::ROC ? fp_[t] / (fp_[t] + tn_[t] + epsilon)
                                  : (tp_[t] + epsilon) / (tp_[t] + fn_[t] + epsilon);
    };
    auto y = [&](std::size_t t) {
      return curve_ == Curve::ROC ? (tp_[t] + epsilon) / (tp_[t] + fn_[t] + epsilon)
                                  : (tp_[t] + epsilon) / (tp_[t] + fp_[t] + epsilon);
    };
    float sum = 0.0f;
    for (std::size_t t = 0; t + 1 < n; ++t) sum += (x(t) - x(t + 1)) * ((y(t) + y(t + 1)) / 2.0f);
    return sum;
  }

  void reset() {
    std::fill(tp_.begin(), tp_.end(), 0.0f);
    std::fill(fn_.begin(), fn_.end(), 0.0f);
    std::fill(tn_.begin(), tn_.end(), 0.0f);
    std::fill(fp_.begin(), fp_.end(), 0.0f);
  }

  /// The local variables, true positives, false negatives, true negatives, false positives,
  /// each a span of num_thresholds float32 counts (metrics/reduce.hpp).
  template <class F>
  void for_each_local_variable(F&& f) {
    f(std::span<float>(tp_));
    f(std::span<float>(fn_));
    f(std::span<float>(tn_));
    f(std::span<float>(fp_));
  }

  [[nodiscard]] int num_thresholds() const { return static_cast<int>(thresholds_.size()); }
  [[nodiscard]] Curve curve() const { return curve_; }
  /// The thresholds (float32, increasing) and the four local variables, one count per
  /// threshold, as TF's auc/true_positives, false_negatives, true_negatives, false_positives.
  [[nodiscard]] const std::vector<float>& thresholds() const { return thresholds_; }
  [[nodiscard]] const std::vector<float>& true_positives() const { return tp_; }
  [[nodiscard]] const std::vector<float>& false_negatives() const { return fn_; }
  [[nodiscard]] const std::vector<float>& true_negatives() const { return tn_; }
  [[nodiscard]] const std::vector<float>& false_positives() const { return fp_; }

 private:
  struct BucketCounts {
    std::int64_t positives = 0;
    std::int64_t negatives = 0;
  };

  Curve curve_;
  std::vector<float> thresholds_;
  std::vector<float> tp_, fn_, tn_, fp_;
  std::vector<BucketCounts> above_;  // scratch of update(), kept to allocate once
};

}  // namespace hookfuse::metrics
