// tests/test_lr_schedule_hooks.cpp: LearningRateSchedulerHook and ReduceLROnPlateauHook in real
// sessions, against SGD trajectories and plateau decisions computed by hand in each test.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <hookfuse/hookfuse.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "capturing_logger.hpp"

namespace hf = hookfuse;

namespace {

using hookfuse_test::CapturingLogger;
using hookfuse_test::Line;
using hookfuse_test::Lines;
/// Stores every line in a vector owned by the test (hooks are copied into the session).

/// One-feature linear regression in double: loss = mean((W x + b - y)^2), W = 0.5, b = -0.25 at
/// the start. With one row, dloss/dW = 2 e x and dloss/db = 2 e for e = W x + b - y.
struct Model {
  hf::Placeholder<"x", double, 1> x;
  hf::Placeholder<"y", double, 1> y;
  hf::Variable<"W", double, 1, 1> W;
  hf::Variable<"b", double, 1, 1> b;
  hf::GlobalStep gs;
  explicit Model(std::int64_t step = 0) {
    W.value(0, 0) = 0.5;
    b.value(0, 0) = -0.25;
    gs.value = step;
  }
  auto loss() { return hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b)); }
  /// "probe": sum(x) over the batch, outside the loss's graph (computed only when fetched).
  auto probe() { return hf::named<"probe">(hf::reduce_sum(x)); }
};

/// Run t (from 0) feeds xs[t % 4], ys[t % 4].
constexpr std::array<double, 4> xs = {1.0, 2.0, -1.0, 0.5};
constexpr std::array<double, 4> ys = {2.0, 1.0, 0.0, -1.0};
struct SequenceInput {
  double x = 0.0, y = 0.0;
  std::size_t t = 0;
  bool next() {
    x = xs[t % 4];
    y = ys[t % 4];
    ++t;
    return true;
  }
  hf::Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

/// SGD by hand from W = 0.5, b = -0.25 with rate lr(t) at run t: returns {W, b}.
template <class Rate>
std::array<double, 2> sgd_by_hand(int runs, Rate lr) {
  double W = 0.5, b = -0.25;
  for (int t = 0; t < runs; ++t) {
    const double x = xs[static_cast<std::size_t>(t) % 4], y = ys[static_cast<std::size_t>(t) % 4];
    const double e = W * x + b - y;
    const double gW = 2 * e * x, gb = 2 * e;
    W -= lr(t) * gW;
    b -= lr(t) * gb;
  }
  return {W, b};
}

/// Keeps W's gradient stored (no fused update), to check both update paths.
struct ReadsGradientOfW {
  hf::SessionRunArgs<"gradients/W"> before_run(hf::SessionRunContext&) { return {}; }
};

}  // namespace

TEST_CASE("LearningRateSchedulerHook: the step with global step s trains with schedule(s)",
          "[hooks][lr_schedule]") {
  // piecewise_constant({1, 3}, {0.1, 0.05, 0.01}): steps 0, 1 -> 0.1; 2, 3 -> 0.05; 4.. -> 0.01.
  auto rate = [](int t) { return t <= 1 ? 0.1 : t <= 3 ? 0.05 : 0.01; };
  const auto want = sgd_by_hand(6, rate);
  // Without the schedule (0.1 throughout) the trajectory differs: the check can fail.
  const auto constant = sgd_by_hand(6, [](int) { return 0.1; });
  REQUIRE(std::abs(constant[0] - want[0]) > 1e-3);

  SECTION("fused SGD update") {
    Model m;
    hf::MonitoredTrainingSession s(
        hf::GradientDescentOptimizer(1.0).minimize(m.loss(), m.gs), SequenceInput{},
        hf::hooks(
            hf::LearningRateSchedulerHook(hf::piecewise_constant({1, 3}, {0.1, 0.05, 0.01}))));
    STATIC_REQUIRE(decltype(s)::update_fused<"W">);
    for (int i = 0; i < 6; ++i) s.run();
    CHECK(m.W.value(0, 0) == Approx(want[0]).epsilon(1e-12));
    CHECK(m.b.value(0, 0) == Approx(want[1]).epsilon(1e-12));
    CHECK(s.optimizer().learning_rate() == 0.01);
    CHECK(s.hook<0>().learning_rate() == 0.01);
  }
  SECTION("stored gradients") {
    Model m;
    hf::MonitoredTrainingSession s(
        hf::GradientDescentOptimizer(1.0).minimize(m.loss(), m.gs), SequenceInput{},
        hf::hooks(ReadsGradientOfW{}, hf::LearningRateSchedulerHook(
                                          hf::piecewise_constant({1, 3}, {0.1, 0.05, 0.01}))));
    STATIC_REQUIRE_FALSE(decltype(s)::update_fused<"W">);
    for (int i = 0; i < 6; ++i) s.run();
    CHECK(m.W.value(0, 0) == Approx(want[0]).epsilon(1e-12));
    CHECK(m.b.value(0, 0) == Approx(want[1]).epsilon(1e-12));
  }
}

