// tests/test_step_increment.cpp: a train op whose global step advances by 2 per run
// (TrainOp::global_step_increment, TF: a train op grouped with tf.assign_add(global_step, 2)),
// and the exact-step cadence of every step-driven TensorFlow hook under it, with a FakeClock.
//
// The specification is TensorFlow 1.x's basic_session_run_hooks.py with `steps_per_run` equal
// to the increment: a hook compares the global step *after* the run (the stale value fetched in
// before_run plus the increment) with its next trigger, last + every_n. LoggingTensorHook counts
// its own iterations (TF's _iter_count), not global steps, so its cadence is in runs.
//
// The model trains with learning rate 0 (W = b = 0), so run k's loss is y_k^2 = k^2: a logged
// "loss = 121.0" came from run 11. The SummarySaverHook case is in test_summary_saver_hook.cpp
// (it needs the io layer).
#include <boost/hana/at.hpp>
#include <catch2/catch.hpp>
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

using namespace hookfuse;
namespace hana = boost::hana;

namespace {

using hookfuse_test::CapturingLogger;
using hookfuse_test::Line;
using hookfuse_test::Lines;
std::vector<std::string> texts(const Lines& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.text);
  return out;
}
using Fake = ClockRef<FakeClock>;

/// Run k (from 1) feeds x = k / 4 and y = k; x = NaN in run `nan_at`.
using CountingInput = hookfuse_test::QuarterInput;

using Model = hookfuse_test::LrModel;

/// m.train_op() with global_step_increment = `by`.
auto train_op_by(Model& m, std::int64_t by) {
  auto op = m.train_op();
  op.global_step_increment = by;
  return op;
}

template <class Session>
int run_until_stop(Session& session, int max_runs = 100000) {
  int runs = 0;
  while (!session.should_stop() && runs < max_runs) {
    session.run();
    ++runs;
  }
  return runs;
}

struct FakeSaver {
  std::vector<std::int64_t>* steps;
  std::string save(VariableList, std::string_view save_path, std::int64_t global_step) {
    steps->push_back(global_step);
    return std::string(save_path) + "-" + std::to_string(global_step);
  }
  std::optional<std::string> restore_latest(VariableList, std::string_view) { return std::nullopt; }
};

}  // namespace

TEST_CASE("TrainOp::global_step_increment: each run adds it, the fetch is the value before",
          "[step_increment]") {
  Model m;
  SECTION("default 1") {
    auto op = m.train_op();
    CHECK(op.global_step_increment == 1);
  }
  SECTION("2") {
    MonitoredTrainingSession session(train_op_by(m, 2), CountingInput{}, hooks());
    std::vector<std::int64_t> fetched, after;
    for (int run = 1; run <= 3; ++run) {
      fetched.push_back(session.run<"global_step">()->get<"global_step">().item_int());
      after.push_back(session.global_step());
    }
    CHECK(fetched == std::vector<std::int64_t>{0, 2, 4});
    CHECK(after == std::vector<std::int64_t>{2, 4, 6});
    CHECK(m.gs.value == 6);
  }
  SECTION("0: the step stays (TF's SyncReplicasOptimizer worker)") {
    MonitoredTrainingSession session(train_op_by(m, 0), CountingInput{}, hooks());
    session.run();
    session.run();
    CHECK(session.global_step() == 0);
  }
  SECTION("negative: std::invalid_argument naming the field") {
    try {
      MonitoredTrainingSession session(train_op_by(m, -1), CountingInput{}, hooks());
      FAIL("no exception");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()) ==
            "hookfuse: TrainOp::global_step_increment must be >= 0, got -1");
    }
  }
}

TEST_CASE("SessionRunContext::global_step_increment is the train op's", "[step_increment]") {
  struct Probe {
    std::vector<std::int64_t>* seen;
    SessionRunArgs<> before_run(SessionRunContext& ctx) {
      seen->push_back(ctx.global_step_increment());
      return {};
    }
  };
  Model m;
  std::vector<std::int64_t> seen;
  MonitoredTrainingSession session(train_op_by(m, 3), CountingInput{}, hooks(Probe{&seen}));
  session.run();
  CHECK(seen == std::vector<std::int64_t>{3});
}

