// tests/test_optimizers.cpp: MomentumOptimizer, AdamOptimizer, RMSPropOptimizer and
// AdagradOptimizer against TensorFlow's update formulas, their slot names, and which of them fuse
// into the backward pass (their slots in checkpoints: test_optimizers_checkpoint.cpp).
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
#include <string>
#include <string_view>
#include <vector>

#include "optimizer_test_model.hpp"

namespace hf = hookfuse;
using namespace optimizer_test;

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