TEST_CASE("LearningRateSchedulerHook: a restored global step starts the schedule there",
          "[hooks][lr_schedule]") {
  // exponential_decay(0.1, 2, 0.5, staircase): 0.1 * 0.5^floor(s / 2). From global step 4:
  // runs 0..2 have s = 4, 5, 6 -> 0.025, 0.025, 0.0125.
  const std::array<double, 3> rates = {0.025, 0.025, 0.0125};
  const auto want = sgd_by_hand(3, [&](int t) { return rates[static_cast<std::size_t>(t)]; });
  Model m(4);
  hf::MonitoredTrainingSession s(
      hf::GradientDescentOptimizer(1.0).minimize(m.loss(), m.gs), SequenceInput{},
      hf::hooks(hf::LearningRateSchedulerHook(hf::exponential_decay(0.1, 2, 0.5, true))));
  for (int i = 0; i < 3; ++i) s.run();
  CHECK(m.gs.value == 7);
  CHECK(m.W.value(0, 0) == Approx(want[0]).epsilon(1e-12));
  CHECK(m.b.value(0, 0) == Approx(want[1]).epsilon(1e-12));
}

TEST_CASE("LearningRateSchedulerHook: drives a slot optimizer (Momentum) too",
          "[hooks][lr_schedule]") {
  // ApplyMomentum: accum = accum * momentum + grad; var -= lr * accum. lr(t) = 0.1 / (t + 1).
  double W = 0.5, b = -0.25, aW = 0.0, ab = 0.0;
  for (int t = 0; t < 4; ++t) {
    const double x = xs[static_cast<std::size_t>(t)], y = ys[static_cast<std::size_t>(t)];
    const double e = W * x + b - y, lr = 0.1 / (t + 1);
    aW = aW * 0.9 + 2 * e * x;
    ab = ab * 0.9 + 2 * e;
    W -= lr * aW;
    b -= lr * ab;
  }
  Model m;
  auto schedule = [](std::int64_t s) { return 0.1 / static_cast<double>(s + 1); };
  hf::MonitoredTrainingSession s(hf::MomentumOptimizer(1.0, 0.9).minimize(m.loss(), m.gs),
                                 SequenceInput{},
                                 hf::hooks(hf::LearningRateSchedulerHook(schedule)));
  for (int i = 0; i < 4; ++i) s.run();
  CHECK(m.W.value(0, 0) == Approx(W).epsilon(1e-12));
  CHECK(m.b.value(0, 0) == Approx(b).epsilon(1e-12));
}

TEST_CASE("LearningRateSchedulerHook: verbose logs each change, a non-finite rate throws",
          "[hooks][lr_schedule]") {
  std::vector<Line> lines;
  {
    Model m;
    hf::MonitoredTrainingSession s(
        hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs), SequenceInput{},
        hf::hooks(hf::LearningRateSchedulerHook(hf::piecewise_constant({1, 3}, {0.1, 0.05, 0.01}),
                                                {.verbose = true}, CapturingLogger{&lines})));
    for (int i = 0; i < 5; ++i) s.run();
  }
  // The optimizer starts at 0.1 = schedule(0): the first change is at step 2, then at 4.
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].text == "Step 2: LearningRateScheduler setting learning rate to 0.05.");
  CHECK(lines[1].text == "Step 4: LearningRateScheduler setting learning rate to 0.01.");
  CHECK(lines[0].severity == hf::Severity::info);

  Model m;
  auto bad = [](std::int64_t s) { return s < 2 ? 0.1 : std::nan(""); };
  hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs),
                                 SequenceInput{}, hf::hooks(hf::LearningRateSchedulerHook(bad)));
  s.run();
  s.run();
  const double W = m.W.value(0, 0);
  CHECK_THROWS_WITH(s.run(), "LearningRateSchedulerHook: the schedule returned nan at global "
                             "step 2; a learning rate must be finite and >= 0");
  CHECK(m.W.value(0, 0) == W);  // thrown before the step
  CHECK(m.gs.value == 2);
}

