// tests/kill/kill_model.hpp: the model the crash test trains: a small real network (x [4, 8] ->
// Dense 16 ReLU -> Dense 4, softmax cross-entropy, SGD 0.05) under MonitoredTrainingSession,
// with deterministic data: the batch of each step is a fixed function of the global step. A
// checkpoint at step N therefore holds exactly the weights an uninterrupted run has after N
// steps (every restore is bit for bit, and a step reads nothing else), which
// ReferenceTraining computes in the driver to check each checkpoint.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <hookfuse/hookfuse.hpp>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "checkpoint_check.hpp"

namespace hookfuse_test {

/// The network and its global step (expressions refer to the variables by address).
struct KillModel {
  hookfuse::Placeholder<"x", float, 8> x;
  hookfuse::Placeholder<"labels", std::int32_t, 1> labels;
  hookfuse::nn::Dense<"hidden", float, 8, 16> hidden;
  hookfuse::nn::Dense<"dense", float, 16, 4> dense;
  hookfuse::GlobalStep global_step;

  KillModel() = default;
  KillModel(const KillModel&) = delete;
  KillModel& operator=(const KillModel&) = delete;

  auto train_op() {
    using namespace hookfuse;
    auto logits = dense(relu(hidden(x)));
    auto loss = named<"loss">(sparse_softmax_cross_entropy(labels, logits));
    return GradientDescentOptimizer(0.05).minimize(loss, global_step);
  }
};

/// Four rows per step, each a fixed function of the global step (integer arithmetic, exact
/// conversions): the data does not depend on how many steps this process has run.
struct KillInput {
  const hookfuse::GlobalStep* step;
  float x[4 * 8] = {};
  std::int32_t labels[4] = {};

  bool next() {
    const std::int64_t s = step->value;
    for (std::int64_t r = 0; r < 4; ++r) {
      for (std::int64_t c = 0; c < 8; ++c)
        x[r * 8 + c] = static_cast<float>((s * 13 + r * 7 + c * 5) % 17) / 8.0f - 1.0f;
      labels[r] = static_cast<std::int32_t>((s + r * 3) % 4);
    }
    return true;
  }
  hookfuse::Index batch_size() const { return 4; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(x, 4, 8);
    g.template feed<"labels">(labels, 4);
  }
};

/// A session variable list as the checker compares it (name, dtype, TensorFlow shape, bytes).
inline ExpectedCheckpoint expected_of(hookfuse::VariableList vars) {
  using hookfuse::io::DataType;
  ExpectedCheckpoint e;
  for (const auto& v : vars) {
    const bool is64 = v.dtype == hookfuse::DType::int64 || v.dtype == hookfuse::DType::float64;
    const DataType dt = v.dtype == hookfuse::DType::float32   ? DataType::DT_FLOAT
                        : v.dtype == hookfuse::DType::float64 ? DataType::DT_DOUBLE
                        : v.dtype == hookfuse::DType::int32   ? DataType::DT_INT32
                                                              : DataType::DT_INT64;
    const auto dims = v.shape.dims();
    const std::size_t bytes = static_cast<std::size_t>(v.num_elements()) * (is64 ? 8u : 4u);
    ExpectedTensor t{dt, hookfuse::io::TensorShape(std::span<const std::int64_t>(dims)),
                     std::vector<std::byte>(bytes)};
    if (bytes != 0) std::memcpy(t.bytes.data(), v.data, bytes);
    e[std::string(v.name)] = std::move(t);
  }
  return e;
}

namespace detail {
/// A plain session (no checkpoint options) training `m`.
inline auto make_kill_session(KillModel& m) {
  return hookfuse::MonitoredTrainingSession(m.train_op(), KillInput{&m.global_step},
                                            hookfuse::hooks());
}
}  // namespace detail

/// A model with its plain session: fresh weights at step 0.
class KillTrainer {
 public:
  KillTrainer()
      : model_(std::make_unique<KillModel>()), session_(detail::make_kill_session(*model_)) {}

  /// Runs steps until the global step is `step` (no-op when already there).
  void run_to(std::int64_t step) {
    while (session_.global_step() < step) session_.run();
  }
  std::int64_t global_step() const { return session_.global_step(); }
  ExpectedCheckpoint state() {
    const auto vars = session_.variables();
    return expected_of(hookfuse::VariableList(vars.data(), vars.size()));
  }
  /// The session's variable list (what a Saver restores into).
  auto variables() { return session_.variables(); }

 private:
  std::unique_ptr<KillModel> model_;
  decltype(detail::make_kill_session(std::declval<KillModel&>())) session_;
};

/// The weights of an uninterrupted run after `step` steps; steps forward from the last call
/// (the latest checkpoint's step only grows), restarting from 0 when asked for an earlier one.
class ReferenceTraining {
 public:
  ExpectedCheckpoint at(std::int64_t step) {
    if (!trainer_ || trainer_->global_step() > step) trainer_ = std::make_unique<KillTrainer>();
    trainer_->run_to(step);
    return trainer_->state();
  }

 private:
  std::unique_ptr<KillTrainer> trainer_;
};

}  // namespace hookfuse_test
