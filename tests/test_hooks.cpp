// tests/test_hooks.cpp: the built-in hooks in a MonitoredTrainingSession, with TensorFlow 1.x's
// semantics (tf.compat.v1.train.StopAtStepHook, LoggingTensorHook, StepCounterHook,
// NanTensorHook) as the specification.
//
// The model is a one-weight linear regression, loss = mean((y - (x W + b))^2). Most tests train
// with learning rate 0, so W = b = 0 forever and the loss of run i is exactly y_i^2: the input
// feeds x = i / 4 and y = i in run i (counting from 1), so a logged "loss = 121.0" says that
// the line came from run 11. Time comes from a FakeClock advanced by the test: no sleeps.
#include <boost/hana/at.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "capturing_logger.hpp"
#include "lr_model.hpp"

using namespace hookfuse;
namespace hana = boost::hana;

namespace {

// --- test doubles ----------------------------------------------------------------------------

using hookfuse_test::CapturingLogger;
using hookfuse_test::Line;
using hookfuse_test::Lines;

/// Stores every line in a vector owned by the test (hooks are copied into the session).
static_assert(Logger<CapturingLogger>);

std::vector<std::string> texts(const Lines& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.text);
  return out;
}

using Fake = ClockRef<FakeClock>;
using Policies = LoggingPolicies<Fake, CapturingLogger>;

/// Run i (from 1) feeds x = i / 4 and y = i; `nan_at` feeds x = NaN in that run; `limit` ends the
/// data after that many batches (-1: never).
using CountingInput = hookfuse_test::QuarterInput;

using Model = hookfuse_test::LrModel;

template <class Session>
int run_until_stop(Session& session, int max_runs = 100000) {
  int runs = 0;
  while (!session.should_stop() && runs < max_runs) {
    session.run();
    ++runs;
  }
  return runs;
}

}  // namespace

// =============================================================================================
// StopAtStepHook
// =============================================================================================

TEST_CASE("StopAtStepHook: exactly one of num_steps and last_step", "[hooks][stop_at_step]") {
  CHECK_THROWS_AS(StopAtStepHook({}), std::invalid_argument);
  CHECK_THROWS_AS(StopAtStepHook({.num_steps = 10, .last_step = 10}), std::invalid_argument);
  CHECK_NOTHROW(StopAtStepHook({.num_steps = 10}));
  CHECK_NOTHROW(StopAtStepHook({.last_step = 10}));
  CHECK(StopAtStepHook({.last_step = 10}).last_step() == std::optional<std::int64_t>(10));
  // num_steps is relative to the global step at session creation: not known before.
  CHECK_FALSE(StopAtStepHook({.num_steps = 10}).last_step().has_value());
}

TEST_CASE("StopAtStepHook: num_steps counts from the global step at session creation",
          "[hooks][stop_at_step]") {
  Model m(120);
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(StopAtStepHook({.num_steps = 30})));
  CHECK(hana::at_c<0>(session.hooks()).last_step() == std::optional<std::int64_t>(150));
  CHECK(run_until_stop(session) == 30);
  CHECK(session.global_step() == 150);
  CHECK(m.gs.value == 150);
  CHECK(session.input().i == 30);  // 30 batches consumed
}

TEST_CASE(
    "StopAtStepHook: num_steps uses the global step when the session is created, not when "
    "the hook is",
    "[hooks][stop_at_step]") {
  Model m;
  StopAtStepHook hook({.num_steps = 5});
  m.gs.value = 40;
  MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(hook));
  CHECK(run_until_stop(session) == 5);
  CHECK(session.global_step() == 45);
}

TEST_CASE("StopAtStepHook: last_step stops at exactly that global step", "[hooks][stop_at_step]") {
  Model m(120);
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(StopAtStepHook({.last_step = 150})));
  CHECK(run_until_stop(session) == 30);
  CHECK(session.global_step() == 150);
}