TEST_CASE("LearningRateSchedulerHook: outside a session it has no optimizer",
          "[hooks][lr_schedule]") {
  hf::LearningRateSchedulerHook hook(hf::cosine_decay(0.1, 10));
  std::int64_t step = 0;
  hf::SessionRunContext ctx(&step);
  CHECK_THROWS_AS(hook.before_run(ctx), std::logic_error);
}

// =============================================================================================
// ReduceLROnPlateauHook
// =============================================================================================

namespace {
/// Run t (from 0) feeds x = (*seq)[t] (so "probe" = "accuracy" = seq[t]) and y = 0.
struct PlateauInput {
  const std::vector<double>* seq;
  double x = 0.0, y = 0.0;
  std::size_t t = 0;
  bool next() {
    if (t >= seq->size()) return false;
    x = (*seq)[t++];
    return true;
  }
  hf::Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};
}  // namespace

// tf-keras 2.15.0, tf_keras/callbacks.py, ReduceLROnPlateau.on_epoch_end (the rules of every
// ReduceLROnPlateauHook case here):
//             if self.in_cooldown():
//                 self.cooldown_counter -= 1
//                 self.wait = 0
//
//             if self.monitor_op(current, self.best):
//                 self.best = current
//                 self.wait = 0
//             elif not self.in_cooldown():
//                 self.wait += 1
//                 if self.wait >= self.patience:
//                     old_lr = backend.get_value(self.model.optimizer.lr)
//                     if old_lr > np.float32(self.min_lr):
//                         new_lr = old_lr * self.factor
//                         new_lr = max(new_lr, self.min_lr)
//                         backend.set_value(self.model.optimizer.lr, new_lr)
//                         if self.verbose > 0:
//                             io_utils.print_msg(
//                                 f"\nEpoch {epoch +1}: "
//                                 "ReduceLROnPlateau reducing "
//                                 f"learning rate to {new_lr}."
//                             )
//                         self.cooldown_counter = self.cooldown
//                         self.wait = 0
// The optimizer's lr is a float32 variable, so old_lr is an np.float32; with numpy 1.24 (tf-keras
// 2.15.0's requirements.txt) old_lr * self.factor, a float32 scalar times a Python float, is an
// np.float64 of the float32 value times the factor; f"{new_lr}" is Python's repr of that double,
// or of min_lr when max() picks it; set_value rounds it into the float32 variable.
namespace {
/// old_lr * self.factor as Keras computes it from the rate `lr` its variable was set to.
double keras_product(double lr, double factor) {
  return static_cast<double>(static_cast<float>(lr)) * factor;
}
}  // namespace

