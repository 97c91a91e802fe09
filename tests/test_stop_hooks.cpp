// tests/test_stop_hooks.cpp: TerminateOnNonFiniteHook (Keras TerminateOnNaN) and TimerStopHook
// (tfa TimeStopping) at exact steps, with a fake clock (no sleeps).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "capturing_logger.hpp"
#include "lr_model.hpp"

namespace hf = hookfuse;

namespace {

using hookfuse_test::CapturingLogger;
using hookfuse_test::Line;
using hookfuse_test::Lines;

/// Run i (from 1) feeds x = 1, y = 1, except x = NaN at run nan_at and y = +Inf (or -Inf when
/// negative_inf) at run inf_at. With W = b = 0 (learning rate 0), loss = y^2 (NaN when x is NaN:
/// 0 * NaN), "accuracy" = mean(x).
struct SpikeInput {
  std::int64_t nan_at = -1, inf_at = -1;
  bool negative_inf = false;
  float x = 0.0f, y = 0.0f;
  std::int64_t i = 0;
  bool next() {
    ++i;
    x = i == nan_at ? std::numeric_limits<float>::quiet_NaN() : 1.0f;
    const float inf = std::numeric_limits<float>::infinity();
    y = i == inf_at ? (negative_inf ? -inf : inf) : 1.0f;
    if (i == inf_at && negative_inf) x = -inf;  // "accuracy" = mean(x) = -inf
    return true;
  }
  hf::Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

template <class Session>
int run_until_stop(Session& session, int max_runs = 1000) {
  int runs = 0;
  while (!session.should_stop() && runs < max_runs) {
    session.run();
    ++runs;
  }
  return runs;
}

}  // namespace

TEST_CASE("TerminateOnNonFiniteHook: stops after the run whose loss is NaN",
          "[hooks][non_finite]") {
  std::vector<Line> lines;
  hookfuse_test::LrModel m;
  hf::MonitoredTrainingSession s(m.train_op(), SpikeInput{.nan_at = 5},
                                 hf::hooks(hf::TerminateOnNonFiniteHook<"loss", CapturingLogger>(
                                     {}, CapturingLogger{&lines})));
  CHECK(run_until_stop(s) == 5);
  CHECK(s.global_step() == 5);
  CHECK(s.hook<0>().terminated_at() == std::optional<std::int64_t>(4));
  REQUIRE(lines.size() == 1);
  // Keras: print('Batch %d: Invalid loss, terminating training' % batch); the 5th run has
  // global step 4 before its increment.
  CHECK(lines[0].text == "Batch 4: Invalid loss, terminating training");
  CHECK(lines[0].severity == hf::Severity::warning);
}

TEST_CASE("TerminateOnNonFiniteHook: +Inf and -Inf stop too, NanTensorHook lets Inf pass",
          "[hooks][non_finite]") {
  for (bool negative : {false, true}) {
    INFO("negative " << negative);
    std::vector<Line> lines;
    hookfuse_test::LrModel m;
    // loss = y^2 = +Inf for y = +-Inf; "accuracy" = mean(x) = -Inf in the negative case.
    hf::MonitoredTrainingSession s(
        m.train_op(), SpikeInput{.inf_at = 3, .negative_inf = negative},
        hf::hooks(
            hf::TerminateOnNonFiniteHook<"loss", CapturingLogger>({}, CapturingLogger{&lines}),
            hf::TerminateOnNonFiniteHook<"accuracy", CapturingLogger>({}, CapturingLogger{&lines})),
        m.accuracy());
    CHECK(run_until_stop(s) == 3);
    CHECK(s.global_step() == 3);
    // Built in one go: GCC 12 reports a false -Warray-bounds in std::string's copy for a
    // push_back of a literal here when the tests' precompiled header is in use.
    const std::vector<std::string> want =
        negative ? std::vector<std::string>{"Batch 2: Invalid loss, terminating training",
                                            "Batch 2: Invalid accuracy, terminating training"}
                 : std::vector<std::string>{"Batch 2: Invalid loss, terminating training"};
    std::vector<std::string> got;
    for (const auto& l : lines) got.push_back(l.text);
    CHECK(got == want);
  }
  // NanTensorHook checks NaN only: the same infinite loss at run 3 does not stop it.
  hookfuse_test::LrModel m;
  hf::MonitoredTrainingSession s(
      m.train_op(), SpikeInput{.inf_at = 3},
      hf::hooks(hf::NanTensorHook<"loss", hf::NullLogger>({.fail_on_nan_loss = false})));
  for (int i = 0; i < 3; ++i) s.run();
  CHECK(s.fetch<"loss">().item() == std::numeric_limits<double>::infinity());
  CHECK_FALSE(s.should_stop());
}

TEST_CASE("TerminateOnNonFiniteHook: raise_error throws RuntimeError with Keras' message",
          "[hooks][non_finite]") {
  std::vector<Line> lines;
  hookfuse_test::LrModel m;
  hf::MonitoredTrainingSession s(m.train_op(), SpikeInput{.inf_at = 2},
                                 hf::hooks(hf::TerminateOnNonFiniteHook<"loss", CapturingLogger>(
                                     {.raise_error = true}, CapturingLogger{&lines})));
  s.run();
  // Keras 3.13.0: RuntimeError(f"NaN or Inf loss encountered at batch {batch}. "
  //                             f"Loss value: {loss}. Terminating training immediately.")
  CHECK_THROWS_MATCHES(s.run(), hf::RuntimeError,
                       Catch::Message("NaN or Inf loss encountered at batch 1. Loss value: inf. "
                                      "Terminating training immediately."));
  CHECK(lines.empty());
  CHECK(s.hook<0>().terminated_at() == std::optional<std::int64_t>(1));
}

TEST_CASE("TerminateOnNonFiniteHook: raise_error prints a NaN with its sign bit as nan",
          "[hooks][non_finite]") {
  // Keras 3.13.0, keras/src/callbacks/terminate_on_nan.py, TerminateOnNaN.on_batch_end:
  //             if np.isnan(loss) or np.isinf(loss):
  //                 if self.raise_error:
  //                     raise RuntimeError(
  //                         f"NaN or Inf loss encountered at batch {batch}. "
  //                         f"Loss value: {loss}. Terminating training immediately."
  //                     )
  // The logs reach it through python_utils.pythonify_logs (`value = float(value)`), so {loss}
  // is str() of a Python float: "nan" for every NaN (float.__repr__ drops the sign bit), where
  // printf's %g writes "-nan" for a NaN with the sign bit set.
  const float negative_nan = std::copysign(std::numeric_limits<float>::quiet_NaN(), -1.0f);
  REQUIRE(std::isnan(negative_nan));
  REQUIRE(std::signbit(negative_nan));
  hf::TerminateOnNonFiniteHook<"loss", hf::NullLogger> hook({.raise_error = true});
  std::int64_t step = 7;
  hf::SessionRunContext ctx(&step);
  hf::SessionRunValues<"loss"> values{};
  values.results[0] = hf::TensorValue{&negative_nan, 1, 1, 1, 1, hf::DType::float32};
  hook.before_run(ctx);
  CHECK_THROWS_MATCHES(hook.after_run(ctx, values), hf::RuntimeError,
                       Catch::Message("NaN or Inf loss encountered at batch 7. Loss value: nan. "
                                      "Terminating training immediately."));
  CHECK(hook.terminated_at() == std::optional<std::int64_t>(7));
}

TEST_CASE("TerminateOnNonFiniteHook: finite losses never stop", "[hooks][non_finite]") {
  hookfuse_test::LrModel m;
  hf::MonitoredTrainingSession s(m.train_op(), SpikeInput{},
                                 hf::hooks(hf::TerminateOnNonFiniteHook<"loss", hf::NullLogger>(),
                                           hf::StopAtStepHook({.last_step = 20})));
  CHECK(run_until_stop(s) == 20);
  CHECK_FALSE(s.hook<0>().terminated_at().has_value());
}

// =============================================================================================
// TimerStopHook
// =============================================================================================

namespace {
using Fake = hf::ClockRef<hf::FakeClock>;
using Timer = hf::TimerStopHook<Fake, CapturingLogger>;
}  // namespace

TEST_CASE("TimerStopHook: stops after the first run that ends past the budget",
          "[hooks][timer_stop]") {
  // Session created at t = 100; each run takes 1 s (the test advances the clock before it):
  // run k ends at 100 + k; 3.5 s are reached after run 4 (4 >= 3.5; 3 < 3.5).
  hf::FakeClock clock{100.0};
  std::vector<Line> lines;
  hookfuse_test::LrModel m(10);
  hf::MonitoredTrainingSession s(
      m.train_op(), SpikeInput{},
      hf::hooks(Timer({.seconds = 3.5}, Fake{&clock}, CapturingLogger{&lines})));
  int runs = 0;
  while (!s.should_stop() && runs < 100) {
    clock.advance(1.0);
    s.run();
    ++runs;
  }
  CHECK(runs == 4);
  CHECK(s.global_step() == 14);
  CHECK(s.hook<0>().stopped_at() == std::optional<std::int64_t>(14));
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].text == "Timed stopping at step 14: 4.000 sec elapsed, limit 3.500 sec.");
  CHECK(lines[0].severity == hf::Severity::info);
}

