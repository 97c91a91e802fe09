// tests/test_optimizers.cpp: MomentumOptimizer, AdamOptimizer, RMSPropOptimizer and
// AdagradOptimizer against TensorFlow's update formulas, their slot variables and checkpoints.
//
// The model: loss = reduce_sum(x W + b) for x [1, 2] (fed), W [2, 1], b [1] (TF rank 1), so the
// gradients are known without differentiating anything: dloss/dW = x^T, dloss/db = 1. Each
// step feeds another x, so every step's gradient differs. The expected values come from a
// scalar hand computation written in each test with the formula of TensorFlow's kernel
// (tensorflow/core/kernels/training_ops.cc, Apply*), never from the library.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <hookfuse/io/saver.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "bundle_test_util.hpp"

namespace hf = hookfuse;

namespace {

/// The three steps' inputs: the gradient of W at step t is xs[t] (transposed), of b is 1.
constexpr std::array<std::array<double, 2>, 3> xs = {{{1.0, 2.0}, {-0.5, 3.0}, {2.0, -1.0}}};
constexpr std::array<double, 3> w0 = {0.5, -0.25, 0.1};  // W(0, 0), W(1, 0), b

struct Model {
  hf::Placeholder<"x", double, 2> x;
  hf::Variable<"W", double, 2, 1> W;
  hf::Variable<"b", double, 1, 1, 1> b;
  hf::GlobalStep gs;
  Model() {
    W.value(0, 0) = w0[0];
    W.value(1, 0) = w0[1];
    b.value(0, 0) = w0[2];
  }
  auto loss() { return hf::named<"loss">(hf::reduce_sum(hf::matmul(x, W) + b)); }
  std::array<double, 3> values() const { return {W.value(0, 0), W.value(1, 0), b.value(0, 0)}; }
};

/// The gradient of element i (W(0,0), W(1,0), b) at step t.
double grad(int t, int i) { return i < 2 ? xs[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)] : 1.0; }

/// Runs `steps` steps of `optimizer` from w0 and returns W(0,0), W(1,0), b.
template <class Opt>
std::array<double, 3> train(const Opt& optimizer, int steps = 3) {
  Model m;
  hf::MonitoredTrainingSession s(optimizer.minimize(m.loss(), m.gs), hf::caller_feeds(1),
                                 hf::hooks());
  for (int t = 0; t < steps; ++t) s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
  CHECK(m.gs.value == steps);
  return m.values();
}

void check_close(const std::array<double, 3>& got, const std::array<double, 3>& want) {
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(1e-6).epsilon(0));
  }
}

}  // namespace

TEST_CASE("MomentumOptimizer matches ApplyMomentum over 3 steps", "[optim]") {
  // ApplyMomentum: accum = accum * momentum + grad; var -= lr * accum, or with use_nesterov
  // var -= grad * lr + accum * momentum * lr. accum starts at 0.
  const double lr = 0.1, mom = 0.9;
  for (bool nesterov : {false, true}) {
    INFO("use_nesterov " << nesterov);
    std::array<double, 3> want = w0;
    std::array<double, 3> accum{};
    for (int t = 0; t < 3; ++t)
      for (int i = 0; i < 3; ++i) {
        const double g = grad(t, i);
        double& a = accum[static_cast<std::size_t>(i)];
        a = a * mom + g;
        want[static_cast<std::size_t>(i)] -= nesterov ? g * lr + a * mom * lr : lr * a;
      }
    check_close(train(hf::MomentumOptimizer(lr, mom, nesterov)), want);
  }
  // By hand, W(0,0) without Nesterov (gradients 1, -0.5, 2): accum 1, 0.9 - 0.5 = 0.4,
  // 0.36 + 2 = 2.36; W = 0.5 - 0.1 * (1 + 0.4 + 2.36) = 0.124.
  CHECK(train(hf::MomentumOptimizer(lr, mom))[0] == Approx(0.124).margin(1e-12));
}

TEST_CASE("AdamOptimizer matches TF1's ApplyAdam over 3 steps", "[optim]") {
  // TF1 AdamOptimizer: beta1_power, beta2_power start at beta1, beta2 (beta^t at step t);
  // lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
  // m += (g - m) * (1 - beta1); v += (g^2 - v) * (1 - beta2);
  // var -= lr_t * m / (sqrt(v) + epsilon); then beta1_power *= beta1, beta2_power *= beta2.
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  std::array<double, 3> want = w0, m{}, v{};
  double b1p = b1, b2p = b2;
  for (int t = 0; t < 3; ++t) {
    const double lr_t = lr * std::sqrt(1 - b2p) / (1 - b1p);
    for (std::size_t i = 0; i < 3; ++i) {
      const double g = grad(t, static_cast<int>(i));
      m[i] += (g - m[i]) * (1 - b1);
      v[i] += (g * g - v[i]) * (1 - b2);
      want[i] -= lr_t * m[i] / (std::sqrt(v[i]) + eps);
    }
    b1p *= b1;
    b2p *= b2;
  }
  check_close(train(hf::AdamOptimizer(lr)), want);
  // Adam's first step moves every element by about lr against the gradient's sign:
  // lr_1 * 0.1 g / (sqrt(0.001) |g|) = lr (up to epsilon).
  const auto one = train(hf::AdamOptimizer(lr), 1);
  CHECK(one[0] == Approx(0.5 - 0.01).margin(1e-6));
  CHECK(one[1] == Approx(-0.25 - 0.01).margin(1e-6));
  // Defaults: tf.compat.v1.train.AdamOptimizer(0.001, 0.9, 0.999, 1e-8).
  const hf::AdamOptimizer d;
  CHECK(d.learning_rate() == 0.001);
  CHECK(d.beta1() == 0.9);
  CHECK(d.beta2() == 0.999);
  CHECK(d.epsilon() == 1e-8);
}