TEST_CASE("ReduceLROnPlateauHook: Keras' wait counter, cooldown and min_lr on a known sequence",
          "[hooks][plateau]") {
  // By hand, with mode min, min_delta 0.25, patience 2, factor 0.5, cooldown 1, min_lr 2e-4,
  // from lr 1e-3 (one check per run); r1 = float32(1e-3) * 0.5, r2 = float32(r1) * 0.5:
  //  t  value  cooldown?        improved (v < best - 0.25)  wait  lr after
  //  0  5.0                     yes (best inf -> 5)         0     1e-3
  //  1  4.0                     yes (best 4)                0     1e-3
  //  2  4.0                     no                          1     1e-3
  //  3  4.5                     no                          2 -> reduce: r1, cooldown 1, wait 0
  //  4  4.2    1 -> 0, wait 0   no, not in cooldown now     1     r1
  //  5  4.1                     no                          2 -> reduce: r2, cooldown 1
  //  6  3.0    1 -> 0, wait 0   yes (best 3)                0     r2
  //  7  3.5                     no                          1     r2
  //  8  3.5                     no                          2 -> max(float32(r2) * 0.5, 2e-4)
  //  9  3.9    1 -> 0           no                          1     2e-4
  // 10  3.9                     no                          2, float32(2e-4) not > float32(2e-4)
  // 11  2.8                     no (2.8 >= 2.75)            3     2e-4
  // 12  2.7                     yes (best 2.7)              0     2e-4
  // Python: repr(0.0010000000474974513 * 0.5) is "0.0005000000237487257", half of that
  // "0.0002500000118743628" (halving is exact in float32 too), and 0.0001250000059371814 < 2e-4.
  const double r1 = keras_product(1e-3, 0.5);
  const double r2 = keras_product(r1, 0.5);
  REQUIRE(r1 == 0.0005000000237487257);
  REQUIRE(r2 == 0.0002500000118743628);
  REQUIRE(keras_product(r2, 0.5) < 2e-4);
  const std::vector<double> seq = {5.0, 4.0, 4.0, 4.5, 4.2, 4.1, 3.0, 3.5, 3.5, 3.9, 3.9, 2.8, 2.7};
  const std::array<double, 13> lr = {1e-3, 1e-3, 1e-3, r1,   r1,   r2,  r2,
                                     r2,   2e-4, 2e-4, 2e-4, 2e-4, 2e-4};
  const std::array<std::int64_t, 13> wait = {0, 0, 1, 0, 1, 0, 0, 1, 0, 1, 2, 3, 0};
  std::vector<Line> lines;
  Model m;
  using Hook = hf::ReduceLROnPlateauHook<"probe", CapturingLogger>;
  hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(1e-3).minimize(m.loss(), m.gs),
                                 PlateauInput{&seq},
                                 hf::hooks(Hook({.factor = 0.5,
                                                 .patience = 2,
                                                 .mode = hf::MonitorMode::min,
                                                 .min_delta = 0.25,
                                                 .cooldown = 1,
                                                 .min_lr = 2e-4},
                                                CapturingLogger{&lines})),
                                 m.probe());
  for (std::size_t t = 0; t < seq.size(); ++t) {
    INFO("run " << t);
    s.run();
    CHECK(s.optimizer().learning_rate() == lr[t]);
    CHECK(s.hook<0>().wait() == wait[t]);
  }
  CHECK(s.hook<0>().best() == 2.7);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].text ==
        "Step 4: ReduceLROnPlateau reducing learning rate to 0.0005000000237487257.");
  CHECK(lines[1].text ==
        "Step 6: ReduceLROnPlateau reducing learning rate to 0.0002500000118743628.");
  CHECK(lines[2].text == "Step 9: ReduceLROnPlateau reducing learning rate to 0.0002.");
  CHECK(lines[0].severity == hf::Severity::info);
}

TEST_CASE("ReduceLROnPlateauHook: every_n_iter checks only runs n, 2n, ..., mode auto on 'acc'",
          "[hooks][plateau]") {
  // "accuracy" contains "acc": higher is better. every_n_iter 2 checks runs t = 1, 3, 5, 7; the
  // 9.0 of the other runs would each be an improvement if they were looked at.
  // Checks: 0.5 (best), 0.6 (best), 0.6 (not > 0.6: wait 1 = patience -> float32(0.1) * 0.1 at
  // step 6), 0.55 (wait 1 -> float32 of that * 0.1 at step 8; min_lr 0).
  // Python: repr(0.10000000149011612 * 0.1) is "0.010000000149011612"; float32 of it is
  // 0.009999999776482582, and repr(0.009999999776482582 * 0.1) is "0.0009999999776482583".
  const double r1 = keras_product(0.1, 0.1);
  const double r2 = keras_product(r1, 0.1);
  REQUIRE(r1 == 0.010000000149011612);
  REQUIRE(r2 == 0.0009999999776482583);
  const std::vector<double> seq = {9.0, 0.5, 9.0, 0.6, 9.0, 0.6, 9.0, 0.55};
  const std::array<double, 8> lr = {0.1, 0.1, 0.1, 0.1, 0.1, r1, r1, r2};
  std::vector<Line> lines;
  Model m;
  auto accuracy = hf::named<"accuracy">(hf::reduce_sum(m.x));
  hf::MonitoredTrainingSession s(
      hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs), PlateauInput{&seq},
      hf::hooks(hf::ReduceLROnPlateauHook<"accuracy", CapturingLogger>(
          {.patience = 1, .min_delta = 0.0, .every_n_iter = 2}, CapturingLogger{&lines})),
      accuracy);
  CHECK(s.hook<0>().maximize());
  for (std::size_t t = 0; t < seq.size(); ++t) {
    INFO("run " << t);
    s.run();
    CHECK(s.optimizer().learning_rate() == lr[t]);
  }
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].text ==
        "Step 6: ReduceLROnPlateau reducing learning rate to 0.010000000149011612.");
  CHECK(lines[1].text ==
        "Step 8: ReduceLROnPlateau reducing learning rate to 0.0009999999776482583.");
}