// --- StopAtStepHook ---------------------------------------------------------------------------

TEST_CASE("StopAtStepHook(num_steps = 100), increment 2, from step 0: 50 runs, step 100",
          "[step_increment][stop_at_step]") {
  Model m;
  MonitoredTrainingSession session(train_op_by(m, 2), CountingInput{},
                                   hooks(StopAtStepHook({.num_steps = 100})));
  CHECK(run_until_stop(session) == 50);
  CHECK(session.global_step() == 100);
  CHECK(session.input().i == 50);
}

TEST_CASE("StopAtStepHook(last_step = 101), increment 2: stops after the run reaching 102",
          "[step_increment][stop_at_step]") {
  // TF: stop once the global step after the run is >= last_step; 100 < 101, 102 >= 101.
  Model m;
  MonitoredTrainingSession session(train_op_by(m, 2), CountingInput{},
                                   hooks(StopAtStepHook({.last_step = 101})));
  CHECK(run_until_stop(session) == 51);
  CHECK(session.global_step() == 102);
}

TEST_CASE("StopAtStepHook(num_steps = 5), increment 2, from step 1: stops at 7 after 3 runs",
          "[step_increment][stop_at_step]") {
  Model m(1);  // last_step = 1 + 5 = 6: steps 3, 5 (< 6), 7 (>= 6)
  MonitoredTrainingSession session(train_op_by(m, 2), CountingInput{},
                                   hooks(StopAtStepHook({.num_steps = 5})));
  CHECK(run_until_stop(session) == 3);
  CHECK(session.global_step() == 7);
}

// --- StepCounterHook --------------------------------------------------------------------------

TEST_CASE("StepCounterHook(every_n_steps = 10), increment 2: baseline at 2, reports at 12, 22, 32",
          "[step_increment][step_counter]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      train_op_by(m, 2), CountingInput{},
      hooks(StepCounterHook<Fake, CapturingLogger>({.every_n_steps = 10}, Fake{&clock},
                                                   CapturingLogger{&lines})));
  std::vector<std::int64_t> reported_at;
  for (int run = 1; run <= 17; ++run) {  // global steps 2, 4, ..., 34
    clock.advance(1.0);
    const std::size_t before = lines.size();
    session.run();
    if (lines.size() != before) reported_at.push_back(session.global_step());
  }
  CHECK(reported_at == std::vector<std::int64_t>{12, 22, 32});
  // 10 global steps in 5 runs of 1 fake second: 2 global steps per second.
  CHECK(texts(lines) ==
        std::vector<std::string>{"global_step/sec: 2", "global_step/sec: 2", "global_step/sec: 2"});
  CHECK(hana::at_c<0>(session.hooks()).last_rate() == std::optional<double>(2.0));
}

TEST_CASE("StepCounterHook(every_n_steps = 5), increment 2: fires at the first step past 5 more",
          "[step_increment][step_counter]") {
  // Baseline at 2; next trigger at >= 7: step 8 (8 - 2 = 6 steps in 3 runs); then >= 13: 14.
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      train_op_by(m, 2), CountingInput{},
      hooks(StepCounterHook<Fake, CapturingLogger>({.every_n_steps = 5}, Fake{&clock},
                                                   CapturingLogger{&lines})));
  std::vector<std::int64_t> reported_at;
  for (int run = 1; run <= 8; ++run) {  // global steps 2 .. 16
    clock.advance(0.5);
    const std::size_t before = lines.size();
    session.run();
    if (lines.size() != before) reported_at.push_back(session.global_step());
  }
  CHECK(reported_at == std::vector<std::int64_t>{8, 14});
  // 6 steps in 3 runs of 0.5 s: 4 steps per second.
  CHECK(texts(lines) == std::vector<std::string>{"global_step/sec: 4", "global_step/sec: 4"});
}

// --- LoggingTensorHook ------------------------------------------------------------------------

