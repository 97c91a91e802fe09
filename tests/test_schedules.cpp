// tests/test_schedules.cpp: the learning-rate schedules (optim/schedules.hpp) at exact steps,
// against hand computations written here from TensorFlow's documented formulas.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "hookfuse/optim/schedules.hpp"

namespace hf = hookfuse;

static_assert(hf::LearningRateSchedule<hf::ExponentialDecay>);
static_assert(hf::LearningRateSchedule<hf::PiecewiseConstantDecay<2>>);
static_assert(hf::LearningRateSchedule<hf::CosineDecay>);
static_assert(hf::LearningRateSchedule<hf::LinearWarmup<hf::CosineDecay>>);
static_assert(hf::LearningRateSchedule<double (*)(std::int64_t)>);
static_assert(!hf::LearningRateSchedule<int>);

namespace {
double exact(double v) { return v; }
}  // namespace

TEST_CASE("exponential_decay: lr * rate^(step / decay_steps), floored with staircase",
          "[schedules]") {
  // tf.compat.v1.train.exponential_decay docs:
  //   decayed_learning_rate = learning_rate * decay_rate ^ (global_step / decay_steps)
  //   staircase=True: global_step / decay_steps is an integer division.
  const auto smooth = hf::exponential_decay(0.1, 100, 0.5);
  CHECK(smooth(0) == exact(0.1));
  CHECK(smooth(100) == Approx(0.05).epsilon(1e-15));   // 0.1 * 0.5^1
  CHECK(smooth(200) == Approx(0.025).epsilon(1e-15));  // 0.1 * 0.5^2
  // 0.1 * 0.5^0.5 = 0.1 / sqrt(2) = 0.0707106781186547...
  CHECK(smooth(50) == Approx(0.07071067811865475).epsilon(1e-14));
  // 0.1 * 0.5^1.5 = 0.05 / sqrt(2) = 0.0353553390593273...
  CHECK(smooth(150) == Approx(0.035355339059327376).epsilon(1e-14));

  const auto stairs = hf::exponential_decay(0.1, 100, 0.5, /*staircase=*/true);
  CHECK(stairs(0) == exact(0.1));
  CHECK(stairs(99) == exact(0.1));  // floor(0.99) = 0
  CHECK(stairs(100) == Approx(0.05).epsilon(1e-15));
  CHECK(stairs(199) == Approx(0.05).epsilon(1e-15));
  CHECK(stairs(250) == Approx(0.025).epsilon(1e-15));  // floor(2.5) = 2
  CHECK(stairs.staircase());
  CHECK(stairs.decay_steps() == 100);

  // decay_rate 0.96 every 1000 steps at step 2500 (smooth): 0.96^2.5 = 0.9216 * sqrt(0.96)
  //   sqrt(0.96) = 0.9797958971132712; 0.9216 * that = 0.9029799...; * 0.01
  CHECK(hf::exponential_decay(0.01, 1000, 0.96)(2500) ==
        Approx(0.01 * 0.9216 * 0.9797958971132712).epsilon(1e-14));
}

TEST_CASE("exponential_decay: bad arguments are std::invalid_argument naming the field",
          "[schedules]") {
  CHECK_THROWS_WITH(hf::exponential_decay(0.1, 0, 0.5),
                    "exponential_decay: decay_steps must be > 0, got 0");
  CHECK_THROWS_AS(hf::exponential_decay(0.1, -5, 0.5), std::invalid_argument);
  CHECK_THROWS_WITH(hf::exponential_decay(NAN, 10, 0.5), Catch::Contains("learning_rate"));
  CHECK_THROWS_WITH(hf::exponential_decay(0.1, 10, -0.5), Catch::Contains("decay_rate"));
  CHECK_THROWS_WITH(hf::exponential_decay(0.1, 10, INFINITY), Catch::Contains("decay_rate"));
}

TEST_CASE("piecewise_constant: x <= b0 -> v0, b0 < x <= b1 -> v1, x > b1 -> v2", "[schedules]") {
  // tf.compat.v1.train.piecewise_constant docs: boundaries [100000, 110000], values
  // [1.0, 0.5, 0.1] give 1.0 for the first 100001 steps, 0.5 for the next 10000, then 0.1.
  const auto s = hf::piecewise_constant({100000, 110000}, {1.0, 0.5, 0.1});
  static_assert(std::is_same_v<std::remove_const_t<decltype(s)>, hf::PiecewiseConstantDecay<2>>);
  CHECK(s(0) == exact(1.0));
  CHECK(s(100000) == exact(1.0));  // inclusive on the left value
  CHECK(s(100001) == exact(0.5));
  CHECK(s(110000) == exact(0.5));
  CHECK(s(110001) == exact(0.1));
  CHECK(s(-3) == exact(1.0));

  // Constructed from std::array, and the Keras name with class template argument deduction.
  const hf::PiecewiseConstantDecay k(std::array<std::int64_t, 1>{10},
                                     std::array<double, 2>{0.2, 0.02});
  CHECK(k(10) == exact(0.2));
  CHECK(k(11) == exact(0.02));
  // No boundary: one value for every step.
  const hf::PiecewiseConstantDecay<0> constant(std::array<std::int64_t, 0>{},
                                               std::array<double, 1>{0.3});
  CHECK(constant(0) == exact(0.3));
  CHECK(constant(1'000'000) == exact(0.3));
  // Stored in the object: nothing on the heap.
  static_assert(sizeof(hf::PiecewiseConstantDecay<2>) == 2 * 8 + 3 * 8);
}

