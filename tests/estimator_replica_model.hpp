// tests/estimator_replica_model.hpp: the two-class model and eight examples the Estimator's
// replica tests share (tests/test_estimator_replicas.cpp without MPI, tests/mpi/estimator.cpp on
// two ranks): a dense 2 -> 2 layer, sparse softmax cross-entropy, accuracy and AUC as metrics.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <hookfuse/estimator/estimator.hpp>
#include <hookfuse/hookfuse.hpp>
#include <vector>

namespace replica_model {

namespace hf = hookfuse;

using F2 = hf::Placeholder<"features", float, 2>;      // [batch, 2]
using L2 = hf::Placeholder<"label", std::int32_t, 1>;  // [batch], class 0 or 1

inline auto classifier_fn = [](F2 x, L2 y, auto mode, auto& vars) {
  auto& dense = hf::nn::get_layer<hf::nn::Dense<"dense", float, 2, 2>>(vars, "dense");
  auto logits = hf::named<"logits">(dense(x));
  auto probabilities = hf::named<"probabilities">(hf::softmax(logits));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, logits));
  return hf::EstimatorSpec{
      .mode = mode,
      .predictions = hf::predictions(logits, probabilities),
      .loss = loss,
      .train_op = hf::GradientDescentOptimizer(0.5).minimize(loss, vars.global_step()),
      .eval_metric_ops = hf::eval_metric_ops(
          hf::metric<"accuracy">(hf::metrics::Accuracy{}, y, logits),
          hf::metric<"auc">(hf::metrics::AUC{}, y, hf::slice_cols<1>(probabilities)))};
};

// Class 1 above the line x0 + x1 = 0, but examples 3 and 7 repeat examples 0 and 4 with the
// other label: no model gets more than 6 of the 8 right.
inline const float kFeatures[16] = {-1.0f, -0.5f, -0.8f, -1.2f, -1.5f, 0.2f,  -1.0f, -0.5f,
                                    1.0f,  0.5f,  0.8f,  1.2f,  1.5f,  -0.2f, 1.0f,  0.5f};
inline const std::int32_t kLabels[8] = {0, 0, 0, 1, 1, 1, 1, 0};

/// The metrics by hand from the dense layer's kernel ([2, 2], row-major) and bias: examples
/// correct (of 8) and the mean cross-entropy over the 8, in double.
struct ByHand {
  int correct = 0;
  double loss = 0.0;
};
inline ByHand by_hand(const std::vector<float>& k, const std::vector<float>& b) {
  ByHand h;
  for (int e = 0; e < 8; ++e) {
    const double z0 = kFeatures[2 * e] * k[0] + kFeatures[2 * e + 1] * k[2] + b[0];
    const double z1 = kFeatures[2 * e] * k[1] + kFeatures[2 * e + 1] * k[3] + b[1];
    h.correct += ((z1 > z0 ? 1 : 0) == kLabels[e]);
    const double m = std::max(z0, z1);
    const double lse = m + std::log(std::exp(z0 - m) + std::exp(z1 - m));
    h.loss += (lse - (kLabels[e] == 1 ? z1 : z0)) / 8.0;
  }
  return h;
}

}  // namespace replica_model