TEST_CASE("ReduceLROnPlateauHook: at min_lr by float32 rounding it does not reduce again",
          "[hooks][plateau]") {
  // factor 0.1, min_lr 0.001, patience 1, cooldown 1, mode min, min_delta 0, from lr 0.1, the
  // value 1.0 at every check. Keras, in float32 as its variable holds the rate:
  //  e  cooldown         improved  wait  old_lr (float32)         > float32(0.001)?  lr set
  //  0                   yes (inf) 0     -                        -                  0.1
  //  1                   no        1     float32(0.1)             yes: new1, cooldown 1, wait 0
  //  2  1 -> 0, wait 0   no        1     float32(new1)            yes: max(new2, 0.001) = 0.001
  //  3  1 -> 0, wait 0   no        1     float32(0.001)           no (equal): nothing
  //  4                   no        2     float32(0.001)           no: nothing
  //  5                   no        3     float32(0.001)           no: nothing
  // new1 = float32(0.1) * 0.1 = 0.010000000149011612 (repr in Python), new2 = float32(new1) *
  // 0.1 = 0.0009999999776482583 < 0.001, so max() gives min_lr, printed "0.001". In double, 0.1
  // * 0.1 * 0.1 is 0.0010000000000000002 > 0.001: a double comparison would reduce a third time.
  const float min_lr32 = static_cast<float>(0.001);  // np.float32(self.min_lr)
  const float lr0 = static_cast<float>(0.1);
  REQUIRE(lr0 > min_lr32);
  const double new1 = static_cast<double>(lr0) * 0.1;
  REQUIRE(new1 == 0.010000000149011612);
  const auto lr1 = static_cast<float>(new1);  // backend.set_value into the float32 variable
  REQUIRE(lr1 > min_lr32);
  const double new2 = static_cast<double>(lr1) * 0.1;
  REQUIRE(new2 < 0.001);  // max(new_lr, self.min_lr) is min_lr
  const auto lr2 = static_cast<float>(0.001);
  REQUIRE_FALSE(lr2 > min_lr32);  // e3..e5: no reduction
  const std::array<double, 6> lr = {0.1, new1, 0.001, 0.001, 0.001, 0.001};
  const std::array<std::int64_t, 6> wait = {0, 0, 0, 1, 2, 3};
  const std::array<std::int64_t, 6> cooldown = {0, 1, 1, 0, 0, 0};

  const std::vector<double> seq(6, 1.0);
  std::vector<Line> lines;
  Model m;
  using Hook = hf::ReduceLROnPlateauHook<"probe", CapturingLogger>;
  hf::MonitoredTrainingSession s(
      hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs), PlateauInput{&seq},
      hf::hooks(Hook({.factor = 0.1,
                      .patience = 1,
                      .mode = hf::MonitorMode::min,
                      .min_delta = 0.0,
                      .cooldown = 1,
                      .min_lr = 0.001},
                     CapturingLogger{&lines})),
      m.probe());
  for (std::size_t e = 0; e < seq.size(); ++e) {
    INFO("check " << e);
    s.run();
    CHECK(s.optimizer().learning_rate() == lr[e]);
    CHECK(s.hook<0>().wait() == wait[e]);
    CHECK(s.hook<0>().cooldown_counter() == cooldown[e]);
  }
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].text ==
        "Step 2: ReduceLROnPlateau reducing learning rate to 0.010000000149011612.");
  CHECK(lines[1].text == "Step 3: ReduceLROnPlateau reducing learning rate to 0.001.");
}

TEST_CASE("ReduceLROnPlateauHook: requests its tensor only on the runs it checks",
          "[hooks][plateau]") {
  hf::ReduceLROnPlateauHook<"loss", hf::NullLogger> hook({.every_n_iter = 3});
  std::int64_t step = 0;
  hf::SessionRunContext ctx(&step);
  std::vector<bool> active;
  for (int i = 0; i < 7; ++i) active.push_back(hook.before_run(ctx).active);
  CHECK(active == std::vector<bool>{false, false, true, false, false, true, false});
  hf::ReduceLROnPlateauHook<"loss", hf::NullLogger> every;
  CHECK(every.before_run(ctx).active);
  CHECK(every.before_run(ctx).active);
}

