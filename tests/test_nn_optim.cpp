// tests/test_nn_optim.cpp: initializers, the Dense layer and GradientDescentOptimizer.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

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
  graph.feed<"x">(input, 2, 4);
  // Row sums: (1+2+3+4) * 3 + 0.5 * 3 and 1 * 3 + 0.5 * 3.
  CHECK(graph.forward() == Approx(30 + 1.5 + 3 + 1.5));
  graph.backward();
  // d/dkernel of the sum = x^T * ones: column sums of x, repeated for each unit.
  CHECK(layer.kernel.grad(0, 0) == Approx(1));
  CHECK(layer.kernel.grad(3, 2) == Approx(5));
  CHECK(layer.bias.grad(0, 1) == Approx(2));
}

TEST_CASE("fixed-size Dense trains like the dynamic one") {
  // Same initial weights (same explicit seed), same data, 20 SGD steps on
  // mean((x kernel + bias - t)^2); then the trained weights are compared. The fixed-size layer
  // takes Eigen's fixed-size product paths, the dynamic one the run-time ones: the same sums,
  // possibly in another order (vectorised), so they may differ by a few ulps per step. Each step
  // maps the weights through w - lr * H (w - w*), H = (2 / 8) [x 1]^T [x 1] the curvature of this
  // quadratic (eigenvalues 0.0017 to 1.23 for the x below), so I - lr H has norm below 1 with
  // lr = 0.1: a difference is never amplified, and 20 steps of ~1e-16 relative rounding stay far
  // below 1e-12, while a wrong product or update would be off by far more than that (the
  // weights move by more than 0.1).
  hf::nn::Dense<"fixed", double, 3, 2> fixed(hf::nn::glorot_uniform{5});
  hf::nn::Dense<"dynamic", double> dynamic(3, 2, hf::nn::glorot_uniform{5});
  REQUIRE(fixed.kernel.value == dynamic.kernel.value);
  const Eigen::Matrix<double, 3, 2> initial = fixed.kernel.value;

  hf::Placeholder<"x", double, 3> x;
  hf::Placeholder<"t", double, 2> t;
  auto g_fixed = hf::bind(4, hf::mean_squared_error(t, fixed(x)));
  auto g_dynamic = hf::bind(4, hf::mean_squared_error(t, dynamic(x)));
  // Targets from t = x A + c, A = [[1, -1], [0.5, 2], [-1, 0]], c = (0.5, -0.5).
  const double xs[12] = {1, 0, 0.5, 0, 1, -1, 0.5, 0.5, 0, -1, 0.25, 1};
  double ts[8];
  for (int r = 0; r < 4; ++r) {
    const double* xr = xs + 3 * r;
    ts[2 * r] = xr[0] * 1 + xr[1] * 0.5 + xr[2] * -1 + 0.5;
    ts[2 * r + 1] = xr[0] * -1 + xr[1] * 2 + xr[2] * 0 - 0.5;
  }
  const hf::GradientDescentOptimizer sgd(0.1);
  double first_loss = 0, last_fixed = 0, last_dynamic = 0;
  for (int step = 0; step < 20; ++step) {
    g_fixed.feed<"x">(xs, 4, 3);
    g_fixed.feed<"t">(ts, 4, 2);
    g_dynamic.feed<"x">(xs, 4, 3);
    g_dynamic.feed<"t">(ts, 4, 2);
    last_fixed = g_fixed.forward();
    last_dynamic = g_dynamic.forward();
    if (step == 0) first_loss = last_fixed;
    g_fixed.backward();
    g_dynamic.backward();
    g_fixed.for_each_variable([&](auto& v) { sgd.apply(v); });
    g_dynamic.for_each_variable([&](auto& v) { sgd.apply(v); });
  }
  CHECK(last_fixed < 0.5 * first_loss);  // it trained
  CHECK((fixed.kernel.value - initial).cwiseAbs().maxCoeff() > 0.1);
  CHECK(last_fixed == Approx(last_dynamic).epsilon(1e-12));
  const Eigen::MatrixXd k_fixed = fixed.kernel.value;
  const Eigen::MatrixXd b_fixed = fixed.bias.value;
  CHECK((k_fixed - dynamic.kernel.value).cwiseAbs().maxCoeff() <=
        1e-12 * k_fixed.cwiseAbs().maxCoeff());
  CHECK((b_fixed - dynamic.bias.value).cwiseAbs().maxCoeff() <=
        1e-12 * b_fixed.cwiseAbs().maxCoeff());
}

