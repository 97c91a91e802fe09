// tests/test_metrics.cpp: the streaming metrics against tf.compat.v1.metrics
// (tensorflow/python/ops/metrics_impl.py), with expected values worked out by hand or by
// scikit-learn and tests/metrics/auc_reference.py, never taken from the code under test.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "hookfuse/autodiff/reduce_ops.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/metrics.hpp"

using hookfuse::InvalidArgumentError;
using hookfuse::ValueError;
using hookfuse::metrics::Accuracy;
using hookfuse::metrics::AUC;
using hookfuse::metrics::Curve;
using hookfuse::metrics::Mean;
using hookfuse::metrics::MeanAbsoluteError;
using hookfuse::metrics::MeanPerClassAccuracy;
using hookfuse::metrics::MeanSquaredError;
using hookfuse::metrics::Precision;
using hookfuse::metrics::Recall;
using hookfuse_test::error_of;

static_assert(hookfuse::metrics::Metric<Accuracy>);
static_assert(hookfuse::metrics::Metric<Mean>);
static_assert(hookfuse::metrics::Metric<MeanSquaredError>);
static_assert(hookfuse::metrics::Metric<MeanAbsoluteError>);
static_assert(hookfuse::metrics::Metric<Precision>);
static_assert(hookfuse::metrics::Metric<Recall>);
static_assert(hookfuse::metrics::Metric<AUC>);
static_assert(hookfuse::metrics::Metric<MeanPerClassAccuracy>);
static_assert(Mean::num_inputs == 1 && Accuracy::num_inputs == 2 && AUC::num_inputs == 2);