TEST_CASE("RMSPropOptimizer matches TF1's ApplyRMSProp over 3 steps", "[optim]") {
  // ApplyRMSProp: ms += (g^2 - ms) * (1 - decay); mom = mom * momentum + lr * g /
  // sqrt(ms + epsilon); var -= mom. TF1 starts ms at 1 (ones_initializer), mom at 0.
  for (double momentum : {0.0, 0.5}) {
    INFO("momentum " << momentum);
    const double lr = 0.01, decay = 0.9, eps = 1e-10;
    std::array<double, 3> want = w0, ms{1, 1, 1}, mom{};
    for (int t = 0; t < 3; ++t)
      for (std::size_t i = 0; i < 3; ++i) {
        const double g = grad(t, static_cast<int>(i));
        ms[i] += (g * g - ms[i]) * (1 - decay);
        mom[i] = mom[i] * momentum + lr * g / std::sqrt(ms[i] + eps);
        want[i] -= mom[i];
      }
    check_close(train(hf::RMSPropOptimizer(lr, decay, momentum)), want);
  }
  const hf::RMSPropOptimizer d(0.01);
  CHECK(d.decay() == 0.9);
  CHECK(d.momentum() == 0.0);
  CHECK(d.epsilon() == 1e-10);
}

TEST_CASE("RMSPropOptimizer<true> (centered) matches TF1's ApplyCenteredRMSProp over 3 steps",
          "[optim]") {
  // ApplyCenteredRMSProp: ms += (g^2 - ms) * (1 - decay); mg += (g - mg) * (1 - decay);
  // mom = mom * momentum + lr * g / sqrt(ms - mg^2 + epsilon); var -= mom. TF1 starts ms at 1
  // (ones_initializer), mg and mom at 0.
  for (double momentum : {0.0, 0.5}) {
    INFO("momentum " << momentum);
    const double lr = 0.01, decay = 0.9, eps = 1e-10;
    std::array<double, 3> want = w0, ms{1, 1, 1}, mg{}, mom{};
    for (int t = 0; t < 3; ++t)
      for (std::size_t i = 0; i < 3; ++i) {
        const double g = grad(t, static_cast<int>(i));
        ms[i] += (g * g - ms[i]) * (1 - decay);
        mg[i] += (g - mg[i]) * (1 - decay);
        mom[i] = mom[i] * momentum + lr * g / std::sqrt(ms[i] - mg[i] * mg[i] + eps);
        want[i] -= mom[i];
      }
    check_close(train(hf::RMSPropOptimizer<true>(lr, decay, momentum)), want);
  }
  // By hand, b's first step (g = 1): ms = 1, mg = 0.1, mom = 0.01 / sqrt(1 - 0.01 + 1e-10),
  // so b = 0.1 - 0.01 / sqrt(0.99) = 0.0899498...; the plain RMSProp gives 0.1 - 0.01 = 0.09
  // (up to epsilon).
  CHECK(train(hf::RMSPropOptimizer<true>(0.01), 1)[2] ==
        Approx(0.1 - 0.01 / std::sqrt(0.99 + 1e-10)).margin(1e-12));
  CHECK(train(hf::RMSPropOptimizer(0.01), 1)[2] ==
        Approx(0.1 - 0.01 / std::sqrt(1 + 1e-10)).margin(1e-12));
  STATIC_REQUIRE(hf::RMSPropOptimizer<true>::centered());
  STATIC_REQUIRE_FALSE(decltype(hf::RMSPropOptimizer(0.01))::centered());  // TF's default
}

TEST_CASE("AdagradOptimizer matches TF1's ApplyAdagrad over 3 steps", "[optim]") {
  // ApplyAdagrad: accum += g^2; var -= lr * g / sqrt(accum); accum starts at
  // initial_accumulator_value (0.1 by default).
  const double lr = 0.1;
  std::array<double, 3> want = w0, accum{0.1, 0.1, 0.1};
  for (int t = 0; t < 3; ++t)
    for (std::size_t i = 0; i < 3; ++i) {
      const double g = grad(t, static_cast<int>(i));
      accum[i] += g * g;
      want[i] -= lr * g / std::sqrt(accum[i]);
    }
  check_close(train(hf::AdagradOptimizer(lr)), want);
  // By hand, b's first step: accum 1.1, b = 0.1 - 0.1 / sqrt(1.1).
  CHECK(train(hf::AdagradOptimizer(lr), 1)[2] == Approx(0.1 - 0.1 / std::sqrt(1.1)).margin(1e-12));
  CHECK(hf::AdagradOptimizer(lr).initial_accumulator_value() == 0.1);
}