TEST_CASE(
    "StopAtStepHook: at least one step runs when the global step is already past "
    "last_step",
    "[hooks][stop_at_step]") {
  SECTION("past last_step") {
    Model m(200);
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(StopAtStepHook({.last_step = 150})));
    CHECK_FALSE(session.should_stop());  // no stop before the first run
    CHECK(run_until_stop(session) == 1);
    CHECK(session.global_step() == 201);
  }
  SECTION("at last_step") {
    Model m(150);
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(StopAtStepHook({.last_step = 150})));
    CHECK(run_until_stop(session) == 1);
    CHECK(session.global_step() == 151);
  }
  SECTION("num_steps = 0") {
    Model m(120);
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(StopAtStepHook({.num_steps = 0})));
    CHECK(run_until_stop(session) == 1);
    CHECK(session.global_step() == 121);
  }
}

TEST_CASE("StopAtStepHook: the first of several stop hooks wins", "[hooks][stop_at_step]") {
  Model m;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(StopAtStepHook({.num_steps = 7}), StopAtStepHook({.last_step = 4})));
  CHECK(run_until_stop(session) == 4);
  CHECK(session.global_step() == 4);
}

// =============================================================================================
// LoggingTensorHook
// =============================================================================================

TEST_CASE("LoggingTensorHook: invalid options throw std::invalid_argument",
          "[hooks][logging_tensor]") {
  using Hook = LoggingTensorHook<"loss">;
  CHECK_THROWS_AS(Hook({}), std::invalid_argument);  // nothing to log on
  CHECK_THROWS_AS(Hook({.every_n_iter = 10, .every_n_secs = 1.0}), std::invalid_argument);
  CHECK_THROWS_AS(Hook({.every_n_iter = 10, .every_n_secs = 1.0, .at_end = true}),
                  std::invalid_argument);
  CHECK_THROWS_AS(Hook({.every_n_iter = 0}), std::invalid_argument);
  CHECK_THROWS_AS(Hook({.every_n_iter = -3}), std::invalid_argument);
  CHECK_THROWS_AS(Hook({.every_n_iter = 0, .at_end = true}), std::invalid_argument);
  CHECK_NOTHROW(Hook({.every_n_iter = 1}));
  CHECK_NOTHROW(Hook({.every_n_secs = 0.5}));
  CHECK_NOTHROW(Hook({.at_end = true}));
  CHECK_NOTHROW(Hook({.every_n_iter = 10, .at_end = true}));
  CHECK_NOTHROW(Hook({.every_n_secs = 2.0, .at_end = true}));
}

TEST_CASE("LoggingTensorHook: every_n_iter = 10 over 25 runs logs at runs 1, 11 and 21",
          "[hooks][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(BasicLoggingTensorHook<Policies, "loss">({.every_n_iter = 10}, {}, Fake{&clock},
                                                     CapturingLogger{&lines})));
  // Only hooks that say when they are idle: runs 2-10, 12-20 and 22-25 call no hook.
  static_assert(decltype(session)::skips_idle_runs);
  std::vector<int> logged_at;
  for (int run = 1; run <= 25; ++run) {
    const std::size_t before = lines.size();
    session.run();
    if (lines.size() != before) logged_at.push_back(run);
    clock.advance(0.5);
  }
  CHECK(logged_at == std::vector<int>{1, 11, 21});
  REQUIRE(lines.size() == 3);
  // loss = y^2 = run^2 (W = b = 0); seconds = 10 runs * 0.5 s since the previous line.
  CHECK(texts(lines) ==
        std::vector<std::string>{"loss = 1.0", "loss = 121.0 (5.000 sec)",
                                 "loss = 441.0 (5.000 sec)"});
  for (const auto& l : lines) CHECK(l.severity == Severity::info);
  CHECK(lines[0].text.find(" sec)") == std::string::npos);
  CHECK(hana::at_c<0>(session.hooks()).iter_count() == 25);

  session.close();
  CHECK(lines.size() == 3);  // at_end is false: nothing more
}

