// tests/checkpoint_session_model.hpp: the small trained model, input and file listing that the
// checkpoint scenario and restore-error tests run MonitoredTrainingSession over.
#pragma once

#include <cstdint>
#include <filesystem>
#include <hookfuse/hookfuse.hpp>
#include <set>
#include <string>
#include <vector>

namespace hookfuse_test {

/// A Dense classifier x [batch, 3] -> logits [batch, 2] (TF: tf.layers.dense(x, 2)): variables
/// dense/kernel [3, 2] and dense/bias [2], SGD 0.1 on the sparse softmax cross-entropy.
struct DenseModel {
  hookfuse::Placeholder<"x", float, 3> x;
  hookfuse::Placeholder<"labels", std::int32_t, 1> labels;
  hookfuse::nn::Dense<"dense", float, 3, 2> dense;
  hookfuse::GlobalStep gs;
  DenseModel() = default;
  DenseModel(const DenseModel&) = delete;
  auto train_op() {
    auto loss = hookfuse::named<"loss">(hookfuse::sparse_softmax_cross_entropy(labels, dense(x)));
    return hookfuse::GradientDescentOptimizer(0.1).minimize(loss, gs);
  }
  /// The kernel's 6 values, then the bias's 2.
  std::vector<float> weights() const {
    std::vector<float> out(dense.kernel.value.data(), dense.kernel.value.data() + 6);
    out.insert(out.end(), dense.bias.value.data(), dense.bias.value.data() + 2);
    return out;
  }
  /// Overwrites every weight with `v` (so a restore or warm start is visible).
  void fill(float v) {
    dense.kernel.value.setConstant(v);
    dense.bias.value.setConstant(v);
  }
};

/// Two rows whose values depend on the global step, so the weights differ at every step.
struct StepInput {
  const hookfuse::GlobalStep* gs;
  float x[6] = {};
  std::int32_t y[2] = {};
  bool next() {
    const auto s = static_cast<float>(gs->value % 7);
    for (int i = 0; i < 6; ++i) x[i] = 0.25f * static_cast<float>(i) - 0.1f * s;
    y[0] = static_cast<std::int32_t>(gs->value % 2);
    y[1] = 1 - y[0];
    return true;
  }
  hookfuse::Index batch_size() const { return 2; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(x, 2, 3);
    g.template feed<"labels">(y, 2);
  }
};

template <class Session>
void run_until_stop(Session& session) {
  while (!session.should_stop()) session.run();
}

/// Every file name in `dir`, sorted.
inline std::set<std::string> all_files_in(const std::filesystem::path& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    out.insert(e.path().filename().string());
  return out;
}

}  // namespace hookfuse_test