TEST_CASE("set_learning_rate between steps changes the following updates", "[optim]") {
  // Momentum, lr 0.1 for step 1 and 0.2 after: accum 1, 0.4 (W(0,0)); W = 0.5 - 0.1 - 0.2 * 0.4.
  Model m;
  hf::MonitoredTrainingSession s(hf::MomentumOptimizer(0.1, 0.9).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(1), hf::hooks());
  s.run(hf::feed<"x">(xs[0].data(), 1, 2));
  s.optimizer().set_learning_rate(0.2);
  CHECK(s.optimizer().learning_rate() == 0.2);
  s.run(hf::feed<"x">(xs[1].data(), 1, 2));
  CHECK(m.W.value(0, 0) == Approx(0.5 - 0.1 - 0.08).margin(1e-12));
  // SGD too (its fused update reads the rate every step): 0.5 - 0.1 * 1 - 0.3 * (-0.5).
  Model n;
  hf::MonitoredTrainingSession sgd(hf::GradientDescentOptimizer(0.1).minimize(n.loss(), n.gs),
                                   hf::caller_feeds(1), hf::hooks());
  sgd.run(hf::feed<"x">(xs[0].data(), 1, 2));
  sgd.optimizer().set_learning_rate(0.3);
  sgd.run(hf::feed<"x">(xs[1].data(), 1, 2));
  CHECK(n.W.value(0, 0) == Approx(0.5 - 0.1 + 0.15).margin(1e-12));
}

TEST_CASE("Optimizers refuse hyperparameters that would train to NaN or uphill", "[optim]") {
  CHECK_THROWS_WITH(hf::GradientDescentOptimizer(NAN),
                    "GradientDescentOptimizer: learning_rate must be finite and >= 0, got nan");
  CHECK_THROWS_WITH(hf::GradientDescentOptimizer(-0.1),
                    "GradientDescentOptimizer: learning_rate must be finite and >= 0, got -0.1");
  CHECK_NOTHROW(hf::GradientDescentOptimizer(0.0));  // 0 freezes the variables
  CHECK_THROWS_WITH(hf::MomentumOptimizer(INFINITY, 0.9),
                    "MomentumOptimizer: learning_rate must be finite and >= 0, got inf");
  CHECK_THROWS_WITH(hf::MomentumOptimizer(0.1, -1.0),
                    "MomentumOptimizer: momentum must be finite and >= 0, got -1");
  // 1 - beta1^t = 0 divides by zero; beta2 > 1 takes sqrt of a negative number.
  CHECK_THROWS_WITH(hf::AdamOptimizer(0.001, 1.0),
                    "AdamOptimizer: beta1 must be in [0, 1), got 1");
  CHECK_THROWS_WITH(hf::AdamOptimizer(0.001, 0.9, 1.5),
                    "AdamOptimizer: beta2 must be in [0, 1), got 1.5");
  CHECK_THROWS_WITH(hf::AdamOptimizer(0.001, 0.9, 0.999, -1e-8),
                    "AdamOptimizer: epsilon must be finite and >= 0, got -1e-08");
  CHECK_THROWS_WITH(hf::RMSPropOptimizer(0.001, 2.0),
                    "RMSPropOptimizer: decay must be in [0, 1], got 2");
  CHECK_THROWS_WITH(hf::RMSPropOptimizer(0.001, 0.9, 0.0, -5.0),
                    "RMSPropOptimizer: epsilon must be finite and >= 0, got -5");
  // TF1's adagrad.py: ValueError("initial_accumulator_value must be positive").
  CHECK_THROWS_WITH(hf::AdagradOptimizer(0.1, 0.0),
                    "AdagradOptimizer: initial_accumulator_value must be finite and > 0 "
                    "(TensorFlow: positive), got 0");
  // set_learning_rate checks the same, and keeps the old rate.
  hf::AdamOptimizer adam(0.001);
  CHECK_THROWS_WITH(adam.set_learning_rate(-1.0),
                    "AdamOptimizer: learning_rate must be finite and >= 0, got -1");
  CHECK(adam.learning_rate() == 0.001);
}