TEST_CASE("LoggingTensorHook: counts this session's runs, not global steps",
          "[hooks][logging_tensor]") {
  Model m(500);
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(BasicLoggingTensorHook<Policies, "loss">({.every_n_iter = 10}, {}, Fake{&clock},
                                                     CapturingLogger{&lines})));
  for (int run = 1; run <= 25; ++run) {
    session.run();
    clock.advance(0.25);
  }
  CHECK(texts(lines) ==
        std::vector<std::string>{"loss = 1.0", "loss = 121.0 (2.500 sec)",
                                 "loss = 441.0 (2.500 sec)"});
  CHECK(session.global_step() == 525);
}

TEST_CASE("LoggingTensorHook: two tensors, in the order given", "[hooks][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(BasicLoggingTensorHook<Policies, "loss", "accuracy">(
          {.every_n_iter = 10}, {}, Fake{&clock}, CapturingLogger{&lines})),
      m.accuracy());
  for (int run = 1; run <= 25; ++run) {
    session.run();
    clock.advance(0.5);
  }
  // accuracy = mean(x) = run / 4.
  CHECK(texts(lines) == std::vector<std::string>{"loss = 1.0, accuracy = 0.25",
                                                 "loss = 121.0, accuracy = 2.75 (5.000 sec)",
                                                 "loss = 441.0, accuracy = 5.25 (5.000 sec)"});
}

TEST_CASE("LoggingTensorHook: tensor order follows the template arguments",
          "[hooks][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(BasicLoggingTensorHook<Policies, "accuracy", "loss">(
          {.every_n_iter = 2}, {}, Fake{&clock}, CapturingLogger{&lines})),
      m.accuracy());
  for (int run = 1; run <= 3; ++run) {
    session.run();
    clock.advance(1.0);
  }
  CHECK(texts(lines) == std::vector<std::string>{"accuracy = 0.25, loss = 1.0",
                                                 "accuracy = 0.75, loss = 9.0 (2.000 sec)"});
}

TEST_CASE("LoggingTensorHook: every_n_secs", "[hooks][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(BasicLoggingTensorHook<Policies, "loss">({.every_n_secs = 2.0}, {}, Fake{&clock},
                                                     CapturingLogger{&lines})));
  std::vector<int> logged_at;
  for (int run = 1; run <= 10; ++run) {
    const std::size_t before = lines.size();
    session.run();
    if (lines.size() != before) logged_at.push_back(run);
    clock.advance(0.5);
  }
  // Run r happens at t = (r - 1) * 0.5: the first run, then whenever 2 s have passed.
  CHECK(logged_at == std::vector<int>{1, 5, 9});
  CHECK(texts(lines) ==
        std::vector<std::string>{"loss = 1.0", "loss = 25.0 (2.000 sec)",
                                 "loss = 81.0 (2.000 sec)"});
}

TEST_CASE("LoggingTensorHook: every_n_secs ignores how many runs pass", "[hooks][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(BasicLoggingTensorHook<Policies, "loss">({.every_n_secs = 60.0}, {}, Fake{&clock},
                                                     CapturingLogger{&lines})));
  for (int run = 1; run <= 50; ++run) session.run();  // the clock stands still
  CHECK(texts(lines) == std::vector<std::string>{"loss = 1.0"});
  clock.advance(60.0);
  session.run();
  CHECK(texts(lines) == std::vector<std::string>{"loss = 1.0", "loss = 2601.0 (60.000 sec)"});
}

TEST_CASE("LoggingTensorHook: at_end logs once more at close()", "[hooks][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  {
    MonitoredTrainingSession session(
        m.train_op(), CountingInput{},
        hooks(BasicLoggingTensorHook<Policies, "loss", "accuracy">(
            {.every_n_iter = 10, .at_end = true}, {}, Fake{&clock}, CapturingLogger{&lines})),
        m.accuracy());
    for (int run = 1; run <= 25; ++run) {
      session.run();
      clock.advance(0.5);
    }
    REQUIRE(lines.size() == 3);
    session.close();
    // The values of the last batch (run 25), 5 runs * 0.5 s after the line of run 21.
    REQUIRE(lines.size() == 4);
    CHECK(lines[3].text == "loss = 625.0, accuracy = 6.25 (2.500 sec)");
    CHECK(lines[3].severity == Severity::info);
  }
  CHECK(lines.size() == 4);  // the destructor does not call end() again
}

