// tests/test_fused_update.cpp: the optimizer update folded into the backward pass.
//
// When no hook can see a variable's gradient, MonitoredTrainingSession folds SGD's update into
// the backward pass (the weight-gradient product accumulates straight into the weights). These
// tests prove that the fused path and the stored-gradient path give the same weights, that the
// fused path is really taken (and stores no gradient), that a hook asking for a gradient or a
// variable keeps it unfused, and that "gradients/<name>" fetches the right gradient.
//
// Split to keep each file under a minute of compile time with the sanitizer flags: the double
// model is in test_fused_update_double.cpp, hooks requesting a gradient or a variable in
// test_fused_update_hooks.cpp, the cases where an op has several variable operands (products,
// sums, cross-entropy on a variable) and named aliases in test_fused_update_operands.cpp.
#include "fused_update_fixture.hpp"

TEST_CASE("fused SGD update gives the stored-gradient weights: float, 200 steps",
          "[fused_update]") {
  fused_equals_stored<float>(1e-6);
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
