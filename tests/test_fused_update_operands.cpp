// tests/test_fused_update_operands.cpp: the fused optimizer update (see test_fused_update.cpp)
// where an op has several operands that are variables: two variables in one product, x U V,
// variables added together, cross-entropy straight on a variable; and a gradient requested
// under a named alias.
#include "fused_update_fixture.hpp"

TEST_CASE("two variables in one product are not fused, their update matches the stored path",
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