TEST_CASE("LoggingTensorHook: at_end alone logs only at the end, without a time",
          "[hooks][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  {
    MonitoredTrainingSession session(
        m.train_op(), CountingInput{},
        hooks(BasicLoggingTensorHook<Policies, "loss">({.at_end = true}, {}, Fake{&clock},
                                                       CapturingLogger{&lines})));
    for (int run = 1; run <= 7; ++run) {
      session.run();
      clock.advance(1.0);
    }
    CHECK(lines.empty());
    // No close(): the destructor ends the session.
  }
  CHECK(texts(lines) == std::vector<std::string>{"loss = 49.0"});
}

TEST_CASE("LoggingTensorHook: at_end when the input runs out", "[hooks][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{.limit = 3},
      hooks(BasicLoggingTensorHook<Policies, "loss">({.at_end = true}, {}, Fake{&clock},
                                                     CapturingLogger{&lines})));
  CHECK(run_until_stop(session) == 4);  // the 4th run finds no data
  session.close();
  CHECK(texts(lines) == std::vector<std::string>{"loss = 9.0"});
}

TEST_CASE(
    "LoggingTensorHook: global_step is the value before the run's increment, at_end the "
    "current one",
    "[hooks][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(BasicLoggingTensorHook<Policies, "global_step">(
          {.every_n_iter = 10, .at_end = true}, {}, Fake{&clock}, CapturingLogger{&lines})));
  for (int run = 1; run <= 25; ++run) {
    session.run();
    clock.advance(0.5);
  }
  session.close();
  CHECK(texts(lines) == std::vector<std::string>{"global_step = 0", "global_step = 10 (5.000 sec)",
                                                 "global_step = 20 (5.000 sec)",
                                                 "global_step = 25 (2.500 sec)"});
}

namespace {
/// Formats its own line from the values (like a TensorFlow formatter over the values dict).
struct LossFormatter {
  std::string operator()(const SessionRunValues<"loss", "accuracy">& v) const {
    return "custom loss=" + std::to_string(static_cast<int>(v.get<"loss">().item())) +
           " acc=" + std::to_string(v.get<"accuracy">().item());
  }
};
}  // namespace

TEST_CASE("LoggingTensorHook: a custom formatter replaces the line", "[hooks][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(BasicLoggingTensorHook<LoggingPolicies<Fake, CapturingLogger, LossFormatter>, "loss",
                                   "accuracy">({.every_n_iter = 10, .at_end = true}, {},
                                               Fake{&clock}, CapturingLogger{&lines})),
      m.accuracy());
  for (int run = 1; run <= 12; ++run) {
    session.run();
    clock.advance(0.5);
  }
  session.close();
  // Exactly the formatter's text: no "name = value" and no " (x sec)" suffix.
  CHECK(texts(lines) == std::vector<std::string>{"custom loss=1 acc=0.250000",
                                                 "custom loss=121 acc=2.750000",
                                                 "custom loss=144 acc=3.000000"});
  for (const auto& l : lines) CHECK(l.severity == Severity::info);
}

namespace {
struct Batch3Input {  // x = [1, 2, 3] and y = [2, 4, 6] as a batch of three rows
  float xs[3] = {1.0f, 2.0f, 3.0f};
  float ys[3] = {2.0f, 4.0f, 6.0f};
  bool next() { return true; }
  Index batch_size() const { return 3; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(xs, 3);
    g.template feed<"y">(ys, 3);
  }
};
}  // namespace