TEST_CASE("seed_from_name is 64-bit FNV-1a (the published test vectors)") {
  // From the FNV reference test suite (Fowler/Noll/Vo): "" -> offset basis, "a", "foobar".
  STATIC_REQUIRE(hf::nn::seed_from_name("") == 0xcbf29ce484222325ULL);
  STATIC_REQUIRE(hf::nn::seed_from_name("a") == 0xaf63dc4c8601ec8cULL);
  STATIC_REQUIRE(hf::nn::seed_from_name("foobar") == 0x85944171f73967e8ULL);
}

TEST_CASE("Dense without a seed: layers of one shape start different, and the same every time") {
  hf::nn::Dense<"a", float> a(20, 10);  // glorot_uniform without a seed, as TensorFlow's default
  hf::nn::Dense<"b", float> b(20, 10, hf::nn::glorot_uniform{});
  CHECK(a.kernel.value != b.kernel.value);
  hf::nn::Dense<"a", float> a_again(20, 10, hf::nn::glorot_uniform{});
  CHECK(a.kernel.value == a_again.kernel.value);
  CHECK(a.bias.value.isZero(0.0f));
  // The seed is the variable's name's: the same numbers as a bare draw under that seed.
  Eigen::MatrixXf by_name(20, 10);
  hf::nn::glorot_uniform{hf::nn::seed_from_name("a/kernel")}(by_name);
  CHECK(a.kernel.value == by_name);

  hf::nn::Dense<"p", double, 4, 3> p;
  hf::nn::Dense<"q", double, 4, 3> q(hf::nn::truncated_normal{0.0, 0.1});
  hf::nn::Dense<"q", double, 4, 3> q_again(hf::nn::truncated_normal{0.0, 0.1});
  hf::nn::Dense<"r", double, 4, 3> r(hf::nn::truncated_normal{0.0, 0.1});
  CHECK(q.kernel.value == q_again.kernel.value);
  CHECK(q.kernel.value != r.kernel.value);
  CHECK(p.kernel.value != q.kernel.value);
}

TEST_CASE("an explicit seed draws what it always drew, whatever the layer's name") {
  // Independent draw: mt19937_64 seeded with 7, each element (2 u - 1) limit with u the top 53
  // bits of one output over 2^53, limit = sqrt(6 / (fan_in + fan_out)), row by row.
  hf::nn::Dense<"dense", float> hidden(5, 4, hf::nn::glorot_uniform{7});
  hf::nn::Dense<"other", float> other(5, 4, hf::nn::glorot_uniform{7});
  CHECK(hidden.kernel.value == other.kernel.value);
  std::mt19937_64 rng(7);
  const double limit = std::sqrt(6.0 / 9.0);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) {
      const double u = static_cast<double>(rng() >> 11) / 9007199254740992.0;
      CHECK(hidden.kernel.value(i, j) == static_cast<float>((2 * u - 1) * limit));
    }
  // Seed 0 is an explicit seed too (the value a missing seed used to mean).
  Eigen::MatrixXd zero_seed(3, 3), bare(3, 3);
  hf::nn::glorot_uniform{0}(zero_seed);
  std::mt19937_64 rng0(0);
  const double limit0 = std::sqrt(6.0 / 6.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      bare(i, j) = (2 * (static_cast<double>(rng0() >> 11) / 9007199254740992.0) - 1) * limit0;
  CHECK(zero_seed == bare);
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