TEST_CASE("Slots are listed for checkpoints under TensorFlow's names and shapes", "[optim]") {
  const auto names_of = [](auto& session) {
    std::vector<std::string> out;
    for (const auto& v : session.variables()) out.emplace_back(v.name);
    return out;
  };
  SECTION("Adam: <var>/Adam, <var>/Adam_1, beta1_power, beta2_power") {
    Model m;
    hf::MonitoredTrainingSession s(hf::AdamOptimizer().minimize(m.loss(), m.gs),
                                   hf::caller_feeds(1), hf::hooks());
    CHECK(names_of(s) == std::vector<std::string>{"W", "b", "W/Adam", "W/Adam_1", "b/Adam",
                                                  "b/Adam_1", "beta1_power", "beta2_power",
                                                  "global_step"});
    const auto vars = s.variables();
    // Slots have their variable's TF shape and dtype: W [2, 1], b [1]; the powers [] float64.
    CHECK(vars[2].shape == vars[0].shape);
    CHECK(vars[4].shape.rank == 1);
    CHECK(vars[4].shape.dim_sizes[0] == 1);
    CHECK(vars[2].dtype == hf::DType::float64);
    CHECK(vars[6].shape.rank == 0);
    CHECK(vars[6].values<double>()[0] == 0.9);    // beta1_power starts at beta1
    CHECK(vars[7].values<double>()[0] == 0.999);  // beta2_power at beta2
    s.run(hf::feed<"x">(xs[0].data(), 1, 2));
    CHECK(vars[6].values<double>()[0] == Approx(0.81).margin(1e-15));
    // W/Adam after one step: m = 0.1 * g = 0.1 * x^T.
    CHECK(vars[2].values<double>()[1] == Approx(0.2).margin(1e-15));
  }
  SECTION("Momentum, RMSProp, Adagrad, SGD") {
    Model a, b, c, d;
    hf::MonitoredTrainingSession mo(hf::MomentumOptimizer(0.1, 0.9).minimize(a.loss(), a.gs),
                                    hf::caller_feeds(1), hf::hooks());
    CHECK(names_of(mo) == std::vector<std::string>{"W", "b", "W/Momentum", "b/Momentum",
                                                   "global_step"});
    hf::MonitoredTrainingSession rms(hf::RMSPropOptimizer(0.1).minimize(b.loss(), b.gs),
                                     hf::caller_feeds(1), hf::hooks());
    CHECK(names_of(rms) == std::vector<std::string>{"W", "b", "W/RMSProp", "W/RMSProp_1",
                                                    "b/RMSProp", "b/RMSProp_1", "global_step"});
    CHECK(rms.variables()[2].values<double>()[0] == 1.0);  // TF1's mean square starts at 1
    // Centered: TF creates rms, mg, momentum in that order, each "<var>/RMSProp" made unique.
    Model e;
    hf::MonitoredTrainingSession crms(hf::RMSPropOptimizer<true>(0.1).minimize(e.loss(), e.gs),
                                      hf::caller_feeds(1), hf::hooks());
    CHECK(names_of(crms) == std::vector<std::string>{"W", "b", "W/RMSProp", "W/RMSProp_1",
                                                     "W/RMSProp_2", "b/RMSProp", "b/RMSProp_1",
                                                     "b/RMSProp_2", "global_step"});
    CHECK(crms.variables()[2].values<double>()[0] == 1.0);  // ms
    CHECK(crms.variables()[3].values<double>()[0] == 0.0);  // mg
    CHECK(crms.variables()[4].values<double>()[0] == 0.0);  // momentum
    CHECK(crms.variables()[7].shape.rank == 1);             // b/RMSProp_2 has b's shape [1]
    hf::MonitoredTrainingSession ada(hf::AdagradOptimizer(0.1).minimize(c.loss(), c.gs),
                                     hf::caller_feeds(1), hf::hooks());
    CHECK(names_of(ada) == std::vector<std::string>{"W", "b", "W/Adagrad", "b/Adagrad",
                                                    "global_step"});
    CHECK(ada.variables()[3].values<double>()[0] == 0.1);
    hf::MonitoredTrainingSession sgd(hf::GradientDescentOptimizer(0.1).minimize(d.loss(), d.gs),
                                     hf::caller_feeds(1), hf::hooks());
    CHECK(names_of(sgd) == std::vector<std::string>{"W", "b", "global_step"});
  }
}

namespace {
/// Requests d loss / d W every run: W's update is then never fused (its gradient is stored).
struct ReadsWGradient {
  double last = 0;
  hf::SessionRunArgs<"gradients/W"> before_run(hf::SessionRunContext&) { return {}; }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"gradients/W">& v) {
    last = v.get<"gradients/W">().at(1, 0);
  }
};
using ModelLoss = decltype(std::declval<Model&>().loss());
template <class Opt>
using SessionOf = decltype(hf::MonitoredTrainingSession(
    std::declval<hf::TrainOp<ModelLoss, Opt>>(), hf::caller_feeds(1), hf::hooks()));
}  // namespace

TEST_CASE("SGD and Momentum (without Nesterov) fuse their update into the backward pass",
          "[optim]") {
  STATIC_REQUIRE(SessionOf<hf::GradientDescentOptimizer>::update_fused<"W">);
  STATIC_REQUIRE(SessionOf<hf::MomentumOptimizer>::update_fused<"W">);
  STATIC_REQUIRE_FALSE(SessionOf<hf::AdamOptimizer>::update_fused<"W">);
  STATIC_REQUIRE_FALSE(SessionOf<hf::RMSPropOptimizer<>>::update_fused<"W">);
  STATIC_REQUIRE_FALSE(SessionOf<hf::RMSPropOptimizer<true>>::update_fused<"W">);
  STATIC_REQUIRE_FALSE(SessionOf<hf::AdagradOptimizer>::update_fused<"W">);
  STATIC_REQUIRE(hf::Optimizer<hf::AdamOptimizer>);
  STATIC_REQUIRE(hf::SlotOptimizer<hf::AdamOptimizer>);
  STATIC_REQUIRE_FALSE(hf::SlotOptimizer<hf::GradientDescentOptimizer>);
  STATIC_REQUIRE_FALSE(hf::Optimizer<int>);

  // The fused path really runs: W.grad is never written (it keeps a marker); with Nesterov
  // (decided at run time) every gradient is stored: W.grad holds the last step's x^T.
  for (bool nesterov : {false, true}) {
    INFO("use_nesterov " << nesterov);
    Model m;
    m.W.grad.setConstant(-7.0);
    hf::MonitoredTrainingSession s(hf::MomentumOptimizer(0.1, 0.9, nesterov).minimize(m.loss(), m.gs),
                                   hf::caller_feeds(1), hf::hooks());
    for (int t = 0; t < 3; ++t)
      s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
    CHECK(m.W.grad(0, 0) == (nesterov ? 2.0 : -7.0));
    CHECK(m.W.grad(1, 0) == (nesterov ? -1.0 : -7.0));
    STATIC_REQUIRE(decltype(s)::update_fused<"W">);  // may fuse (decided at run time)
    CHECK(s.update_fused_now<"W">() == !nesterov);
  }
  // A hook reading W's gradient keeps W unfused, b fused: the same values as the hand
  // computation of the first test (W(0,0) = 0.124; b: accum 1, 1.9, 2.71, b = 0.1 - 0.561).
  Model m;
  ReadsWGradient probe;
  hf::MonitoredTrainingSession s(hf::MomentumOptimizer(0.1, 0.9).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(1), hf::hooks(std::ref(probe)));
  STATIC_REQUIRE_FALSE(decltype(s)::update_fused<"W">);
  STATIC_REQUIRE(decltype(s)::update_fused<"b">);
  for (int t = 0; t < 3; ++t) s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
  CHECK(probe.last == -1.0);  // d loss / d W(1,0) at step 3: x = (2, -1)
  CHECK(m.W.value(0, 0) == Approx(0.124).margin(1e-12));
  CHECK(m.b.value(0, 0) == Approx(0.1 - 0.561).margin(1e-12));
  CHECK(s.variables()[3].name == "b/Momentum");
  CHECK(s.variables()[3].values<double>()[0] == Approx(2.71).margin(1e-12));
}

