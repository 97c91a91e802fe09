// tests/test_fused_update.cpp: the optimizer update folded into the backward pass.
//
// When no hook can see a variable's gradient, MonitoredTrainingSession folds SGD's update into
// the backward pass (the weight-gradient product accumulates straight into the weights). These
// tests prove that the fused path and the stored-gradient path give the same weights, that the
// fused path is really taken (and stores no gradient), that a hook asking for a gradient or a
// variable keeps it unfused, and that "gradients/<name>" fetches the right gradient.
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

TEST_CASE("fused SGD update gives the stored-gradient weights: float, 200 steps",
          "[fused_update]") {
  fused_equals_stored<float>(1e-6);
}

TEST_CASE("fused SGD update gives the stored-gradient weights: double, 200 steps",
          "[fused_update]") {
  fused_equals_stored<double>(1e-12);
}

TEST_CASE("a hook requesting a gradient gets it, and only that variable stays unfused",
          "[fused_update]") {
  GradientProbe probe_out;
  auto result = train<double>(3, GradientProbe{}, [&](auto& s) {
    using Session = std::remove_cvref_t<decltype(s)>;
    STATIC_REQUIRE_FALSE(Session::template update_fused<"dense/kernel">);
    STATIC_REQUIRE(Session::template update_fused<"dense/bias">);
    STATIC_REQUIRE(Session::template update_fused<"logits/kernel">);
    s.run();
    probe_out = boost::hana::at_c<0>(s.hooks());
  });
  // The reference: a graph of the same (initial) model, backward() with stored gradients.
  Mlp<double> ref;
  FixedBatch<double> batch;
  auto graph = hf::bind(kBatch, ref.loss());
  batch.feed(graph);
  graph.forward();
  graph.backward();
  REQUIRE(probe_out.kernel_grad.rows() == kIn);
  REQUIRE(probe_out.kernel_grad.cols() == kHidden);
  const Eigen::MatrixXd expected_kernel = ref.hidden.kernel.grad;
  CHECK((probe_out.kernel_grad - expected_kernel).norm() <= 1e-12 * expected_kernel.norm());
  const Eigen::MatrixXd expected_logits = graph.adjoint<"logits">();
  REQUIRE(probe_out.logits_grad.rows() == kBatch);
  CHECK((probe_out.logits_grad - expected_logits).norm() <= 1e-12 * expected_logits.norm());
  CHECK(expected_kernel.norm() > 0);
  // Unfused variable: its gradient is stored; fused ones: never written.
  CHECK_FALSE(result[0].second.isZero(0));
  CHECK(result[1].second.isZero(0));
}

TEST_CASE("a hook requesting a variable gets a view showing the run's update, fused or not",
          "[fused_update]") {
  Mlp<double> m;
  const Eigen::MatrixXd before = m.output.kernel.value;
  hf::MonitoredTrainingSession session(m.train_op(), FixedBatch<double>{},
                                       hf::hooks(KernelValueProbe{}));
  using Session = decltype(session);
  STATIC_REQUIRE(Session::update_fused<"logits/kernel">);  // a value fetch does not pin
  session.run();
  const auto& probe = boost::hana::at_c<0>(session.hooks());
  CHECK(probe.first == Eigen::MatrixXd(m.output.kernel.value));
  CHECK(probe.first != before);
}

