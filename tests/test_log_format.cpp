// tests/test_log_format.cpp: the text of the built-in hooks' log lines, as TensorFlow 1.x writes
// them (tensorflow/python/training/basic_session_run_hooks.py):
//   LoggingTensorHook: "%s = %s" % (tag, value) joined by ", ", then " (%.3f sec)" when timed;
//     the value is numpy's str() of what session.run returned.
//   StepCounterHook: the stalled-global-step warning, logging.log_first_n(WARN, ..., 5).
// The hooks are driven directly (begin / before_run / after_run) with hand-made fetched values
// and a fake clock; the expected texts are written out by hand from numpy's and TensorFlow's
// rules.
#include <catch2/catch.hpp>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "capturing_logger.hpp"

using namespace hookfuse;

namespace {

using hookfuse_test::CapturingLogger;
using hookfuse_test::Line;
using hookfuse_test::Lines;
using Fake = ClockRef<FakeClock>;

std::string stalled(std::int64_t v) {
  const std::string s = std::to_string(v);
  return "It seems that global step (tf.train.get_global_step) has not been increased. Current "
         "value (could be stable): " +
         s + " vs previous value: " + s +
         ". You could increase the global step by passing tf.train.get_global_step() to "
         "Optimizer.apply_gradients or Optimizer.minimize.";
}

/// Runs a StepCounterHook once with `stale` as the fetched global step (before the increment)
/// and `now` as the global step after the run.
template <class Hook>
void run_once(Hook& hook, std::int64_t stale, std::int64_t now) {
  SessionRunContext ctx(&now);
  (void)hook.before_run(ctx);
  SessionRunValues<"global_step"> values{};
  values.results[0] = TensorValue{&stale, 1, 1, 1, 1, DType::int64};
  hook.after_run(ctx, values);
}

}  // namespace

TEST_CASE("StepCounterHook: TensorFlow's stalled-step warning, 5 times per session",
          "[log_format][step_counter]") {
  FakeClock clock;
  std::vector<Line> lines;
  // every_n_steps far away: no "global_step/sec" line gets in the way.
  StepCounterHook<Fake, CapturingLogger> hook({.every_n_steps = 1000}, Fake{&clock},
                                              CapturingLogger{&lines});
  hook.begin();
  const std::int64_t step = 9007199254740993;  // 2^53 + 1: printed exactly, not via double
  for (int run = 0; run < 10; ++run) {         // the global step never advances
    run_once(hook, step, step);
    clock.advance(1.0);
  }
  // Run 1 has nothing to compare with; runs 2..10 stall, the first 5 of them are logged.
  REQUIRE(lines.size() == 5);
  for (const auto& l : lines) {
    CHECK(l.severity == Severity::warning);
    CHECK(l.text == stalled(step));
  }

  // A new session (begin) counts again, and compares only with its own runs.
  lines.clear();
  hook.begin();
  run_once(hook, step, step);  // first run of the session: no previous value
  CHECK(lines.empty());
  run_once(hook, 3, 4);  // the step moved (backwards, even): no warning
  CHECK(lines.empty());
  for (int run = 0; run < 7; ++run) run_once(hook, 4, 4);  // 4 vs 3 moves; then 6 stalls
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].text == stalled(4));
}

namespace {
using Policies = LoggingPolicies<Fake, CapturingLogger>;
}

TEST_CASE("LoggingTensorHook: TensorFlow's line, numpy's text for each value",
          "[log_format][logging_tensor]") {
  FakeClock clock;
  std::vector<Line> lines;
  // On the heap: GCC 12 sees the hook's std::optional timer in a stack object as "maybe
  // uninitialized" (a false positive; in a session the hooks live in the session).
  using Hook = BasicLoggingTensorHook<Policies, "loss", "global_step", "pred", "bias">;
  auto owned = std::make_unique<Hook>(Hook::Options{.every_n_iter = 2}, DefaultTensorFormatter{},
                                      Fake{&clock}, CapturingLogger{&lines});
  auto& hook = *owned;
  std::int64_t gs_now = 0;
  SessionRunContext ctx(&gs_now);
  const float loss = 0x1.62e43p-1f;  // float32 nearest ln 2
  const std::int64_t global_step = 1234567;
  const float pred[4] = {1.5f, -2.0f, 0.0f, 3.0f};  // [[1.5, -2], [0, 3]]
  const double bias[3] = {0.1, 0.25, 1e-5};         // [3], stored [1, 3]
  SessionRunValues<"loss", "global_step", "pred", "bias"> values{};
  values.results[0] = TensorValue{&loss, 1, 1, 1, 1, DType::float32};
  values.results[1] = TensorValue{&global_step, 1, 1, 1, 1, DType::int64};
  values.results[2] = TensorValue{pred, 2, 2, 2, 1, DType::float32};
  values.results[3] = TensorValue{bias, 1, 3, 3, 1, DType::float64};
  hook.begin();
  for (int run = 0; run < 3; ++run) {
    const auto args = hook.before_run(ctx);
    CHECK(args.active == (run != 1));
    hook.after_run(ctx, values);
    clock.advance(1.25);
  }
  // numpy: str(np.float32(ln 2)) = 0.6931472; str(np.int64(1234567)) = 1234567; the float32
  // matrix has integer width 2 ("-2") and one fraction digit ("5"); the float64 vector has
  // min 1e-5 < 1e-4, which numpy's defaults print in scientific notation
  // ("[1.0e-01 2.5e-01 1.0e-05]"), but TensorFlow's hook logs under
  // np.set_printoptions(suppress=True): the largest magnitude is below 1e8, so it stays
  // positional, each element padded with spaces to the longest fraction ("00001", 5 digits).
  const std::string text =
      "loss = 0.6931472, global_step = 1234567, pred = [[ 1.5 -2. ]\n [ 0.   3. ]], "
      "bias = [0.1     0.25    0.00001]";
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].text == text);  // the first line has no time
  CHECK(lines[1].text == text + " (2.500 sec)");
  CHECK(lines[0].severity == Severity::info);
}
