// tests/fused_update_fixture.hpp: the model, batch and probes shared by the
// tests/test_fused_update*.cpp files (a 12 -> 16 ReLU -> 5 MLP trained by a
// MonitoredTrainingSession; train() returns the variables' values and gradients).
#pragma once

#include <catch2/catch.hpp>

#include <hookfuse/hookfuse.hpp>
#include <random>

namespace hf = hookfuse;

namespace {

constexpr int kIn = 12, kHidden = 16, kOut = 5;
constexpr hf::Index kBatch = 8;

template <class S>
using RowMatrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// A fixed batch of random features and labels, fed every step.
template <class S>
struct FixedBatch {
  RowMatrix<S> x{kBatch, kIn};
  Eigen::Matrix<std::int32_t, Eigen::Dynamic, 1> y{kBatch};
  FixedBatch() {
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (hf::Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<S>(u(rng));
    for (hf::Index i = 0; i < kBatch; ++i) y(i) = static_cast<std::int32_t>(rng() % kOut);
  }
  bool next() { return true; }
  hf::Index batch_size() const { return kBatch; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(x.data(), kBatch, kIn);
    g.template feed<"labels">(y.data(), kBatch);
  }
};

/// The MLP x [8, 12] -> dense 16 + ReLU -> dense 5 -> softmax cross-entropy, SGD at lr 0.1.
template <class S>
struct Mlp {
  hf::Placeholder<"x", S, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
  hf::nn::Dense<"dense", S> hidden{kIn, kHidden, hf::nn::glorot_uniform{3}};
  hf::nn::Dense<"logits", S> output{kHidden, kOut, hf::nn::glorot_uniform{4}};
  hf::GlobalStep gs;

  auto logits() { return hf::named<"logits">(output(hf::relu(hidden(x)))); }
  auto loss() { return hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits())); }
  auto train_op() { return hf::GradientDescentOptimizer(0.1).minimize(loss(), gs); }

  template <class F>
  void for_each_variable(F&& f) {
    f(hidden.kernel);
    f(hidden.bias);
    f(output.kernel);
    f(output.bias);
  }
};

/// Declares that it reads gradients itself: the session must store every gradient.
struct ReadsAllGradients {
  static constexpr bool reads_gradients = true;
};

/// Requests d loss / d dense/kernel and d loss / d logits every run and keeps the first ones.
struct GradientProbe {
  Eigen::MatrixXd kernel_grad, logits_grad;
  int runs = 0;
  hf::SessionRunArgs<"gradients/dense/kernel", "gradients/logits"> before_run(
      hf::SessionRunContext&) {
    return {};
  }
  void after_run(hf::SessionRunContext&,
                 const hf::SessionRunValues<"gradients/dense/kernel", "gradients/logits">& v) {
    if (runs++ > 0) return;
    kernel_grad = to_matrix(v.get<"gradients/dense/kernel">());
    logits_grad = to_matrix(v.get<"gradients/logits">());
  }
  static Eigen::MatrixXd to_matrix(const hf::TensorValue& t) {
    Eigen::MatrixXd m(t.rows, t.cols);
    for (hf::Index i = 0; i < t.rows; ++i)
      for (hf::Index j = 0; j < t.cols; ++j) m(i, j) = t.at(i, j);
    return m;
  }
};

/// Requests the variable "logits/kernel" itself and copies what it gets in the first run.
struct KernelValueProbe {
  Eigen::MatrixXd first;
  int runs = 0;
  hf::SessionRunArgs<"logits/kernel"> before_run(hf::SessionRunContext&) { return {}; }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"logits/kernel">& v) {
    if (runs++ == 0) first = GradientProbe::to_matrix(v.get<"logits/kernel">());
  }
};

template <class S>
double relative_difference(const RowMatrix<S>& a, const RowMatrix<S>& b) {
  return (a - b).template cast<double>().norm() / b.template cast<double>().norm();
}

/// Trains `steps` steps with `hook` in a fresh model; returns the four variables' values and
/// gradients, and lets `check` look at the session type.
template <class S, class Hook, class Check>
std::vector<std::pair<RowMatrix<S>, RowMatrix<S>>> train(int steps, Hook hook, Check check) {
  Mlp<S> m;
  hf::MonitoredTrainingSession session(m.train_op(), FixedBatch<S>{}, hf::hooks(std::move(hook)));
  check(session);
  for (int i = 0; i < steps; ++i) session.run();
  std::vector<std::pair<RowMatrix<S>, RowMatrix<S>>> out;
  m.for_each_variable([&](auto& v) { out.emplace_back(v.value, v.grad); });
  return out;
}

template <class S>
void fused_equals_stored(double tolerance) {
  auto fused = train<S>(200, hf::StopAtStepHook({.num_steps = 1000}), [](auto& s) {
    using Session = std::remove_cvref_t<decltype(s)>;
    STATIC_REQUIRE(Session::template update_fused<"dense/kernel">);
    STATIC_REQUIRE(Session::template update_fused<"dense/bias">);
    STATIC_REQUIRE(Session::template update_fused<"logits/kernel">);
    STATIC_REQUIRE(Session::template update_fused<"logits/bias">);
  });
  auto stored = train<S>(200, ReadsAllGradients{}, [](auto& s) {
    using Session = std::remove_cvref_t<decltype(s)>;
    STATIC_REQUIRE_FALSE(Session::template update_fused<"dense/kernel">);
    STATIC_REQUIRE_FALSE(Session::template update_fused<"logits/bias">);
  });
  REQUIRE(fused.size() == 4);
  const RowMatrix<S> initial = [] {
    Mlp<S> m;
    return RowMatrix<S>(m.hidden.kernel.value);
  }();
  for (std::size_t i = 0; i < fused.size(); ++i) {
    INFO("variable " << i);
    CHECK(relative_difference(fused[i].first, stored[i].first) <= tolerance);
    // The fused path never stores a gradient; the stored path does.
    CHECK(fused[i].second.isZero(0));
    CHECK_FALSE(stored[i].second.isZero(0));
  }
  // And training moved the weights (the comparison is not between two untouched models).
  CHECK(relative_difference(fused[0].first, initial) > 1e-3);
}

}  // namespace