TEST_CASE("an operand's backward reads a fused variable before its update", "[fused_update]") {
  // loss = mean((W .* (x V))^2): W is operand 0 of the product and the backward for the other
  // operand (x V) reads W. The fused update of W must come after that read.
  auto run = [](auto pin, int steps) {
    using Pin = decltype(pin);
    hf::Placeholder<"x", double, 3, 4> x;
    hf::Variable<"V", double, 3, 2> V;
    hf::Variable<"W", double, 4, 2> W;
    V.value << 0.5, -0.25, 0.75, 0.1, -0.6, 0.3;
    W.value << 1.0, -0.5, 0.25, 0.8, -0.3, 0.6, 0.9, -0.7;
    Eigen::Matrix<double, 4, 3, Eigen::RowMajor> xs;
    xs << 0.1, 0.2, -0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9, 1.0, 0.2, -0.4;
    auto graph = hf::bind(4, hf::reduce_mean(hf::square(hf::multiply(W, hf::matmul(x, V)))));
    using G = decltype(graph);
    STATIC_REQUIRE(G::template update_fused<hf::detail::FuseAll, "W">());
    STATIC_REQUIRE_FALSE(G::template update_fused<hf::detail::FuseNone, "W">());
    STATIC_REQUIRE(G::template update_fused<hf::detail::FuseAll, "V">());
    const hf::GradientDescentOptimizer sgd(0.5);
    graph.feed<"x">(xs.data(), 4, 3);
    for (int i = 0; i < steps; ++i) {
      graph.forward();
      graph.template backward<Pin>(sgd);
      graph.template apply_unfused<Pin>(sgd);
    }
    return std::pair{Eigen::MatrixXd(W.value), Eigen::MatrixXd(V.value)};
  };
  const auto fused = run(hf::detail::FuseAll{}, 25);
  const auto stored = run(hf::detail::FuseNone{}, 25);
  CHECK((fused.first - stored.first).norm() <= 1e-12 * stored.first.norm());
  CHECK((fused.second - stored.second).norm() <= 1e-12 * stored.second.norm());
  CHECK((run(hf::detail::FuseNone{}, 0).first - stored.first).norm() > 1e-3);
}

TEST_CASE("a variable used twice is never fused", "[fused_update]") {
  hf::Placeholder<"x", double, 2> x;
  hf::Placeholder<"y", double, 2> y;
  hf::Variable<"W", double, 2, 2> W;
  hf::Variable<"b", double, 1, 2> b;
  auto graph = hf::bind(4, hf::mean_squared_error(y, hf::matmul(hf::matmul(x, W), W) + b));
  using G = decltype(graph);
  STATIC_REQUIRE_FALSE(G::update_fused<hf::detail::FuseAll, "W">());
  STATIC_REQUIRE(G::update_fused<hf::detail::FuseAll, "b">());
  STATIC_REQUIRE_FALSE(G::update_fused<hf::detail::FuseNone, "b">());
}

TEST_CASE("two variables in one product are not fused; their update matches the stored path",
          "[fused_update]") {
  // A factorisation U V fitted to y: the backward of V reads U and the other way round, so
  // neither may change before the other's gradient is taken.
  auto run = [](auto pin) {
    using Pin = decltype(pin);
    hf::Placeholder<"y", double, 2, 4> y;
    hf::Variable<"U", double, 4, 3> U;
    hf::Variable<"V", double, 3, 2> V;
    U.value << 0.1, 0.2, -0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9, 1.0, 0.2, -0.4;
    V.value << 0.5, -0.25, 0.75, 0.1, -0.6, 0.3;
    Eigen::Matrix<double, 4, 2, Eigen::RowMajor> ys;
    ys << 1, 0, 0, 1, 1, 1, -1, 0;
    auto graph = hf::bind(4, hf::mean_squared_error(y, hf::matmul(U, V)));
    using G = decltype(graph);
    STATIC_REQUIRE_FALSE(G::template update_fused<hf::detail::FuseAll, "U">());
    STATIC_REQUIRE_FALSE(G::template update_fused<hf::detail::FuseAll, "V">());
    const hf::GradientDescentOptimizer sgd(0.3);
    graph.template feed<"y">(ys.data(), 4, 2);
    for (int i = 0; i < 30; ++i) {
      graph.forward();
      graph.template backward<Pin>(sgd);
      graph.template apply_unfused<Pin>(sgd);
    }
    return std::pair{Eigen::MatrixXd(U.value), Eigen::MatrixXd(V.value)};
  };
  const auto fused = run(hf::detail::FuseAll{});
  const auto stored = run(hf::detail::FuseNone{});
  CHECK((fused.first - stored.first).norm() <= 1e-12 * stored.first.norm());
  CHECK((fused.second - stored.second).norm() <= 1e-12 * stored.second.norm());
}