TEST_CASE("LoggingTensorHook: a non-scalar tensor is logged as a list", "[hooks][logging_tensor]") {
  Model m;
  m.W.value(0, 0) = 2.0f;  // predictions = 2 x, the labels exactly: loss 0
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), Batch3Input{},
      hooks(BasicLoggingTensorHook<Policies, "loss", "pred">({.every_n_iter = 1}, {}, Fake{&clock},
                                                             CapturingLogger{&lines})),
      named<"pred">(matmul(m.x, m.W)));
  session.run();
  CHECK(texts(lines) == std::vector<std::string>{"loss = 0.0, pred = [[2.]\n [4.]\n [6.]]"});
}

// =============================================================================================
// StepCounterHook
// =============================================================================================

TEST_CASE("StepCounterHook: both intervals throw, neither means every 100 steps",
          "[hooks][step_counter]") {
  using Hook = StepCounterHook<Fake, CapturingLogger>;
  FakeClock clock;
  Lines lines;
  CHECK_THROWS_AS(
      Hook({.every_n_steps = 10, .every_n_secs = 1.0}, Fake{&clock}, CapturingLogger{&lines}),
      std::invalid_argument);

  Model m;
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(Hook({}, Fake{&clock}, CapturingLogger{&lines})));
  for (int run = 1; run <= 100; ++run) {
    session.run();
    clock.advance(0.5);
  }
  CHECK(lines.empty());
  session.run();  // global step 101
  CHECK(texts(lines) == std::vector<std::string>{"global_step/sec: 2"});
}

TEST_CASE("StepCounterHook: every_n_steps = 10 reports at global steps 11, 21, ...",
          "[hooks][step_counter]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(StepCounterHook<Fake, CapturingLogger>({.every_n_steps = 10}, Fake{&clock},
                                                   CapturingLogger{&lines})));
  std::vector<std::int64_t> reported_at;
  for (int run = 1; run <= 35; ++run) {
    const std::size_t before = lines.size();
    session.run();
    if (lines.size() != before) reported_at.push_back(session.global_step());
    clock.advance(1.0);
  }
  CHECK(reported_at == std::vector<std::int64_t>{11, 21, 31});
  CHECK(texts(lines) ==
        std::vector<std::string>{"global_step/sec: 1", "global_step/sec: 1", "global_step/sec: 1"});
  for (const auto& l : lines) CHECK(l.severity == Severity::info);
  CHECK(hana::at_c<0>(session.hooks()).last_rate() == std::optional<double>(1.0));
}

TEST_CASE("StepCounterHook: the rate is steps over fake-clock seconds", "[hooks][step_counter]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(StepCounterHook<Fake, CapturingLogger>({.every_n_steps = 10}, Fake{&clock},
                                                   CapturingLogger{&lines})));
  for (int run = 1; run <= 11; ++run) {
    session.run();
    clock.advance(0.25);
  }
  for (int run = 12; run <= 21; ++run) {
    session.run();
    clock.advance(4.0);
  }
  // Steps 1 -> 11: 10 steps in 2.5 s. Steps 11 -> 21: 10 steps in 0.25 + 9 * 4 = 36.25 s.
  CHECK(texts(lines) ==
        std::vector<std::string>{"global_step/sec: 4", "global_step/sec: 0.275862"});
}

TEST_CASE("StepCounterHook: counts global steps from where the session starts",
          "[hooks][step_counter]") {
  Model m(120);
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(StepCounterHook<Fake, CapturingLogger>({.every_n_steps = 10}, Fake{&clock},
                                                   CapturingLogger{&lines})));
  std::vector<std::int64_t> reported_at;
  for (int run = 1; run <= 25; ++run) {
    const std::size_t before = lines.size();
    session.run();
    if (lines.size() != before) reported_at.push_back(session.global_step());
    clock.advance(0.5);
  }
  CHECK(reported_at == std::vector<std::int64_t>{131, 141});
  CHECK(texts(lines) == std::vector<std::string>{"global_step/sec: 2", "global_step/sec: 2"});
}