TEST_CASE("TimerStopHook: every_n_iter reads the clock on runs n, 2n, ... only",
          "[hooks][timer_stop]") {
  // Checks after runs 3 (3 s < 3.5) and 6 (6 s): stops at global step 6, not 4.
  hf::FakeClock clock;
  std::vector<Line> lines;
  hookfuse_test::LrModel m;
  hf::MonitoredTrainingSession s(
      m.train_op(), SpikeInput{},
      hf::hooks(Timer({.seconds = 3.5, .every_n_iter = 3}, Fake{&clock}, CapturingLogger{&lines})));
  int runs = 0;
  while (!s.should_stop() && runs < 100) {
    clock.advance(1.0);
    s.run();
    ++runs;
  }
  CHECK(runs == 6);
  CHECK(s.global_step() == 6);
}

TEST_CASE(
    "TimerStopHook: the clock starts when the session is created, a zero budget stops "
    "after one run",
    "[hooks][timer_stop]") {
  hf::FakeClock clock;
  std::vector<Line> lines;
  Timer hook({.seconds = 2.0}, Fake{&clock}, CapturingLogger{&lines});
  clock.advance(50.0);  // time before the session does not count
  hookfuse_test::LrModel m;
  hf::MonitoredTrainingSession s(m.train_op(), SpikeInput{}, hf::hooks(hook));
  s.run();
  CHECK_FALSE(s.should_stop());
  clock.advance(2.0);
  s.run();
  CHECK(s.should_stop());
  CHECK(s.global_step() == 2);

  hookfuse_test::LrModel m0;
  hf::MonitoredTrainingSession zero(
      m0.train_op(), SpikeInput{},
      hf::hooks(Timer({.seconds = 0.0}, Fake{&clock}, CapturingLogger{&lines})));
  zero.run();
  CHECK(zero.should_stop());

  CHECK_THROWS_WITH(Timer({.seconds = -1.0}, Fake{&clock}, CapturingLogger{&lines}),
                    Catch::Contains("seconds must be finite and >= 0"));
  CHECK_THROWS_AS(Timer({.seconds = NAN}, Fake{&clock}, CapturingLogger{&lines}),
                  std::invalid_argument);
  CHECK_THROWS_WITH(
      Timer({.seconds = 1.0, .every_n_iter = 0}, Fake{&clock}, CapturingLogger{&lines}),
      Catch::Contains("every_n_iter must be > 0"));
}