TEST_CASE("Adam's slots and beta powers round-trip through a checkpoint", "[optim][checkpoint]") {
  hookfuse_test::TempDir dir;
  const std::string save_path = (dir.path() / "model.ckpt").string();
  hf::io::Saver saver;
  Model a;
  hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.01).minimize(a.loss(), a.gs),
                                 hf::caller_feeds(1), hf::hooks());
  for (int t = 0; t < 2; ++t) s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
  const auto saved = s.variables();
  const std::string prefix = saver.save(saved, save_path, s.global_step());

  // An independent reader sees TF's keys with the values the hand computation gives after two
  // steps: W/Adam = m_2 = 0.09 g_1 + 0.1 g_2, beta1_power = 0.9^3.
  const hf::io::CheckpointReader reader(prefix);
  CHECK(reader.get_tensor<double>("W/Adam")[0] == Approx(0.09 * 1 + 0.1 * -0.5).margin(1e-12));
  CHECK(reader.get_tensor<double>("W/Adam_1")[1] ==
        Approx(0.999 * 0.001 * 4 + 0.001 * 9).margin(1e-12));
  CHECK(reader.get_tensor<double>("beta1_power")[0] == Approx(0.729).margin(1e-12));
  CHECK(reader.get_tensor<double>("beta2_power")[0] == Approx(0.999 * 0.999 * 0.999).margin(1e-12));

  // A fresh model restores everything, and its next step equals the original's.
  Model b;
  hf::MonitoredTrainingSession r(hf::AdamOptimizer(0.01).minimize(b.loss(), b.gs),
                                 hf::caller_feeds(1), hf::hooks());
  const auto restored = r.variables();
  saver.restore(restored, prefix);
  for (std::size_t i = 0; i < saved.size(); ++i) {
    INFO(saved[i].name);
    if (saved[i].dtype == hf::DType::int64) {
      CHECK(restored[i].values<std::int64_t>()[0] == saved[i].values<std::int64_t>()[0]);
      continue;
    }
    const auto x = saved[i].values<double>();
    const auto y = restored[i].values<double>();
    REQUIRE(x.size() == y.size());
    for (std::size_t k = 0; k < x.size(); ++k) CHECK(y[k] == x[k]);
  }
  s.run(hf::feed<"x">(xs[2].data(), 1, 2));
  r.run(hf::feed<"x">(xs[2].data(), 1, 2));
  CHECK(b.values() == a.values());
  CHECK(b.gs.value == 3);
}

namespace {
/// The houseprices network's shapes: 8 -> 100 -> 5 -> 5 -> 10 -> 1, TF1's default names
/// "Variable", "Variable_1", ... (kernels [in, out], biases [out]).
struct HousePrices {
  hf::Placeholder<"x", float, 8> x;
  hf::Placeholder<"y", float, 1> y;
  hf::Variable<"Variable", float, 8, 100> w0;
  hf::Variable<"Variable_1", float, 1, 100, 1> b0;
  hf::Variable<"Variable_2", float, 100, 5> w1;
  hf::Variable<"Variable_3", float, 1, 5, 1> b1;
  hf::Variable<"Variable_4", float, 5, 5> w2;
  hf::Variable<"Variable_5", float, 1, 5, 1> b2;
  hf::Variable<"Variable_6", float, 5, 10> w3;
  hf::Variable<"Variable_7", float, 1, 10, 1> b3;
  hf::Variable<"Variable_8", float, 10, 1> w4;
  hf::Variable<"Variable_9", float, 1, 1, 1> b4;
  hf::GlobalStep gs;
  HousePrices() {
    w0.value.setConstant(0.01f);
    w1.value.setConstant(0.01f);
    w2.value.setConstant(0.01f);
    w3.value.setConstant(0.01f);
    w4.value.setConstant(0.01f);
  }
  auto loss() {
    using namespace hf;
    auto h = relu(matmul(relu(matmul(relu(matmul(relu(matmul(x, w0) + b0), w1) + b1), w2) + b2),
                         w3) + b3);
    return named<"loss">(mean_squared_error(y, matmul(h, w4) + b4));
  }
};
}  // namespace