TEST_CASE("LoggingTensorHook(every_n_iter = 10), increment 2: every 10 runs, not global steps",
          "[step_increment][logging_tensor]") {
  Model m;
  FakeClock clock;
  Lines lines;
  MonitoredTrainingSession session(
      train_op_by(m, 2), CountingInput{},
      hooks(BasicLoggingTensorHook<LoggingPolicies<Fake, CapturingLogger>, "loss">(
          {.every_n_iter = 10}, {}, Fake{&clock}, CapturingLogger{&lines})));
  std::vector<int> logged_at;
  std::vector<std::int64_t> steps_at;
  for (int run = 1; run <= 25; ++run) {
    const std::size_t before = lines.size();
    session.run();
    if (lines.size() != before) {
      logged_at.push_back(run);
      steps_at.push_back(session.global_step());
    }
    clock.advance(0.5);
  }
  CHECK(logged_at == std::vector<int>{1, 11, 21});
  CHECK(steps_at == std::vector<std::int64_t>{2, 22, 42});
  // loss = run^2; 10 runs of 0.5 s between lines.
  CHECK(texts(lines) == std::vector<std::string>{"loss = 1.0", "loss = 121.0 (5.000 sec)",
                                                 "loss = 441.0 (5.000 sec)"});
}

// --- CheckpointSaverHook ----------------------------------------------------------------------

TEST_CASE("CheckpointSaverHook(save_steps = 4), increment 2: saves at 0, 4, 8, ..., and at end",
          "[step_increment][checkpoint_saver]") {
  Model m;
  std::vector<std::int64_t> saved;
  {
    MonitoredTrainingSession session(
        train_op_by(m, 2), CountingInput{},
        hooks(CheckpointSaverHook("D", {.save_steps = 4}, FakeSaver{&saved}, listeners(),
                                  SteadyClock{}, NullLogger{}),
              StopAtStepHook({.last_step = 18})));
    CHECK(run_until_stop(session) == 9);
  }
  // after_create_session saves step 0; then every step >= last + 4; end() saves 18 (not saved).
  CHECK(saved == std::vector<std::int64_t>{0, 4, 8, 12, 16, 18});
}

TEST_CASE("CheckpointSaverHook(save_steps = 3), increment 2: the first step >= last + 3",
          "[step_increment][checkpoint_saver]") {
  // 0; >= 3: 4; >= 7: 8; >= 11: 12; end at 14 saves 14.
  Model m;
  std::vector<std::int64_t> saved;
  {
    MonitoredTrainingSession session(
        train_op_by(m, 2), CountingInput{},
        hooks(CheckpointSaverHook("D", {.save_steps = 3}, FakeSaver{&saved}, listeners(),
                                  SteadyClock{}, NullLogger{})));
    for (int run = 1; run <= 7; ++run) session.run();
    CHECK(session.global_step() == 14);
  }
  CHECK(saved == std::vector<std::int64_t>{0, 4, 8, 12, 14});
}

// --- NanTensorHook ----------------------------------------------------------------------------

TEST_CASE("NanTensorHook, increment 2: the NaN run is the last, its step counted",
          "[step_increment][nan]") {
  SECTION("fail_on_nan_loss = false: stops after run 3, at step 6") {
    Model m;
    MonitoredTrainingSession session(
        train_op_by(m, 2), CountingInput{.nan_at = 3},
        hooks(NanTensorHook<"loss", NullLogger>({.fail_on_nan_loss = false})));
    CHECK(run_until_stop(session) == 3);
    CHECK(session.global_step() == 6);
  }
  SECTION("fail_on_nan_loss = true: run 3 throws; the train op had run (step 6)") {
    Model m;
    MonitoredTrainingSession session(train_op_by(m, 2), CountingInput{.nan_at = 3},
                                     hooks(NanTensorHook<"loss", NullLogger>()));
    session.run();
    session.run();
    CHECK_THROWS_AS(session.run(), NanLossDuringTrainingError);
    CHECK(m.gs.value == 6);
  }
}