TEST_CASE("piecewise_constant: boundaries strictly increasing, values finite", "[schedules]") {
  CHECK_THROWS_WITH(hf::piecewise_constant({200, 100}, {1.0, 0.5, 0.1}),
                    "piecewise_constant: boundaries must be strictly increasing, got "
                    "boundaries[1] = 100 after boundaries[0] = 200");
  CHECK_THROWS_AS(hf::piecewise_constant({100, 100}, {1.0, 0.5, 0.1}), std::invalid_argument);
  CHECK_THROWS_WITH(hf::piecewise_constant({100}, {1.0, NAN}), Catch::Contains("finite"));
  // values.size() != boundaries.size() + 1 is a compile error (static_assert in the
  // constructor): tests/compile_fail/piecewise_constant_sizes.cpp.
}

TEST_CASE("cosine_decay: lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, T) / T)) + alpha)",
          "[schedules]") {
  // tf.compat.v1.train.cosine_decay docs:
  //   global_step = min(global_step, decay_steps)
  //   cosine_decay = 0.5 * (1 + cos(pi * global_step / decay_steps))
  //   decayed = (1 - alpha) * cosine_decay + alpha;  decayed_learning_rate = lr * decayed
  const auto s = hf::cosine_decay(0.1, 100);
  CHECK(s(0) == Approx(0.1).epsilon(1e-15));
  CHECK(s(50) == Approx(0.05).epsilon(1e-14));  // cos(pi/2) = 0
  // step 25: 0.5 * (1 + cos(pi/4)) = 0.5 * (1 + 0.7071067811865476) = 0.8535533905932737
  CHECK(s(25) == Approx(0.08535533905932737).epsilon(1e-14));
  CHECK(s(100) == Approx(0.0).margin(1e-17));  // cos(pi) = -1
  CHECK(s(500) == Approx(0.0).margin(1e-17));  // clamped at decay_steps

  const auto floor = hf::cosine_decay(0.1, 100, 0.1);
  // step 50: (0.9 * 0.5 + 0.1) * 0.1 = 0.055; from step 100 on: alpha * lr = 0.01
  CHECK(floor(50) == Approx(0.055).epsilon(1e-14));
  CHECK(floor(100) == Approx(0.01).epsilon(1e-14));
  CHECK(floor(1000) == Approx(0.01).epsilon(1e-14));
  // step 75: 0.5 * (1 + cos(3 pi / 4)) = 0.5 * (1 - 0.7071067811865476) = 0.1464466094067262
  //   (0.9 * 0.1464466094067262 + 0.1) * 0.1 = 0.023180194846605358
  CHECK(floor(75) == Approx(0.023180194846605358).epsilon(1e-14));
}

TEST_CASE("cosine_decay: bad arguments", "[schedules]") {
  CHECK_THROWS_WITH(hf::cosine_decay(0.1, 0), Catch::Contains("decay_steps must be > 0"));
  CHECK_THROWS_WITH(hf::cosine_decay(0.1, 10, 1.5), Catch::Contains("alpha must be in [0, 1]"));
  CHECK_THROWS_WITH(hf::cosine_decay(0.1, 10, -0.1), Catch::Contains("alpha"));
  CHECK_THROWS_WITH(hf::cosine_decay(INFINITY, 10), Catch::Contains("learning_rate"));
}

TEST_CASE("linear_warmup: warmup_lr to schedule(warmup_steps) linearly, then the schedule",
          "[schedules]") {
  // tfm.optimization.LinearWarmup: for step < warmup_steps,
  //   lr = warmup_lr + step / warmup_steps * (schedule(warmup_steps) - warmup_lr);
  // else schedule(step) (not shifted).
  const auto s = hf::linear_warmup(hf::cosine_decay(0.1, 100), 10, 0.0);
  // schedule(10) = 0.05 * (1 + cos(pi / 10)) = 0.05 * (1 + 0.9510565162951535) =
  // 0.09755282581475767
  const double at10 = 0.09755282581475767;
  CHECK(s(0) == exact(0.0));
  CHECK(s(1) == Approx(at10 / 10).epsilon(1e-14));
  CHECK(s(5) == Approx(at10 / 2).epsilon(1e-14));
  CHECK(s(9) == Approx(at10 * 0.9).epsilon(1e-14));
  CHECK(s(10) == Approx(at10).epsilon(1e-14));
  CHECK(s(50) == Approx(0.05).epsilon(1e-14));  // the cosine schedule at 50, not at 40

  // From a non-zero warmup_lr: 0.01 -> piecewise value 0.1 over 4 steps: step 2 is 0.055.
  const auto p = hf::linear_warmup(hf::piecewise_constant({100}, {0.1, 0.01}), 4, 0.01);
  CHECK(p(2) == Approx(0.055).epsilon(1e-14));
  CHECK(p(4) == exact(0.1));
  CHECK(p(101) == exact(0.01));
  // No warm-up: the schedule itself.
  const auto none = hf::linear_warmup(hf::piecewise_constant({100}, {0.1, 0.01}), 0);
  CHECK(none(0) == exact(0.1));
  // Any callable is a schedule.
  const auto lambda = hf::linear_warmup([](std::int64_t) { return 1.0; }, 4);
  CHECK(lambda(1) == exact(0.25));

  CHECK_THROWS_WITH(hf::linear_warmup(hf::cosine_decay(0.1, 100), -1),
                    Catch::Contains("warmup_steps must be >= 0"));
  CHECK_THROWS_WITH(hf::linear_warmup(hf::cosine_decay(0.1, 100), 10, NAN),
                    Catch::Contains("warmup_lr"));
}