TEST_CASE("StepCounterHook: every_n_secs", "[hooks][step_counter]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(StepCounterHook<Fake, CapturingLogger>({.every_n_secs = 5.0}, Fake{&clock},
                                                   CapturingLogger{&lines})));
  std::vector<std::int64_t> reported_at;
  for (int run = 1; run <= 25; ++run) {
    const std::size_t before = lines.size();
    session.run();
    if (lines.size() != before) reported_at.push_back(session.global_step());
    clock.advance(0.5);
  }
  // Step s is taken at t = (s - 1) * 0.5: the baseline at step 1 (t = 0), then every 5 s.
  CHECK(reported_at == std::vector<std::int64_t>{11, 21});
  CHECK(texts(lines) == std::vector<std::string>{"global_step/sec: 2", "global_step/sec: 2"});
}

namespace {
/// Undoes the session's increment after every run, as a train op that does not advance the
/// global step would (TensorFlow: an optimizer not given the global step).
struct RewindGlobalStep {
  GlobalStep* gs;
  void after_run(SessionRunContext&, const SessionRunValues<>&) { --gs->value; }
};
}  // namespace

TEST_CASE("StepCounterHook: warns, at most 5 times, when the global step does not increase",
          "[hooks][step_counter]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(StepCounterHook<Fake, CapturingLogger>({.every_n_steps = 1}, Fake{&clock},
                                                   CapturingLogger{&lines}),
            RewindGlobalStep{&m.gs}));
  for (int run = 1; run <= 10; ++run) {
    session.run();
    clock.advance(1.0);
  }
  CHECK(session.global_step() == 0);
  // Runs 2.. see the same stale global step as the run before; TensorFlow's log_first_n(.., 5).
  REQUIRE(lines.size() == 5);
  for (const auto& l : lines) {
    CHECK(l.severity == Severity::warning);
    CHECK_THAT(l.text,
               Catch::Contains("global step (tf.train.get_global_step) has not been increased"));
  }
}

// =============================================================================================
// NanTensorHook
// =============================================================================================

static_assert(std::is_base_of_v<std::runtime_error, NanLossDuringTrainingError>);

TEST_CASE("NanLossDuringTrainingError's message", "[hooks][nan]") {
  CHECK(std::string(NanLossDuringTrainingError().what()) == "NaN loss during training.");
}

TEST_CASE("NanTensorHook: fail_on_nan_loss = true throws NanLossDuringTrainingError",
          "[hooks][nan]") {
  Model m;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(0.01), CountingInput{.nan_at = 3},
      hooks(NanTensorHook<"loss", CapturingLogger>({}, CapturingLogger{&lines})));
  session.run();
  session.run();
  CHECK(lines.empty());
  CHECK_FALSE(session.should_stop());
  bool thrown = false;
  try {
    session.run();
  } catch (const NanLossDuringTrainingError& e) {
    thrown = true;
    CHECK(std::string(e.what()) == "NaN loss during training.");
  }
  CHECK(thrown);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].severity == Severity::error);
  CHECK(lines[0].text == "Model diverged with loss = NaN.");
}

TEST_CASE("NanTensorHook: the default is fail_on_nan_loss = true", "[hooks][nan]") {
  Model m;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(0.01), CountingInput{.nan_at = 1},
      hooks(NanTensorHook<"loss", CapturingLogger>(
          NanTensorHook<"loss", CapturingLogger>::Options{}, CapturingLogger{&lines})));
  CHECK_THROWS_AS(session.run(), NanLossDuringTrainingError);
  CHECK(texts(lines) == std::vector<std::string>{"Model diverged with loss = NaN."});
}

TEST_CASE("NanTensorHook: fail_on_nan_loss = false warns and stops", "[hooks][nan]") {
  Model m;
  Lines lines;
  MonitoredTrainingSession session(m.train_op(0.01), CountingInput{.nan_at = 3},
                                   hooks(NanTensorHook<"loss", CapturingLogger>(
                                       {.fail_on_nan_loss = false}, CapturingLogger{&lines})));
  int runs = 0;
  CHECK_NOTHROW(runs = run_until_stop(session));
  CHECK(runs == 3);
  CHECK(session.should_stop());
  CHECK(session.global_step() == 3);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].severity == Severity::warning);
  CHECK(lines[0].text == "Model diverged with loss = NaN.");
}