TEST_CASE("The TF1 Adam checkpoint ckpt_tf1_saver_houseprices loads into an Adam-trained model",
          "[optim][checkpoint]") {
  const auto prefix = hookfuse_test::tf_fixture("ckpt_tf1_saver_houseprices/model.ckpt");
  auto m = std::make_unique<HousePrices>();
  hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.001).minimize(m->loss(), m->gs),
                                 hf::caller_feeds(4), hf::hooks());
  std::vector<float> xb(4 * 8, 0.5f), yb(4, 1.0f);
  s.run(hf::feed<"x">(xb.data(), 4, 8), hf::feed<"y">(yb.data(), 4));  // Adam-trained
  const auto vars = s.variables();
  // The fixture has no global_step (and two untrained scalars, Variable_10 and Variable_11,
  // that this model does not have): restore every variable, slot and beta power but the step.
  REQUIRE(vars.back().name == "global_step");
  REQUIRE(vars.size() == 10 + 20 + 2 + 1);
  hf::io::Saver saver;
  saver.restore(hf::VariableList(vars.data(), vars.size() - 1), prefix.string());

  // Values from the fixture's README and from an independent reader of the same file.
  CHECK(m->w0.value(0, 0) == -0.702847898f);
  CHECK(m->w0.value(0, 1) == 0.751050413f);
  const hf::io::CheckpointReader reader(prefix.string());
  for (const auto& v : vars) {
    if (v.name == "global_step") continue;
    INFO(v.name);
    const auto want = reader.get_tensor<float>(std::string(v.name));
    const auto got = v.values<float>();
    REQUIRE(got.size() == want.size());
    CHECK(std::equal(got.begin(), got.end(), want.begin()));
  }
  CHECK(s.optimizer_slots().non_slot[0] == 0.0f);               // beta1_power
  CHECK(s.optimizer_slots().non_slot[1] == 4.16217225e-18f);    // beta2_power
  // And training continues from there (finite loss and weights).
  s.run(hf::feed<"x">(xb.data(), 4, 8), hf::feed<"y">(yb.data(), 4));
  CHECK(std::isfinite(m->w0.value(0, 0)));
  CHECK(std::isfinite(m->b4.value(0, 0)));
}

TEST_CASE("A warm start sets an Adam model's weights from an SGD checkpoint, not its slots",
          "[optim][checkpoint]") {
  // Estimator's warm start sets trainable variables only: the SGD checkpoint has no slots, and
  // the Adam model's slots keep their initial values.
  hookfuse_test::TempDir dir;
  Model a;
  hf::MonitoredTrainingSession sgd(hf::GradientDescentOptimizer(0.1).minimize(a.loss(), a.gs),
                                   hf::caller_feeds(1), hf::hooks());
  sgd.run(hf::feed<"x">(xs[0].data(), 1, 2));
  hf::io::Saver saver;
  const std::string prefix =
      saver.save(sgd.variables(), (dir.path() / "model.ckpt").string(), sgd.global_step());

  Model b;
  hf::MonitoredTrainingSession adam(
      hf::AdamOptimizer().minimize(b.loss(), b.gs), hf::caller_feeds(1),
      hf::SessionOptions{.warm_start_from = hf::io::WarmStart{prefix}}, hf::hooks());
  CHECK(b.values() == a.values());
  CHECK(b.values()[0] == Approx(0.5 - 0.1 * 1).margin(1e-12));
  const auto vars = adam.variables();
  CHECK(vars[2].name == "W/Adam");
  CHECK(vars[2].values<double>()[0] == 0.0);
  CHECK(vars[6].values<double>()[0] == 0.9);  // beta1_power
  CHECK(adam.global_step() == 0);
}

namespace {
/// Declares that it reads gradients: the session stores every gradient (nothing fused).
struct ReadsAllGradients {
  static constexpr bool reads_gradients = true;
};
/// x [8, 12] -> dense 16 + ReLU -> dense 5 -> softmax cross-entropy, trained 20 steps by
/// Momentum on one fixed batch; returns every weight after the last step.
std::vector<float> momentum_mlp(bool fused_allowed, bool nesterov) {
  constexpr int kIn = 12, kHidden = 16, kOut = 5, kBatch = 8;
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
  hf::nn::Dense<"dense", float> hidden(kIn, kHidden, hf::nn::glorot_uniform{3});
  hf::nn::Dense<"logits", float> output(kHidden, kOut, hf::nn::glorot_uniform{4});
  hf::GlobalStep gs;
  auto loss = hf::named<"loss">(
      hf::sparse_softmax_cross_entropy(labels, output(hf::relu(hidden(x)))));
  std::vector<float> xs_(kBatch * kIn);
  std::vector<std::int32_t> ys(kBatch);
  for (std::size_t i = 0; i < xs_.size(); ++i) xs_[i] = static_cast<float>((i * 37 % 19)) / 19.0f - 0.5f;
  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<std::int32_t>(i % kOut);
  const auto run = [&](auto& session) {
    for (int t = 0; t < 20; ++t)
      session.run(hf::feed<"x">(xs_.data(), kBatch, kIn), hf::feed<"labels">(ys.data(), kBatch));
  };
  const auto op = hf::MomentumOptimizer(0.1, 0.9, nesterov).minimize(loss, gs);
  if (fused_allowed) {
    hf::MonitoredTrainingSession s(op, hf::caller_feeds(kBatch), hf::hooks());
    static_assert(decltype(s)::update_fused<"dense/kernel">);
    run(s);
  } else {
    hf::MonitoredTrainingSession s(op, hf::caller_feeds(kBatch), hf::hooks(ReadsAllGradients{}));
    static_assert(!decltype(s)::update_fused<"dense/kernel">);
    run(s);
  }
  std::vector<float> out;
  for (const auto* m : {&hidden.kernel.value, &output.kernel.value})
    out.insert(out.end(), m->data(), m->data() + m->size());
  for (const auto* m : {&hidden.bias.value, &output.bias.value})
    out.insert(out.end(), m->data(), m->data() + m->size());
  return out;
}
}  // namespace