TEST_CASE("ReduceLROnPlateauHook: mode and argument checks", "[hooks][plateau]") {
  using hf::MonitorMode;
  CHECK_FALSE(hf::ReduceLROnPlateauHook<"loss", hf::NullLogger>().maximize());
  CHECK(hf::ReduceLROnPlateauHook<"val_acc", hf::NullLogger>().maximize());
  CHECK_FALSE(
      hf::ReduceLROnPlateauHook<"accuracy", hf::NullLogger>({.mode = MonitorMode::min}).maximize());
  CHECK(hf::ReduceLROnPlateauHook<"loss", hf::NullLogger>({.mode = MonitorMode::max}).maximize());
  CHECK(hf::ReduceLROnPlateauHook<"loss", hf::NullLogger>().best() == INFINITY);
  using H = hf::ReduceLROnPlateauHook<"loss", hf::NullLogger>;
  CHECK_THROWS_WITH(H({.factor = 1.0}),
                    "ReduceLROnPlateauHook: factor must be in [0, 1) (Keras does not support a "
                    "factor >= 1.0), got 1");
  CHECK_THROWS_WITH(H({.factor = -0.5}), Catch::EndsWith("got -0.5"));
  CHECK_THROWS_WITH(H({.factor = NAN}), Catch::EndsWith("got nan"));
  CHECK_THROWS_WITH(H({.patience = -1}),
                    "ReduceLROnPlateauHook: patience must be >= 0, got -1");
  CHECK_THROWS_WITH(H({.mode = static_cast<MonitorMode>(7)}),
                    "ReduceLROnPlateauHook: mode must be automatic, min or max, got 7");
  CHECK_THROWS_WITH(H({.cooldown = -1}), Catch::Contains("cooldown"));
  CHECK_THROWS_WITH(H({.min_delta = -1e-3}), Catch::Contains("min_delta"));
  CHECK_THROWS_WITH(H({.min_lr = NAN}), Catch::Contains("min_lr"));
  CHECK_THROWS_WITH(H({.every_n_iter = 0}), Catch::Contains("every_n_iter must be > 0"));
}

TEST_CASE("ReduceLROnPlateauHook: a non-scalar monitored tensor is refused at a check",
          "[hooks][plateau]") {
  // A [1, 2] value handed to after_run as the session would.
  hf::ReduceLROnPlateauHook<"t", hf::NullLogger> hook;
  const double v[2] = {1.0, 2.0};
  hf::SessionRunValues<"t"> values{};
  values.results[0] = hf::TensorValue{v, 1, 2, 2, 1, hf::DType::float64};
  std::int64_t step = 0;
  hf::SessionRunContext ctx(&step);
  REQUIRE(hook.before_run(ctx).active);
  CHECK_THROWS_WITH(hook.after_run(ctx, values), Catch::Contains("must be a scalar ([1, 1])"));
}

TEST_CASE("The schedule hooks forget the optimizer when their session ends", "[hooks][plateau]") {
  // A hook kept with std::ref outlives its session; update() by hand afterwards must not reach
  // the destroyed optimizer (it throws std::logic_error instead).
  hf::ReduceLROnPlateauHook<"loss", hf::NullLogger> plateau({.patience = 0});
  auto schedule = [](std::int64_t) { return 0.05; };
  hf::LearningRateSchedulerHook<decltype(schedule), hf::NullLogger> scheduler(schedule);
  {
    Model m;
    hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs),
                                   SequenceInput{}, hf::hooks(std::ref(plateau)));
    s.run();
    // Bound: 100 is worse than run 1's loss ((0.5 - 0.25 - 2)^2 = 3.0625), patience 0: the rate
    // drops by the factor 0.1.
    plateau.update(100.0, 1);
    CHECK(s.optimizer().learning_rate() == Approx(0.01));
  }
  CHECK_THROWS_AS(plateau.update(200.0, 2), std::logic_error);  // worse again: would reduce
  {
    Model m;
    hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs),
                                   SequenceInput{}, hf::hooks(std::ref(scheduler)));
    s.run();
    CHECK(s.optimizer().learning_rate() == 0.05);
  }
}