namespace {
/// Feeds the same x = v every run (batch of one).
struct XInput {
  float v = 0.0f;
  bool next() { return true; }
  Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&v, 1);
  }
};
}  // namespace

TEST_CASE("NanTensorHook: a loss with another name (log of a negative number)", "[hooks][nan]") {
  // my_loss = mean(log(x W + b)) with W = -1: log of a negative number from the first run.
  Placeholder<"x", float, 1> x;
  Variable<"W", float, 1, 1> W;
  Variable<"b", float, 1, 1> b;
  W.value(0, 0) = -1.0f;
  GlobalStep gs;
  auto train_op = GradientDescentOptimizer(0.1).minimize(
      named<"my_loss">(reduce_mean(hookfuse::log(matmul(x, W) + b))), gs);
  Lines lines;
  SECTION("fail") {
    MonitoredTrainingSession session(
        train_op, XInput{2.0f}, hooks(NanTensorHook<"my_loss", CapturingLogger>({}, {&lines})));
    CHECK_THROWS_WITH(session.run(), "NaN loss during training.");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].severity == Severity::error);
  }
  SECTION("stop") {
    MonitoredTrainingSession session(
        train_op, XInput{2.0f},
        hooks(NanTensorHook<"my_loss", CapturingLogger>({.fail_on_nan_loss = false}, {&lines})));
    CHECK(run_until_stop(session) == 1);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].severity == Severity::warning);
  }
}

TEST_CASE("NanTensorHook: infinity is not NaN", "[hooks][nan]") {
  // TensorFlow checks np.isnan: an infinite loss does not stop training.
  Placeholder<"x", float, 1> x;
  Variable<"W", float, 1, 1> W;
  GlobalStep gs;
  // log(0 * W) = log(0) = -inf; learning rate 0 keeps W finite.
  auto train_op = GradientDescentOptimizer(0.0).minimize(
      named<"loss">(reduce_mean(hookfuse::log(matmul(x, W)))), gs);
  Lines lines;
  MonitoredTrainingSession session(train_op, XInput{0.0f},
                                   hooks(NanTensorHook<"loss", CapturingLogger>({}, {&lines})));
  CHECK_NOTHROW(session.run());
  CHECK(std::isinf(session.fetch<"loss">().item()));
  CHECK_FALSE(session.should_stop());
  CHECK(lines.empty());
}

// =============================================================================================
// All four together, as in a training script
// =============================================================================================

TEST_CASE("The four built-in hooks together", "[hooks]") {
  Model m(120);
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(StopAtStepHook({.num_steps = 30}), NanTensorHook<"loss", CapturingLogger>({}, {&lines}),
            StepCounterHook<Fake, CapturingLogger>({.every_n_steps = 10}, Fake{&clock},
                                                   CapturingLogger{&lines}),
            BasicLoggingTensorHook<Policies, "loss", "accuracy">(
                {.every_n_iter = 10, .at_end = true}, {}, Fake{&clock}, CapturingLogger{&lines})),
      m.accuracy());
  int runs = 0;
  while (!session.should_stop()) {
    session.run();
    ++runs;
    clock.advance(1.0);
  }
  session.close();
  CHECK(runs == 30);
  CHECK(session.global_step() == 150);
  // Hook order within a run: StepCounterHook's line before LoggingTensorHook's.
  CHECK(texts(lines) == std::vector<std::string>{
                            "loss = 1.0, accuracy = 0.25",
                            "global_step/sec: 1",  // global step 131 = run 11
                            "loss = 121.0, accuracy = 2.75 (10.000 sec)",
                            "global_step/sec: 1",  // global step 141 = run 21
                            "loss = 441.0, accuracy = 5.25 (10.000 sec)",
                            "loss = 900.0, accuracy = 7.5 (10.000 sec)",  // at_end, after run 30
                        });
}