TEST_CASE("Momentum's fused update equals its stored-gradient update on an MLP", "[optim]") {
  for (bool nesterov : {false, true}) {
    INFO("use_nesterov " << nesterov);
    const auto fused = momentum_mlp(true, nesterov);
    const auto stored = momentum_mlp(false, nesterov);
    REQUIRE(fused.size() == stored.size());
    for (std::size_t i = 0; i < fused.size(); ++i) {
      INFO("weight " << i);
      CHECK(fused[i] == Approx(stored[i]).margin(1e-5));
    }
    CHECK(fused != momentum_mlp(true, !nesterov));  // the two formulas differ
  }
}

TEST_CASE("A session with Adam resumed from its checkpoint_dir continues as an uninterrupted run",
          "[optim][checkpoint]") {
  // TF's MonitoredTrainingSession restores every saved variable, slots and beta powers
  // included: run 2 steps saving each, restart, run the third; compare with 3 uninterrupted.
  using Quiet = hf::SessionOptions<hf::io::Saver, hf::SteadyClock, hf::NullLogger>;
  hookfuse_test::TempDir dir;
  {
    Model m;
    hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.01).minimize(m.loss(), m.gs),
                                   hf::caller_feeds(1),
                                   Quiet{.checkpoint_dir = dir.path().string(),
                                         .save_checkpoint_steps = 1},
                                   hf::hooks());
    for (int t = 0; t < 2; ++t) s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
  }
  Model r;
  hf::MonitoredTrainingSession s(hf::AdamOptimizer(0.01).minimize(r.loss(), r.gs),
                                 hf::caller_feeds(1),
                                 Quiet{.checkpoint_dir = dir.path().string(),
                                       .save_checkpoint_steps = 1},
                                 hf::hooks());
  REQUIRE(s.restored_from_checkpoint());
  CHECK(r.gs.value == 2);
  CHECK(s.optimizer_slots().non_slot[0] == Approx(0.729).margin(1e-12));  // beta1_power
  s.run(hf::feed<"x">(xs[2].data(), 1, 2));
  const auto uninterrupted = train(hf::AdamOptimizer(0.01));
  for (std::size_t i = 0; i < 3; ++i) CHECK(r.values()[i] == uninterrupted[i]);
}

namespace {
/// y = W x with W = 1 at the start, squared error against y; a metric outside the loss, a
/// cross-entropy of fed logits, throws when its label is out of range.
struct ThrowingMetricModel {
  hf::Placeholder<"x", double, 1> x;
  hf::Placeholder<"y", double, 1> y;
  hf::Placeholder<"z", double, 2> z;
  hf::Placeholder<"lab", std::int32_t, 1> lab;
  hf::Variable<"W", double, 1, 1> W;
  hf::GlobalStep gs;
  ThrowingMetricModel() { W.value(0, 0) = 1.0; }
  auto loss() { return hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W))); }
  auto xent() { return hf::named<"xent">(hf::sparse_softmax_cross_entropy(lab, z)); }
};
}  // namespace

TEST_CASE("Fused Momentum: a fetch that throws leaves the variable and its slot consistent",
          "[optim]") {
  // By hand (x = 1, y = 3, lr 0.1, momentum 0.9): step 1: g = 2 (W x - y) x = -4, accum = -4,
  // W = 1 + 0.4 = 1.4. Step 2: g = 2 (1.4 - 3) = -3.2, accum = 0.9 (-4) - 3.2 = -6.8,
  // W = 1.4 + 0.68 = 2.08. The second step's metric throws after the backward pass: the fused
  // update of W has happened with its slot (as for SGD, where the fused variables are updated
  // when a fetch throws), so W and W/Momentum agree; the global step is not incremented.
  ThrowingMetricModel m;
  hf::MonitoredTrainingSession s(hf::MomentumOptimizer(0.1, 0.9).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(1), hf::hooks(), m.xent());
  STATIC_REQUIRE(decltype(s)::update_fused<"W">);
  const std::vector<double> x{1.0}, y{3.0}, z{0.0, 0.0};
  const std::vector<std::int32_t> good{1}, bad{7};
  s.run<"xent">(hf::feed<"x">(x, 1), hf::feed<"y">(y, 1), hf::feed<"z">(z, 1),
                hf::feed<"lab">(good, 1));
  auto& accum = s.optimizer_slots().slots_of<decltype(m.W)>().slot[0];
  CHECK(m.W.value(0, 0) == Approx(1.4).margin(1e-12));
  CHECK(accum(0, 0) == Approx(-4.0).margin(1e-12));
  CHECK_THROWS_AS(s.run<"xent">(hf::feed<"x">(x, 1), hf::feed<"y">(y, 1), hf::feed<"z">(z, 1),
                                hf::feed<"lab">(bad, 1)),
                  hf::InvalidArgumentError);
  CHECK(accum(0, 0) == Approx(-6.8).margin(1e-12));
  CHECK(m.W.value(0, 0) == Approx(2.08).margin(1e-12));  // lr * accum applied with the slot
  CHECK(m.gs.value == 1);
}

namespace {
using QuietOptions = hf::SessionOptions<hf::io::Saver, hf::SteadyClock, hf::NullLogger>;
/// Trains `steps` steps of `optimizer` from w0 saving a checkpoint into `dir` after each.
template <class Opt>
void train_saving(const Opt& optimizer, const std::string& dir, int steps) {
  Model m;
  hf::MonitoredTrainingSession s(optimizer.minimize(m.loss(), m.gs), hf::caller_feeds(1),
                                 QuietOptions{.checkpoint_dir = dir, .save_checkpoint_steps = 1},
                                 hf::hooks());
  for (int t = 0; t < steps; ++t)
    s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
}
}  // namespace

