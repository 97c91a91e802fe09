// tests/test_nn_optim.cpp: initializers, the Dense layer and GradientDescentOptimizer.
#include <catch2/catch.hpp>

#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

TEST_CASE("initializers: same seed gives the same numbers, another seed others") {
  Eigen::MatrixXf a(20, 30), b(20, 30), c(20, 30);
  hf::nn::glorot_uniform{7}(a);
  hf::nn::glorot_uniform{7}(b);
  hf::nn::glorot_uniform{8}(c);
  CHECK(a == b);
  CHECK(a != c);
  hf::nn::truncated_normal{0.0, 1.0, 3}(a);
  hf::nn::truncated_normal{0.0, 1.0, 3}(b);
  CHECK(a == b);
}

TEST_CASE("glorot_uniform stays within sqrt(6 / (fan_in + fan_out)) and fills the range") {
  Eigen::MatrixXd w(784, 256);
  hf::nn::glorot_uniform{1}(w);
  const double limit = std::sqrt(6.0 / (784.0 + 256.0));
  CHECK(w.maxCoeff() <= limit);
  CHECK(w.minCoeff() >= -limit);
  CHECK(w.maxCoeff() > 0.99 * limit);
  CHECK(w.minCoeff() < -0.99 * limit);
  CHECK(std::abs(w.mean()) < 0.002);
  // Uniform on [-l, l] has variance l^2 / 3.
  const double var = (w.array() - w.mean()).square().mean();
  CHECK(var == Approx(limit * limit / 3).epsilon(0.02));
}

TEST_CASE("truncated_normal stays within two standard deviations of the mean") {
  Eigen::MatrixXd w(200, 100);
  hf::nn::truncated_normal{1.0, 0.5, 11}(w);
  CHECK(w.maxCoeff() <= 1.0 + 2 * 0.5);
  CHECK(w.minCoeff() >= 1.0 - 2 * 0.5);
  CHECK(w.mean() == Approx(1.0).margin(0.01));
  // A standard normal truncated at +-2 has standard deviation 0.8796.
  const double sd = std::sqrt((w.array() - w.mean()).square().mean());
  CHECK(sd == Approx(0.5 * 0.8796).epsilon(0.02));
}

TEST_CASE("zeros and constant") {
  Eigen::Matrix<float, 2, 3> m;
  hf::nn::constant{2.5}(m);
  CHECK((m.array() == 2.5f).all());
  hf::nn::zeros{}(m);
  CHECK(m.isZero(0));
}

TEST_CASE("Dense names its variables <name>/kernel and <name>/bias, [in, out] and [1, out]") {
  hf::nn::Dense<"dense_1", float> layer(4, 3, hf::nn::constant{1.0}, hf::nn::constant{0.5});
  STATIC_REQUIRE(decltype(layer.kernel)::name.view() == "dense_1/kernel");
  STATIC_REQUIRE(decltype(layer.bias)::name.view() == "dense_1/bias");
  CHECK(layer.kernel.value.rows() == 4);
  CHECK(layer.kernel.value.cols() == 3);
  CHECK(layer.bias.value.rows() == 1);
  CHECK(layer.bias.value.cols() == 3);

  hf::Placeholder<"x", float, 4> x;
  auto loss = hf::reduce_sum(layer(x));
  auto graph = hf::bind(2, loss);
  const float input[8] = {1, 2, 3, 4, 0, 0, 0, 1};
  graph.feed<"x">(input, 2);
  // Row sums: (1+2+3+4) * 3 + 0.5 * 3 and 1 * 3 + 0.5 * 3.
  CHECK(graph.forward() == Approx(30 + 1.5 + 3 + 1.5));
  graph.backward();
  // d/dkernel of the sum = x^T * ones: column sums of x, repeated for each unit.
  CHECK(layer.kernel.grad(0, 0) == Approx(1));
  CHECK(layer.kernel.grad(3, 2) == Approx(5));
  CHECK(layer.bias.grad(0, 1) == Approx(2));
}

TEST_CASE("fixed-size Dense trains like the dynamic one") {
  hf::nn::Dense<"fixed", double, 3, 2> fixed(hf::nn::glorot_uniform{5});
  hf::nn::Dense<"dynamic", double> dynamic(3, 2, hf::nn::glorot_uniform{5});
  CHECK(fixed.kernel.value == dynamic.kernel.value);
}

namespace {
struct OneBatch {
  double x[2] = {1.0, 2.0};
  double y[2] = {3.0, 5.0};
  bool next() { return true; }
  hf::Index batch_size() const { return 2; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(x, 2);
    g.template feed<"y">(y, 2);
  }
};
}  // namespace

namespace {
/// Requests both gradients, so the session stores them (no fused update for W and b).
struct GradientWatcher {
  double dW = 0, db = 0;
  hf::SessionRunArgs<"gradients/W", "gradients/b"> before_run(hf::SessionRunContext&) {
    return {};
  }
  void after_run(hf::SessionRunContext&,
                 const hf::SessionRunValues<"gradients/W", "gradients/b">& v) {
    dW = v.get<"gradients/W">().item();
    db = v.get<"gradients/b">().item();
  }
};
}  // namespace

TEST_CASE("GradientDescentOptimizer: v -= lr * grad for every variable, global_step += 1") {
  // Predictions -0.5, 0; errors -3.5, -5; dL/dW = mean(2 e x) = (2*-3.5*1 + 2*-5*2)/2 = -13.5,
  // dL/db = mean(2 e) = -8.5. The same update whether the gradients are stored (a hook reads
  // them) or the update is fused into the backward pass (no hook does).
  hf::Placeholder<"x", double, 1> x;
  hf::Placeholder<"y", double, 1> y;
  hf::Variable<"W", double, 1, 1> W;
  hf::Variable<"b", double, 1, 1> b;
  auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b));
  hf::GlobalStep global_step{41};
  auto train_op = hf::GradientDescentOptimizer(0.1).minimize(loss, global_step);
  auto check_step = [&](auto hook_list, auto stored_tag) {
    constexpr bool stored = decltype(stored_tag)::value;
    W.value(0, 0) = 0.5;
    b.value(0, 0) = -1.0;
    W.grad.setZero();
    b.grad.setZero();
    global_step.value = 41;
    hf::MonitoredTrainingSession session(train_op, OneBatch{}, hook_list);
    using Session = decltype(session);
    CHECK(Session::template update_fused<"W"> == !stored);
    session.run();
    if constexpr (stored) {
      CHECK(W.grad(0, 0) == Approx(-13.5));
      CHECK(b.grad(0, 0) == Approx(-8.5));
      const auto& watcher = boost::hana::at_c<0>(session.hooks());
      CHECK(watcher.dW == Approx(-13.5));
      CHECK(watcher.db == Approx(-8.5));
    } else {
      CHECK(W.grad(0, 0) == 0.0);  // fused: the gradient is never stored
    }
    CHECK(W.value(0, 0) == Approx(0.5 + 1.35));
    CHECK(b.value(0, 0) == Approx(-1.0 + 0.85));
    CHECK(global_step.value == 42);
    CHECK(session.global_step() == 42);
  };
  SECTION("gradients stored") { check_step(hf::hooks(GradientWatcher{}), std::true_type{}); }
  SECTION("update fused") { check_step(hf::hooks(), std::false_type{}); }
}