namespace {

Eigen::VectorXi ints(std::initializer_list<int> v) {
  Eigen::VectorXi m(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (int x : v) m(i++) = x;
  return m;
}

Eigen::VectorXf floats(std::initializer_list<float> v) {
  Eigen::VectorXf m(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (float x : v) m(i++) = x;
  return m;
}

}  // namespace

// accuracy():  is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
//              return mean(is_correct, weights, ...)
// mean():      update_total_op = state_ops.assign_add(total, math_ops.reduce_sum(values))
//              update_count_op = state_ops.assign_add(count, num_values)
//              update_op = math_ops.div_no_nan(
//                  update_total_op, math_ops.maximum(update_count_op, 0), name="update_op")
TEST_CASE("Accuracy: streams correct / examples over batches, not the mean of batch accuracies",
          "[metrics]") {
  Accuracy acc;
  CHECK(acc.value() == 0.0f);  // div_no_nan(0, 0)
  // Batch 1: 2 of 3 correct; the update returns the updated value.
  CHECK(acc.update(ints({1, 2, 3}), ints({0, 2, 3})) == Approx(2.0 / 3.0));
  // Batch 2: 1 of 2 correct. 3 of 5 overall: 0.6, not (2/3 + 1/2) / 2 = 0.58333.
  const float after = acc.update(ints({1, 1}), ints({1, 0}));
  CHECK(after == Approx(0.6));
  CHECK(after != Approx(0.5833333));
  CHECK(acc.value() == after);
  CHECK(acc.total() == 3.0f);
  CHECK(acc.count() == 5.0f);
  acc.reset();
  CHECK(acc.value() == 0.0f);
  CHECK(acc.count() == 0.0f);
  CHECK(acc.update(ints({4}), ints({4})) == 1.0f);
}

TEST_CASE("Accuracy: predictions [batch, classes] give the row's first arg-max", "[metrics]") {
  Accuracy acc;
  Eigen::MatrixXf logits(3, 3);
  logits << 0.1f, 0.2f, 0.7f,  // arg-max 2
      0.5f, 0.5f, 0.0f,        // tie: tf.argmax gives the first, 0
      0.3f, 0.3f, 0.3f;        // all equal: 0
  CHECK(acc.update(ints({2, 0, 1}), logits) == Approx(2.0 / 3.0));
  // Row-major logits and double labels work the same.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm = logits.cast<double>();
  Eigen::VectorXd labels(3);
  labels << 2.0, 1.0, 0.0;
  Accuracy acc2;
  CHECK(acc2.update(labels, rm) == Approx(2.0 / 3.0));
}

TEST_CASE("Accuracy: the prediction is cast to the label's type, then compared", "[metrics]") {
  // accuracy(): if labels.dtype != predictions.dtype:
  //               predictions = math_ops.cast(predictions, labels.dtype)
  Accuracy acc;
  Eigen::VectorXd p(4);
  p << 2.7, -0.5, std::numeric_limits<double>::quiet_NaN(), 1e30;
  // int32 labels: 2.7 -> 2 (right), -0.5 -> 0 (right), NaN and 1e30 equal no int label.
  CHECK(acc.update(ints({2, 0, 0, 0}), p) == Approx(0.5));
}

TEST_CASE("Accuracy: weights weigh is_correct and the count", "[metrics]") {
  Accuracy acc;
  // correct: 0, 1, 1 with weights 2, 1, 1: 2 / 4
  CHECK(acc.update(ints({1, 2, 3}), ints({0, 2, 3}), floats({2.0f, 1.0f, 1.0f})) == Approx(0.5));
  // A [1, 1] weight broadcasts: +3 * 1 correct of +3 * 1
  Eigen::MatrixXf w(1, 1);
  w << 3.0f;
  CHECK(acc.update(ints({5}), ints({5}), w) == Approx(5.0 / 7.0));
}

TEST_CASE("Mean: total / count over every element, float32 state", "[metrics]") {
  Mean mean;
  CHECK(mean.value() == 0.0f);
  CHECK(mean.update(floats({1.0f, 2.0f, 3.0f, 4.0f})) == 2.5f);
  Eigen::MatrixXi m(1, 1);
  m << 10;
  CHECK(mean.update(m) == 4.0f);  // (10 + 10) / 5
  Eigen::MatrixXd two_cols(2, 2);
  two_cols << 1.0, 2.0, 3.0, 4.0;  // every element counts: +10 / +4
  CHECK(mean.update(two_cols) == Approx(30.0 / 9.0));
  CHECK(mean.count() == 9.0f);
  // mean(): values = math_ops.cast(values, dtypes.float32) before the sum
  Mean tenth;
  Eigen::VectorXd v(1);
  v << 0.1;
  tenth.update(v);
  CHECK(tenth.total() == 0.1f);
  mean.reset();
  CHECK(mean.value() == 0.0f);
}

TEST_CASE("Mean: weights broadcast to the values, their sum is the count", "[metrics]") {
  // mean(): values = math_ops.multiply(values, weights); num_values = math_ops.reduce_sum(weights)
  Mean mean;
  CHECK(mean.update(floats({1.0f, 2.0f, 3.0f}), floats({1.0f, 0.0f, 1.0f})) == 2.0f);  // 4 / 2
  Eigen::MatrixXf values(2, 2);
  values << 1.0f, 2.0f, 3.0f, 4.0f;
  Eigen::MatrixXf per_column(1, 2);
  per_column << 0.0f, 1.0f;  // only the second column: 2 + 4 over 2 more
  CHECK(mean.update(values, per_column) == Approx(10.0 / 4.0));
  // All weights 0: the count stays 0 and the value is div_no_nan's 0.
  Mean masked;
  CHECK(masked.update(floats({5.0f}), floats({0.0f})) == 0.0f);
}

// mean_squared_error():  squared_error = math_ops.squared_difference(labels, predictions)
// mean_absolute_error(): absolute_errors = math_ops.abs(predictions - labels)
TEST_CASE("MeanSquaredError and MeanAbsoluteError: streaming means of the element errors",
          "[metrics]") {
  MeanSquaredError mse;
  MeanAbsoluteError mae;
  CHECK(mse.value() == 0.0f);
  CHECK(mae.value() == 0.0f);
  const Eigen::VectorXf labels = floats({1.0f, 2.0f, 3.0f});
  const Eigen::VectorXf predictions = floats({1.5f, 2.0f, 1.0f});
  // squared errors 0.25, 0, 4: 4.25 / 3; absolute 0.5, 0, 2: 2.5 / 3
  CHECK(mse.update(labels, predictions) == Approx(4.25 / 3.0));
  CHECK(mae.update(labels, predictions) == Approx(2.5 / 3.0));
  // then one more error of 2: (4.25 + 4) / 4 and (2.5 + 2) / 4
  CHECK(mse.update(floats({0.0f}), floats({2.0f})) == Approx(2.0625));
  CHECK(mae.update(floats({0.0f}), floats({2.0f})) == Approx(1.125));
  // Every element of a [batch, k] pair, int labels against double predictions.
  Eigen::MatrixXi l(2, 2);
  l << 0, 1, 2, 3;
  Eigen::MatrixXd p(2, 2);
  p << 1.0, 1.0, 2.0, 1.0;  // errors 1, 0, 0, 2
  MeanSquaredError mse2;
  MeanAbsoluteError mae2;
  CHECK(mse2.update(l, p) == Approx(5.0 / 4.0));
  CHECK(mae2.update(l, p) == Approx(3.0 / 4.0));
  // weights: only the first row
  MeanSquaredError mse3;
  Eigen::MatrixXf w(2, 1);
  w << 1.0f, 0.0f;
  CHECK(mse3.update(l, p, w) == Approx(0.5));
  mse.reset();
  CHECK(mse.value() == 0.0f);
}

// precision(): compute_precision = array_ops.where(math_ops.greater(tp + fp, 0),
//                                                  math_ops.divide(tp, tp + fp), 0, name)
// recall():    compute_recall = array_ops.where(math_ops.greater(true_p + false_n, 0),
//                                               math_ops.divide(true_p, true_p + false_n), 0, ...)
TEST_CASE("Precision and Recall: binary counts, 0 while the denominator is 0", "[metrics]") {
  Precision precision;
  Recall recall;
  CHECK(precision.value() == 0.0f);
  CHECK(recall.value() == 0.0f);
  // labels 1 0 1 1 0, predictions 1 1 0 0 0: tp 1 (first), fp 1 (second), fn 2 (third, fourth)
  const Eigen::VectorXi labels = ints({1, 0, 1, 1, 0});
  const Eigen::VectorXi predictions = ints({1, 1, 0, 0, 0});
  CHECK(precision.update(labels, predictions) == Approx(0.5));
  CHECK(recall.update(labels, predictions) == Approx(1.0 / 3.0));
  // Cast to bool: any nonzero is true (-2 label, 0.3 prediction). tp +1: 2/3 and 2/4.
  Eigen::VectorXf p(1);
  p << 0.3f;
  Eigen::VectorXi l(1);
  l << -2;
  CHECK(precision.update(l, p) == Approx(2.0 / 3.0));
  CHECK(recall.update(l, p) == Approx(0.5));
  CHECK(precision.true_positives() == 2.0f);
  CHECK(precision.false_positives() == 1.0f);
  CHECK(recall.false_negatives() == 2.0f);

  // Denominator 0: nothing predicted positive (precision), no positive label (recall).
  Precision none_predicted;
  CHECK(none_predicted.update(ints({1, 1, 0}), ints({0, 0, 0})) == 0.0f);
  Recall no_positive;
  CHECK(no_positive.update(ints({0, 0, 0}), ints({1, 0, 1})) == 0.0f);
  precision.reset();
  recall.reset();
  CHECK(precision.value() == 0.0f);
  CHECK(recall.value() == 0.0f);
}

// The fixed case of tests/metrics/auc_reference.py (10 positives, 10 negatives).
namespace {

const std::vector<int> kAucLabels = {0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0};
const std::vector<float> kAucPredictions = {0.10f, 0.40f,  0.35f,  0.80f, 0.05f,  0.65f,  0.30f,
                                            0.90f, 0.502f, 0.498f, 0.70f, 0.252f, 0.255f, 0.60f,
                                            0.15f, 1.00f,  0.45f,  0.00f, 0.85f,  0.75f};

Eigen::VectorXi auc_labels(std::size_t from, std::size_t to) {
  Eigen::VectorXi m(static_cast<Eigen::Index>(to - from));
  for (std::size_t i = from; i < to; ++i) m(static_cast<Eigen::Index>(i - from)) = kAucLabels[i];
  return m;
}
Eigen::VectorXf auc_predictions(std::size_t from, std::size_t to) {
  Eigen::VectorXf m(static_cast<Eigen::Index>(to - from));
  for (std::size_t i = from; i < to; ++i)
    m(static_cast<Eigen::Index>(i - from)) = kAucPredictions[i];
  return m;
}

// Output of `/usr/bin/python3 tests/metrics/auc_reference.py` (scikit-learn 1.2.1, Debian's
// python3-sklearn):
//   roc_auc_score            0.840000000
//   pr_auc_trapezoidal       0.847367910
//   average_precision_score  0.855450105
//   tf_auc_roc_200           0.829999934
//   tf_auc_pr_200            0.841395620
//   roc_bound                0.020010000
//   pr_bound                 0.011954444
//   tf_auc_roc_3             0.749999950
//   tf_auc_pr_3              0.813888824
constexpr double kSklearnRoc = 0.840000000;
constexpr double kSklearnPrTrapezoidal = 0.847367910;
constexpr double kSklearnAveragePrecision = 0.855450105;
constexpr double kTfRoc200 = 0.829999934;
constexpr double kTfPr200 = 0.841395620;
constexpr double kRocBound = 0.020010000;
constexpr double kPrBound = 0.011954444;
constexpr double kTfRoc3 = 0.749999950;
constexpr double kTfPr3 = 0.813888824;

// The script's TF values are computed in double; AUC sums float32 terms. At most 21 of the
// 199 terms are nonzero here (x changes only at the 20 predictions' buckets), each a few float32
// operations (relative error 6e-8 each) on numbers at most 1, plus the rounding of 21 additions:
// well under 2e-6.
constexpr double kFloat32Margin = 2e-6;

}  // namespace

// auc(): thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
//        thresholds = [0.0 - kepsilon] + thresholds + [1.0 + kepsilon]
//        rec = math_ops.divide(tp + epsilon, tp + fn + epsilon)
//        fp_rate = math_ops.divide(fp, fp + tn + epsilon)
//        math_ops.reduce_sum(math_ops.multiply(x[: num_thresholds - 1] - x[1:],
//                                              (y[: num_thresholds - 1] + y[1:]) / 2.0))
// _confusion_matrix_at_thresholds(): pred_is_pos = math_ops.greater(predictions, thresholds)
TEST_CASE("AUC: ROC with 200 thresholds against scikit-learn and TF's formula", "[metrics]") {
  AUC roc;  // TF's defaults: 200 thresholds, ROC
  CHECK(roc.num_thresholds() == 200);
  CHECK(roc.curve() == Curve::ROC);
  CHECK(roc.value() == 0.0f);
  const float v = roc.update(auc_labels(0, 20), auc_predictions(0, 20));
  CHECK(v == roc.value());
  // TF's exact 200-threshold value, worked out by the script from TF's source.
  CHECK(v == Approx(kTfRoc200).margin(kFloat32Margin));
  // scikit-learn's exact area, within the 200-threshold approximation: two positives sit just
  // above a negative inside one threshold bucket each (0.502 / 0.498 and 0.255 / 0.252), which
  // TF counts as ties, 0.5 / (10 * 10) each below the exact 0.84; the script's bound (the boxes
  // of the curve's points sharing a bucket, plus 1e-5 for TF's epsilons) covers it.
  CHECK(std::abs(v - kSklearnRoc) <= kRocBound);
  CHECK(kSklearnRoc - v == Approx(0.01).margin(kFloat32Margin));
}

TEST_CASE("AUC: PR with 200 thresholds against scikit-learn and TF's formula", "[metrics]") {
  AUC pr(200, Curve::PR);
  CHECK(pr.value() == 0.0f);
  const float v = pr.update(auc_labels(0, 20), auc_predictions(0, 20));
  CHECK(v == Approx(kTfPr200).margin(kFloat32Margin));
  // TF's trapezoidal PR area approximates the trapezoidal area under sklearn's
  // precision_recall_curve, within the script's bound for the two shared buckets.
  CHECK(std::abs(v - kSklearnPrTrapezoidal) <= kPrBound);
  // average_precision_score is the step-wise area (no interpolation): not what TF computes; it
  // differs by more than the bucket bound.
  CHECK(std::abs(v - kSklearnAveragePrecision) > kPrBound);
}

TEST_CASE("AUC: TF's thresholds, coarse curves, streaming counts", "[metrics]") {
  AUC roc;
  const std::vector<float>& t = roc.thresholds();
  REQUIRE(t.size() == 200);
  CHECK(t.front() == static_cast<float>(0.0 - 1e-7));
  CHECK(t[1] == static_cast<float>(1.0 / 199.0));
  CHECK(t[198] == static_cast<float>(198.0 / 199.0));
  CHECK(t.back() == static_cast<float>(1.0 + 1e-7));
  CHECK(t.back() > 1.0f);  // a prediction of exactly 1 is below it, of exactly 0 above t[0]

  // Three thresholds (-1e-7, 0.5, 1 + 1e-7): the script's values for the same case.
  AUC roc3(3, Curve::ROC);
  AUC pr3(3, Curve::PR);
  CHECK(roc3.update(auc_labels(0, 20), auc_predictions(0, 20)) ==
        Approx(kTfRoc3).margin(kFloat32Margin));
  CHECK(pr3.update(auc_labels(0, 20), auc_predictions(0, 20)) ==
        Approx(kTfPr3).margin(kFloat32Margin));

  // Two batches (12 + 8 examples) add the same counts as one: the same value, exactly.
  CHECK(roc.update(auc_labels(0, 12), auc_predictions(0, 12)) != 0.0f);
  const float streamed = roc.update(auc_labels(12, 20), auc_predictions(12, 20));
  AUC once;
  CHECK(streamed == once.update(auc_labels(0, 20), auc_predictions(0, 20)));
  // At the lowest threshold every example is predicted positive: tp = 10, fp = 10.
  CHECK(roc.true_positives().front() == 10.0f);
  CHECK(roc.false_positives().front() == 10.0f);
  CHECK(roc.true_negatives().back() == 10.0f);
  CHECK(roc.false_negatives().back() == 10.0f);
  roc.reset();
  CHECK(roc.value() == 0.0f);
  CHECK(roc.true_positives().front() == 0.0f);
}

// mean_per_class_accuracy(): update_total_op = state_ops.scatter_add(total, labels, ones)
//                            update_count_op = state_ops.scatter_add(count, labels, is_correct)
//   per_class_accuracy = math_ops.div_no_nan(count, math_ops.maximum(total, 0))
//   mean_accuracy_v = math_ops.reduce_mean(per_class_accuracy)
TEST_CASE("MeanPerClassAccuracy: mean over classes of correct / examples", "[metrics]") {
  // Confusion (rows: label, columns: prediction):
  //   label 0: predicted 0, 1          -> 1 of 2
  //   label 1: predicted 1, 1, 0       -> 2 of 3
  //   label 2: predicted 0             -> 0 of 1
  MeanPerClassAccuracy m(3);
  CHECK(m.value() == 0.0f);
  const Eigen::VectorXi labels = ints({0, 0, 1, 1, 1, 2});
  const Eigen::VectorXi predictions = ints({0, 1, 1, 1, 0, 0});
  CHECK(m.update(labels, predictions) == Approx((0.5 + 2.0 / 3.0 + 0.0) / 3.0));
  const std::vector<float> per_class = m.per_class_accuracy();
  REQUIRE(per_class.size() == 3);
  CHECK(per_class[0] == 0.5f);
  CHECK(per_class[1] == Approx(2.0 / 3.0));
  CHECK(per_class[2] == 0.0f);
  CHECK(m.total() == std::vector<float>{2.0f, 3.0f, 1.0f});
  CHECK(m.count() == std::vector<float>{1.0f, 2.0f, 0.0f});
  // One more batch, label 2 predicted right: class 2 is 1 of 2.
  CHECK(m.update(ints({2}), ints({2})) == Approx((0.5 + 2.0 / 3.0 + 0.5) / 3.0));

  // A class no label has named counts as 0 in the mean (reduce_mean over all classes).
  MeanPerClassAccuracy four(4);
  CHECK(four.update(labels, predictions) == Approx((0.5 + 2.0 / 3.0 + 0.0 + 0.0) / 4.0));

  // Predictions [batch, classes]: the row's arg-max. Rows predict 0, 1, 1, 1, 0, 0 as above.
  Eigen::MatrixXf scores(6, 3);
  scores << 0.9f, 0.1f, 0.0f,  //
      0.2f, 0.7f, 0.1f,        //
      0.1f, 0.8f, 0.1f,        //
      0.3f, 0.6f, 0.1f,        //
      0.5f, 0.4f, 0.1f,        //
      0.4f, 0.3f, 0.3f;
  MeanPerClassAccuracy by_argmax(3);
  CHECK(by_argmax.update(labels, scores) == Approx((0.5 + 2.0 / 3.0 + 0.0) / 3.0));
  m.reset();
  CHECK(m.value() == 0.0f);
  CHECK(m.total() == std::vector<float>{0.0f, 0.0f, 0.0f});
}

TEST_CASE("metrics: rows that differ between labels and predictions are a ValueError",
          "[metrics][errors]") {
  const Eigen::VectorXi three = ints({1, 0, 1});
  const Eigen::VectorXi two = ints({1, 0});
  Accuracy acc;
  acc.update(ints({1}), ints({1}));
  const std::string msg = error_of<ValueError>([&] { acc.update(three, two); });
  CHECK_THAT(msg, Catch::Contains("hookfuse::metrics::Accuracy") &&
                      Catch::Contains("labels have 3 rows, predictions 2"));
  CHECK(acc.value() == 1.0f);  // nothing updated
  CHECK(acc.count() == 1.0f);
  Eigen::MatrixXf logits(2, 3);
  logits.setZero();
  CHECK_THROWS_AS(acc.update(three, logits), ValueError);  // arg-max form checks rows too

  MeanSquaredError mse;
  CHECK_THROWS_WITH(mse.update(three, two), Catch::Contains("MeanSquaredError"));
  MeanAbsoluteError mae;
  CHECK_THROWS_AS(mae.update(three, two), ValueError);
  Precision precision;
  CHECK_THROWS_WITH(precision.update(three, two), Catch::Contains("Precision"));
  Recall recall;
  CHECK_THROWS_AS(recall.update(three, two), ValueError);
  AUC auc;
  CHECK_THROWS_WITH(auc.update(three, floats({0.5f, 0.5f})), Catch::Contains("AUC"));
  MeanPerClassAccuracy mpca(2);
  CHECK_THROWS_WITH(mpca.update(three, two), Catch::Contains("MeanPerClassAccuracy"));
  CHECK(mse.count() == 0.0f);
  CHECK(precision.true_positives() == 0.0f);
  CHECK(auc.true_positives().front() == 0.0f);
  CHECK(mpca.total() == std::vector<float>{0.0f, 0.0f});

  // Same rows, other columns: both shapes named.
  Eigen::MatrixXf wide(3, 2);
  wide.setZero();
  CHECK_THROWS_WITH(
      mse.update(three, wide),
      Catch::Contains("labels [3, 1] and predictions [3, 2] must have the same shape"));
  // Weights that do not broadcast.
  Mean mean;
  CHECK_THROWS_WITH(mean.update(floats({1.0f, 2.0f, 3.0f}), floats({1.0f, 1.0f})),
                    Catch::Contains("weights [2, 1] do not broadcast to the values [3, 1]"));
  CHECK(mean.count() == 0.0f);
}

TEST_CASE("AUC: a prediction outside [0, 1] or NaN is an InvalidArgumentError, nothing counted",
          "[metrics][errors]") {
  AUC auc;
  auc.update(ints({1, 0}), floats({0.8f, 0.2f}));
  const float before = auc.value();
  const std::vector<float> tp = auc.true_positives();
  const std::string msg = error_of<InvalidArgumentError>([&] {
    auc.update(ints({1, 0, 1}), floats({0.5f, 0.1f, 1.5f}));
  });
  CHECK_THAT(msg, Catch::Contains("hookfuse::metrics::AUC") &&
                      Catch::Contains("predictions must be in [0, 1]") &&
                      Catch::Contains("predictions(2, 0) = 1.5"));
  CHECK_THROWS_WITH(auc.update(ints({1}), floats({-0.1f})), Catch::Contains("= -0.1"));
  CHECK_THROWS_AS(auc.update(ints({1}), floats({std::numeric_limits<float>::quiet_NaN()})),
                  InvalidArgumentError);
  // Checked in the predictions' own type, before TF's cast to float32: 1 + 1e-12 is outside.
  Eigen::VectorXd just_above(1);
  just_above << 1.0 + 1e-12;
  CHECK_THROWS_AS(auc.update(ints({1}), just_above), InvalidArgumentError);
  CHECK(auc.value() == before);
  CHECK(auc.true_positives() == tp);
}

TEST_CASE("AUC and MeanPerClassAccuracy: bad constructor arguments are a ValueError",
          "[metrics][errors]") {
  CHECK_THROWS_WITH(
      AUC(1), Catch::Contains("num_thresholds must be at least 2") && Catch::Contains("got 1"));
  CHECK_THROWS_AS(AUC(0, Curve::PR), ValueError);
  CHECK_NOTHROW(AUC(2));
  CHECK_THROWS_WITH(MeanPerClassAccuracy(0),
                    Catch::Contains("num_classes must be at least 1") && Catch::Contains("got 0"));
  // Both are std::invalid_argument too.
  CHECK_THROWS_AS(AUC(-5), std::invalid_argument);
}

TEST_CASE("MeanPerClassAccuracy: a label below 0 or from num_classes on is an InvalidArgumentError",
          "[metrics][errors]") {
  MeanPerClassAccuracy m(3);
  m.update(ints({0, 1}), ints({0, 0}));
  const float before = m.value();
  const std::string msg = error_of<InvalidArgumentError>([&] {
    m.update(ints({0, 3, 1}), ints({0, 0, 1}));
  });
  CHECK_THAT(msg, Catch::Contains("hookfuse::metrics::MeanPerClassAccuracy") &&
                      Catch::Contains("labels(1, 0) = 3, outside the valid range [0, 3)"));
  CHECK_THROWS_WITH(m.update(ints({-1}), ints({0})), Catch::Contains("labels(0, 0) = -1"));
  Eigen::VectorXf nan_label(1);
  nan_label << std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_AS(m.update(nan_label, ints({0})), InvalidArgumentError);
  // The first row was fine, the batch still counts nothing.
  CHECK(m.value() == before);
  CHECK(m.total() == std::vector<float>{1.0f, 1.0f, 0.0f});
}

TEST_CASE("metrics: any arithmetic scalar types, and Eigen expressions", "[metrics]") {
  using Bools = Eigen::Matrix<bool, Eigen::Dynamic, 1>;
  using Bytes = Eigen::Matrix<unsigned char, Eigen::Dynamic, 1>;
  using Int64s = Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>;
  Bools labels(4);
  labels << true, false, true, false;
  Bytes predictions(4);
  predictions << 1, 0, 0, 0;  // in [0, 1]: a valid AUC input too
  Accuracy acc;
  CHECK(acc.update(labels, predictions) == 0.75f);  // 1 -> true, 0 -> false: 3 of 4
  Precision precision;
  CHECK(precision.update(labels, predictions) == 1.0f);
  AUC auc(3);
  // At threshold 0.5: tp 1, fn 1, fp 0, tn 2; exact area of that two-segment ROC curve:
  // (0, 0) -> (0, 0.5) -> (1, 1): 0.5 * (0.5 + 1) / 2 = 0.75 (TF's epsilons aside).
  CHECK(auc.update(labels, predictions) == Approx(0.75).margin(1e-5));
  Int64s ids(3);
  ids << 0, 2, 1;
  MeanPerClassAccuracy mpca(3);
  CHECK(mpca.update(ids, ids) == 1.0f);
  Mean mean;
  CHECK(mean.update(ids) == 1.0f);
  // Expressions: a sum, a block, a product (evaluated once).
  const Eigen::VectorXf a = floats({1.0f, 2.0f});
  MeanSquaredError mse;
  CHECK(mse.update(a + a, a) == Approx((1.0 + 4.0) / 2.0));
  Eigen::MatrixXf m(2, 2);
  m << 1.0f, 2.0f, 3.0f, 4.0f;
  Mean block_mean;
  CHECK(block_mean.update(m.col(1)) == 3.0f);
  Mean product_mean;
  CHECK(product_mean.update(m * a) == Approx((5.0 + 11.0) / 2.0));
}