TEST_CASE("Centered RMSProp's three slots round-trip through a checkpoint under TF's names",
          "[optim][checkpoint]") {
  hookfuse_test::TempDir dir;
  const std::string d = dir.path().string();
  train_saving(hf::RMSPropOptimizer<true>(0.01), d, 1);
  // The file holds the three slots under TF's keys, with the hand-computed values after one
  // step of W(1,0) (g = 2, decay 0.9): ms = 1 + (4 - 1) * 0.1 = 1.3, mg = 0.1 * 2 = 0.2,
  // mom = 0.01 * 2 / sqrt(1.3 - 0.04 + 1e-10).
  const hf::io::CheckpointReader reader((dir.path() / "model.ckpt-1").string());
  CHECK(reader.get_tensor<double>("W/RMSProp")[1] == Approx(1.3).margin(1e-12));
  CHECK(reader.get_tensor<double>("W/RMSProp_1")[1] == Approx(0.2).margin(1e-12));
  CHECK(reader.get_tensor<double>("W/RMSProp_2")[1] ==
        Approx(0.02 / std::sqrt(1.26 + 1e-10)).margin(1e-12));
  CHECK(reader.get_tensor<double>("b/RMSProp_1").size() == 1);

  // A restarted session restores them and continues as an uninterrupted run.
  Model r;
  hf::MonitoredTrainingSession s(hf::RMSPropOptimizer<true>(0.01).minimize(r.loss(), r.gs),
                                 hf::caller_feeds(1),
                                 QuietOptions{.checkpoint_dir = d, .save_checkpoint_steps = 1},
                                 hf::hooks());
  REQUIRE(s.restored_from_checkpoint());
  const auto& slots = s.optimizer_slots().slots_of<decltype(r.W)>();
  CHECK(slots.slot[1](1, 0) == Approx(0.2).margin(1e-12));  // mg restored into mg
  CHECK(slots.slot[2](1, 0) == Approx(0.02 / std::sqrt(1.26 + 1e-10)).margin(1e-12));
  for (int t = 1; t < 3; ++t) s.run(hf::feed<"x">(xs[static_cast<std::size_t>(t)].data(), 1, 2));
  const auto uninterrupted = train(hf::RMSPropOptimizer<true>(0.01));
  for (std::size_t i = 0; i < 3; ++i) CHECK(r.values()[i] == uninterrupted[i]);
}

TEST_CASE("A plain RMSProp checkpoint and a centered one do not restore into each other",
          "[optim][checkpoint]") {
  // Both save "<var>/RMSProp_1": the momentum when plain, the mean gradient when centered (TF's
  // Saver would load one as the other). The restore refuses, naming the slot, and writes nothing.
  hookfuse_test::TempDir plain_dir, centered_dir;
  train_saving(hf::RMSPropOptimizer(0.01), plain_dir.path().string(), 2);
  train_saving(hf::RMSPropOptimizer<true>(0.01), centered_dir.path().string(), 2);

  SECTION("plain checkpoint, centered session: <var>/RMSProp_2 is missing") {
    Model m;
    const auto make = [&] {
      hf::MonitoredTrainingSession s(
          hf::RMSPropOptimizer<true>(0.01).minimize(m.loss(), m.gs), hf::caller_feeds(1),
          QuietOptions{.checkpoint_dir = plain_dir.path().string()}, hf::hooks());
    };
    CHECK_THROWS_AS(make(), hf::io::NotFoundError);
    CHECK_THROWS_WITH(make(), Catch::Contains("tensor 'W/RMSProp_2' for variable 'W/RMSProp_2'") &&
                                  Catch::Contains("'b/RMSProp_2'") &&
                                  Catch::Contains("nothing was written"));
    CHECK(m.values() == w0);
    CHECK(m.gs.value == 0);
  }
  SECTION("centered checkpoint, plain session: <var>/RMSProp_2 is there") {
    Model m;
    const auto make = [&] {
      hf::MonitoredTrainingSession s(
          hf::RMSPropOptimizer(0.01).minimize(m.loss(), m.gs), hf::caller_feeds(1),
          QuietOptions{.checkpoint_dir = centered_dir.path().string()}, hf::hooks());
    };
    CHECK_THROWS_AS(make(), hf::ValueError);
    CHECK_THROWS_WITH(make(), Catch::Contains("tensor 'W/RMSProp_1' cannot be restored into "
                                              "variable 'W/RMSProp_1'") &&
                                  Catch::Contains("also holds 'W/RMSProp_2'") &&
                                  Catch::Contains("saved by a centered RMSPropOptimizer") &&
                                  Catch::Contains("'b/RMSProp_1'"));
    CHECK(m.values() == w0);
    CHECK(m.gs.value == 0);
  }
  SECTION("each restores into its own kind") {
    Model p, c;
    hf::MonitoredTrainingSession sp(hf::RMSPropOptimizer(0.01).minimize(p.loss(), p.gs),
                                    hf::caller_feeds(1),
                                    QuietOptions{.checkpoint_dir = plain_dir.path().string()},
                                    hf::hooks());
    hf::MonitoredTrainingSession sc(hf::RMSPropOptimizer<true>(0.01).minimize(c.loss(), c.gs),
                                    hf::caller_feeds(1),
                                    QuietOptions{.checkpoint_dir = centered_dir.path().string()},
                                    hf::hooks());
    CHECK(sp.restored_from_checkpoint());
    CHECK(sc.restored_from_checkpoint());
    CHECK(p.gs.value == 2);
    CHECK(c.gs.value == 2);
  }
}