TEST_CASE("in x U V both are fused: V's partner is a stored product, not a variable",
          "[fused_update]") {
  hf::Placeholder<"x", double, 3, 4> x;
  hf::Placeholder<"y", double, 2, 4> y;
  hf::Variable<"U", double, 3, 2> U;
  hf::Variable<"V", double, 2, 2> V;
  auto graph = hf::bind(4, hf::mean_squared_error(y, hf::matmul(hf::matmul(x, U), V)));
  using G = decltype(graph);
  STATIC_REQUIRE(G::update_fused<hf::detail::FuseAll, "U">());
  STATIC_REQUIRE(G::update_fused<hf::detail::FuseAll, "V">());
}

TEST_CASE("variables added together are both fused (the sum's backward reads no operand)",
          "[fused_update]") {
  hf::Placeholder<"y", double, 2, 4> y;
  hf::Variable<"A", double, 4, 2> A;
  hf::Variable<"B", double, 4, 2> B;
  auto graph = hf::bind(4, hf::mean_squared_error(y, hf::add(A, B)));
  using G = decltype(graph);
  STATIC_REQUIRE(G::update_fused<hf::detail::FuseAll, "A">());
  STATIC_REQUIRE(G::update_fused<hf::detail::FuseAll, "B">());
}

TEST_CASE("softmax cross-entropy straight on a fused variable matches the stored path",
          "[fused_update]") {
  // The label term of the cross-entropy gradient is added element by element (add_at): in the
  // fused path it must be scaled by -learning_rate like every other contribution.
  auto run = [](auto pin) {
    using Pin = decltype(pin);
    hf::Placeholder<"labels", std::int32_t, 1, 3> labels;
    hf::Variable<"Z", double, 3, 4> Z;
    Z.value << 0.1, 0.2, -0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9, 1.0, 0.2, -0.4;
    const std::int32_t ls[3] = {2, 0, 3};
    auto graph = hf::bind(3, hf::sparse_softmax_cross_entropy(labels, Z));
    using G = decltype(graph);
    STATIC_REQUIRE(G::template update_fused<hf::detail::FuseAll, "Z">());
    const hf::GradientDescentOptimizer sgd(0.5);
    graph.template feed<"labels">(ls, 3);
    for (int i = 0; i < 10; ++i) {
      graph.forward();
      graph.template backward<Pin>(sgd);
      graph.template apply_unfused<Pin>(sgd);
    }
    return Eigen::MatrixXd(Z.value);
  };
  const Eigen::MatrixXd fused = run(hf::detail::FuseAll{});
  const Eigen::MatrixXd stored = run(hf::detail::FuseNone{});
  CHECK((fused - stored).norm() <= 1e-12 * stored.norm());
}

namespace {
/// Requests the gradient of the hidden kernel under an alias ("w1", a named view of it).
struct AliasGradientProbe {
  double first = 0;
  hf::SessionRunArgs<"gradients/w1"> before_run(hf::SessionRunContext&) { return {}; }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"gradients/w1">& v) {
    if (first == 0) first = v.get<"gradients/w1">().at(0, 0);
  }
};
/// One example, x = (1, 2), y = 3, every step.
struct OneRow {
  double xs[2] = {1.0, 2.0};
  double ys[1] = {3.0};
  bool next() { return true; }
  hf::Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(xs, 1, 2);
    g.template feed<"y">(ys, 1);
  }
};
}  // namespace

TEST_CASE("a gradient requested under a named alias keeps the variable unfused",
          "[fused_update]") {
  hf::Placeholder<"x", double, 2> x;
  hf::Placeholder<"y", double, 1> y;
  hf::Variable<"W", double, 2, 1> W;
  W.value << 0.5, -0.5;
  hf::GlobalStep gs;
  auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, hf::named<"w1">(W))));
  auto train_op = hf::GradientDescentOptimizer(0.1).minimize(loss, gs);
  hf::MonitoredTrainingSession session(train_op, OneRow{}, hf::hooks(AliasGradientProbe{}));
  STATIC_REQUIRE_FALSE(decltype(session)::update_fused<"W">);
  session.run();
  // prediction 0.5 - 1 = -0.5, error -3.5: d/dW0 = 2 * -3.5 * 1 = -7.
  CHECK(boost::hana::at_c<0>(session.hooks()).first == Approx(-7.0));
  CHECK(W.grad(0, 0) == Approx(-7.0));
}
