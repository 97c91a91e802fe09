// tests/test_no_train_run.cpp: hooked runs that do not train, session.run(no_train, ...) and
// session.run<names...>(no_train, ...) on a MonitoredTrainingSession (TensorFlow: a
// `sess.run(loss)` inside a MonitoredTrainingSession, or `run_with_hooks(fetches)` from
// run_step_fn, without the train op), with the core hooks (CheckpointSaverHook with a saver
// that records its steps). SummarySaverHook, which writes event files, is in
// test_no_train_run_io.cpp.
//
// The specification is TensorFlow's code (tensorflow/python/training/basic_session_run_hooks.py,
// TF 1.15 / 2.x compat.v1): every hook's before_run and after_run runs in such a run; the global
// step fetched in before_run ("stale") is also the step after the run, since nothing increments
// it. The hooks' rules in such a run, worked out by hand in each test case:
//   LoggingTensorHook: `_iter_count += 1` in every after_run: a non-training run is an
//       iteration, it logs when the timer fires for its iteration.
//   StepCounterHook.after_run: `should_trigger_for_step(stale + steps_per_run)`, then
//       `should_trigger_for_step(global_step)` with the step read after the run (here = stale);
//       then `stale == _last_global_step` counts as a global step that did not increase (the
//       training run after a non-training one has the same stale step, and warns).
//   StopAtStepHook.after_run: `stale + 1 >= last_step` and then the step read again
//       `>= last_step`: here the step itself must have reached last_step.
//   CheckpointSaverHook.after_run: the same two checks as StepCounterHook's timer.
#include <catch2/catch.hpp>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capturing_logger.hpp"
#include "lr_model.hpp"

using namespace hookfuse;
using hookfuse_test::CapturingLogger;
using hookfuse_test::Lines;
using hookfuse_test::LrModel;

namespace {

using Fake = ClockRef<FakeClock>;

/// What a RecordingHook saw in one run.
struct Seen {
  std::int64_t stale_step;  // "global_step" fetched (before the run)
  std::int64_t step_after;  // run_context.global_step() in after_run
  double loss;              // "loss" fetched
  bool trains;              // run_context.trains()
  std::size_t caller_fetches;
};

/// Fetches "loss" and "global_step" every run and records them in after_run.
struct RecordingHook {
  std::vector<Seen>* seen;
  int* before_runs;
  SessionRunArgs<"loss", "global_step"> before_run(SessionRunContext& ctx) {
    ++*before_runs;
    CHECK(ctx.global_step_increment() == 1);  // the train op's, in every run
    return {};
  }
  void after_run(SessionRunContext& ctx, const SessionRunValues<"loss", "global_step">& v) {
    seen->push_back({v.get<"global_step">().item_int(), ctx.global_step(),
                     v.get<"loss">().item(), ctx.trains(), ctx.original_args().fetches.size()});
  }
};

/// A gradient hook counting its calls (every variable's gradient is then stored, unfused).
struct CountGradients {
  int* calls;
  void before_apply_gradients(const auto&) { ++*calls; }
};

/// Every byte of every checkpoint variable of a session (model variables, optimizer slots and
/// non-slot variables, global_step), by name.
template <class Session>
std::vector<std::pair<std::string, std::string>> snapshot(Session& session) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& v : session.variables()) {
    std::size_t width = 4;
    if (v.dtype == DType::float64 || v.dtype == DType::int64) width = 8;
    const auto n = static_cast<std::size_t>(v.num_elements()) * width;
    out.emplace_back(std::string(v.name), std::string(static_cast<const char*>(v.data), n));
  }
  return out;
}

/// One row of caller feeds for LrModel.
struct Row {
  float x;
  float y;
};

}  // namespace

TEST_CASE("a hooked run that does not train computes the fetches and changes nothing",
          "[no_train]") {
  // SGD 0.125 from W = b = 0. Training on x = 1, y = 2: d loss / dW = d loss / db =
  // 2 (0 - 2) = -4, so W = b = 0.5. The run that does not train feeds x = 2, y = 4: the loss is
  // (0.5 * 2 + 0.5 - 4)^2 = 6.25, exact in float32.
  LrModel m;
  std::vector<Seen> seen;
  int before_runs = 0, gradient_calls = 0;
  MonitoredTrainingSession session(
      m.train_op(0.125), caller_feeds(4),
      hooks(RecordingHook{&seen, &before_runs}, CountGradients{&gradient_calls}));
  Row r1{1.0f, 2.0f}, r2{2.0f, 4.0f};
  session.run(feed<"x">(&r1.x, 1), feed<"y">(&r1.y, 1));
  REQUIRE(m.W.value(0, 0) == 0.5f);
  REQUIRE(m.b.value(0, 0) == 0.5f);
  REQUIRE(gradient_calls == 1);
  const auto before = snapshot(session);

  const auto v = session.run<"loss", "global_step">(no_train, feed<"x">(&r2.x, 1),
                                                    feed<"y">(&r2.y, 1));
  REQUIRE(v.has_value());
  CHECK(v->get<"loss">().item() == 6.25);
  CHECK(v->get<"global_step">().item_int() == 1);
  CHECK(session.global_step() == 1);
  CHECK(snapshot(session) == before);  // every variable bit for bit
  CHECK(gradient_calls == 1);          // no backward pass: no gradient event
  REQUIRE(seen.size() == 2);
  CHECK(before_runs == 2);
  CHECK(seen[0].trains);
  CHECK(seen[0].stale_step == 0);
  CHECK(seen[0].step_after == 1);
  CHECK(seen[0].loss == 4.0);  // (0 - 2)^2
  CHECK_FALSE(seen[1].trains);
  CHECK(seen[1].stale_step == 1);
  CHECK(seen[1].step_after == 1);
  CHECK(seen[1].loss == 6.25);
  CHECK(seen[1].caller_fetches == 2);  // original_args: "loss", "global_step"

  // Without fetches: the hooks still see the run.
  CHECK(session.run(no_train, feed<"x">(&r1.x, 1), feed<"y">(&r1.y, 1)));
  REQUIRE(seen.size() == 3);
  CHECK(seen[2].loss == 1.0);  // (0.5 * 1 + 0.5 - 2)^2
  CHECK_FALSE(seen[2].trains);
  CHECK(seen[2].caller_fetches == 0);
  CHECK(session.global_step() == 1);
  CHECK(snapshot(session) == before);

  // The next training run trains from W = b = 0.5 on x = 2, y = 4: the error 1.5 - 4 = -2.5,
  // d loss / dW = 2 (-2.5) 2 = -10, d loss / db = -5: W = 0.5 + 1.25, b = 0.5 + 0.625.
  session.run(feed<"x">(&r2.x, 1), feed<"y">(&r2.y, 1));
  CHECK(m.W.value(0, 0) == 1.75f);
  CHECK(m.b.value(0, 0) == 1.125f);
  CHECK(session.global_step() == 2);
  CHECK(gradient_calls == 2);
  REQUIRE(seen.size() == 4);
  CHECK(seen[3].trains);
  CHECK(seen[3].stale_step == 1);
  CHECK(seen[3].step_after == 2);
}

namespace {
/// Trains `rows` in order with caller feeds, running a non-training run on `eval` before the
/// training run of index `interleave_at` (-1: never); returns every variable's bytes.
template <class MakeOptimizer>
std::vector<std::pair<std::string, std::string>> train_rows(MakeOptimizer make,
                                                            const std::vector<Row>& rows,
                                                            int interleave_at, Row eval) {
  LrModel m;
  std::vector<Seen> seen;
  int before_runs = 0;
  MonitoredTrainingSession session(make().minimize(m.loss(), m.gs), caller_feeds(4),
                                   hooks(RecordingHook{&seen, &before_runs}));
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    if (i == interleave_at) {
      const auto before = snapshot(session);
      const auto v = session.template run<"loss">(no_train, feed<"x">(&eval.x, 1),
                                                  feed<"y">(&eval.y, 1));
      REQUIRE(v.has_value());
      // The loss from the current variables, computed here in float as the graph does.
      const float w = m.W.value(0, 0), b = m.b.value(0, 0);
      const float err = w * eval.x + b - eval.y;
      CHECK(v->template get<"loss">().item() ==
            Approx(static_cast<double>(err * err)).epsilon(1e-6));
      CHECK(snapshot(session) == before);  // variables, slots, global step unchanged
    }
    const Row& r = rows[static_cast<std::size_t>(i)];
    session.run(feed<"x">(&r.x, 1), feed<"y">(&r.y, 1));
  }
  CHECK(session.global_step() == static_cast<std::int64_t>(rows.size()));
  return snapshot(session);
}
}  // namespace

TEST_CASE("training after a run that does not train is the uninterrupted training, bit for bit",
          "[no_train]") {
  const std::vector<Row> rows{{1.0f, 2.0f}, {0.5f, -1.0f}, {3.0f, 1.5f}, {-2.0f, 0.25f}};
  const Row eval{7.0f, -3.0f};
  SECTION("SGD (fused update)") {
    auto make = [] { return GradientDescentOptimizer(0.05); };
    const auto plain = train_rows(make, rows, -1, eval);
    CHECK(train_rows(make, rows, 2, eval) == plain);
    CHECK(train_rows(make, rows, 0, eval) == plain);
  }
  SECTION("Momentum (fused into its slot)") {
    auto make = [] { return MomentumOptimizer(0.05, 0.9); };
    const auto plain = train_rows(make, rows, -1, eval);
    REQUIRE(plain.size() == 5);  // W, b, W/Momentum, b/Momentum, global_step
    CHECK(train_rows(make, rows, 1, eval) == plain);
    CHECK(train_rows(make, rows, 3, eval) == plain);
  }
  SECTION("Adam (slots and beta powers)") {
    auto make = [] { return AdamOptimizer(0.05); };
    const auto plain = train_rows(make, rows, -1, eval);
    CHECK(train_rows(make, rows, 2, eval) == plain);
  }
}

TEST_CASE("a run that does not train needs only what its fetches read fed", "[no_train]") {
  LrModel m;
  MonitoredTrainingSession session(m.train_op(0.125), caller_feeds(4), hooks(), m.probe());
  float xs[2] = {1.5f, 2.0f};
  // "probe" (sum of x) reads x only: y need not be fed, and no loss is computed.
  const auto v = session.run<"probe">(no_train, feed<"x">(xs, 2));
  REQUIRE(v.has_value());
  CHECK(v->get<"probe">().item() == 3.5);
  // "loss" reads y too: ShapeError before anything is computed; nothing changes.
  CHECK_THROWS_AS(session.run<"loss">(no_train, feed<"x">(xs, 2)), ShapeError);
  CHECK(session.global_step() == 0);
  CHECK(m.W.value(0, 0) == 0.0f);
}

TEST_CASE("a run that does not train takes the input's next batch, and its end stops",
          "[no_train]") {
  // CountingInput: batch i feeds x = i, y = 2 i; learning rate 0, so the loss is (2 i)^2.
  LrModel m;
  hookfuse_test::CountingInput input;
  input.limit = 3;
  MonitoredTrainingSession session(m.train_op(), input, hooks());
  CHECK(session.run<"loss">()->get<"loss">().item() == 4.0);  // batch 1, trains
  const auto v = session.run<"loss", "global_step">(no_train);     // batch 2
  REQUIRE(v.has_value());
  CHECK(v->get<"loss">().item() == 16.0);
  CHECK(v->get<"global_step">().item_int() == 1);
  CHECK(session.run<"loss">()->get<"loss">().item() == 36.0);  // batch 3, trains
  CHECK(session.global_step() == 2);
  CHECK_FALSE(session.run(no_train));  // the input's end: no run, as run() there
  CHECK(session.should_stop());
  CHECK(session.global_step() == 2);
  CHECK_THROWS_AS(session.run(no_train), RuntimeError);  // TF: run after should_stop
}

TEST_CASE("run_step_fn: run_with_hooks(no_train) is a hook iteration that does not train",
          "[no_train][run_step_fn]") {
  LrModel m;
  std::vector<Seen> seen;
  int before_runs = 0;
  MonitoredTrainingSession session(m.train_op(0.125), caller_feeds(4),
                                   hooks(RecordingHook{&seen, &before_runs}));
  Row r{1.0f, 2.0f};
  session.run_step_fn([&](auto& step) {
    const auto v = step.template run_with_hooks<"loss">(no_train, feed<"x">(&r.x, 1),
                                                        feed<"y">(&r.y, 1));
    CHECK(v->template get<"loss">().item() == 4.0);
    step.run_with_hooks(no_train, feed<"x">(&r.x, 1), feed<"y">(&r.y, 1));
  });
  CHECK(session.global_step() == 0);
  CHECK(m.W.value(0, 0) == 0.0f);
  REQUIRE(seen.size() == 2);
  CHECK_FALSE(seen[0].trains);
  CHECK_FALSE(seen[1].trains);
}

TEST_CASE("LoggingTensorHook counts a run that does not train as an iteration",
          "[no_train][logging]") {
  // every_n_iter = 3: logs at iterations 0, 3, 6, whatever the runs are (TF: _iter_count += 1
  // in every after_run). QuarterInput with learning rate 0: run k's loss is k^2. The hook alone
  // lets the session skip it in idle training runs: the skipped runs are counted before a run
  // that does not train (iteration 2 below), which therefore does not log.
  LrModel m;
  FakeClock clock;
  Lines lines;
  using Hook = BasicLoggingTensorHook<LoggingPolicies<Fake, CapturingLogger>, "loss">;
  MonitoredTrainingSession session(
      m.train_op(), hookfuse_test::QuarterInput{},
      hooks(Hook({.every_n_iter = 3}, {}, Fake{&clock}, CapturingLogger{&lines})));
  static_assert(decltype(session)::skips_idle_runs);
  session.run();            // iteration 0: logs 1
  session.run();            // 1
  session.run(no_train);    // 2
  session.run();            // 3: logs 16
  session.run();            // 4
  session.run(no_train);    // 5
  session.run(no_train);    // 6: logs 49, from the run that does not train
  session.run();            // 7
  CHECK(session.global_step() == 5);
  CHECK(session.hook<0>().iter_count() == 8);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].text == "loss = 1.0");
  CHECK(lines[1].text == "loss = 16.0 (0.000 sec)");
  CHECK(lines[2].text == "loss = 49.0 (0.000 sec)");
}

TEST_CASE("StepCounterHook in runs that do not train follows TensorFlow's step comparisons",
          "[no_train][step_counter]") {
  LrModel m;
  FakeClock clock;
  Lines lines;
  const std::string stalled = "It seems that global step (tf.train.get_global_step) has not been "
                              "increased. Current value (could be stable): ";
  SECTION("every_n_steps: a first run that does not train sets the baseline at its step") {
    // every_n_steps = 2. Run 1 (no_train, stale 0): the timer has never fired, so it fires for
    // step 0: baseline (step 0, t = 1), no line. Run 2 (0 -> 1, stale 0): no trigger (1 < 2);
    // stale 0 == the previous stale 0: the stalled-step warning. Run 3 (1 -> 2): fires at 2,
    // 2 steps in 5 - 1 = 4 s: 0.5. Run 4 (no_train at 2): pre-check 3 < 4, nothing. Run 5
    // (2 -> 3): stale 2 == 2, warns. Run 6 (3 -> 4): fires, 2 steps in 11 - 5 = 6 s.
    MonitoredTrainingSession session(
        m.train_op(), hookfuse_test::QuarterInput{},
        hooks(StepCounterHook<Fake, CapturingLogger>({.every_n_steps = 2}, Fake{&clock},
                                                      CapturingLogger{&lines})));
    clock.seconds = 1;
    session.run(no_train);
    CHECK(lines.empty());
    clock.seconds = 2;
    session.run();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].severity == Severity::warning);
    CHECK(lines[0].text.starts_with(stalled + "0 vs previous value: 0."));
    clock.seconds = 5;
    session.run();
    REQUIRE(lines.size() == 2);
    CHECK(lines[1].text == "global_step/sec: 0.5");
    clock.seconds = 6;
    session.run(no_train);
    CHECK(lines.size() == 2);
    clock.seconds = 7;
    session.run();
    REQUIRE(lines.size() == 3);
    CHECK(lines[2].text.starts_with(stalled + "2 vs previous value: 2."));
    clock.seconds = 11;
    session.run();
    REQUIRE(lines.size() == 4);
    CHECK(lines[3].text == "global_step/sec: 0.333333");
    CHECK(session.global_step() == 4);
  }
  SECTION("every_n_secs: a run that does not train fires when the time has come") {
    // every_n_secs = 10. Run 1 (0 -> 1, t = 0): baseline at 1. Run 2 (1 -> 2, t = 1): 1 < 10 s.
    // Run 3 (no_train at 2, t = 20): pre-check for 3 and check for 2 both fire: 1 step in 20 s.
    // Run 4 (2 -> 3, t = 21): 1 s since, no line; stale 2 == 2: the stalled-step warning.
    MonitoredTrainingSession session(
        m.train_op(), hookfuse_test::QuarterInput{},
        hooks(StepCounterHook<Fake, CapturingLogger>({.every_n_secs = 10.0}, Fake{&clock},
                                                      CapturingLogger{&lines})));
    session.run();
    clock.seconds = 1;
    session.run();
    CHECK(lines.empty());
    clock.seconds = 20;
    session.run(no_train);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].text == "global_step/sec: 0.05");
    CHECK(session.hook<0>().last_rate() == 0.05);
    clock.seconds = 21;
    session.run();
    REQUIRE(lines.size() == 2);
    CHECK(lines[1].text.starts_with(stalled + "2 vs previous value: 2."));
  }
}

TEST_CASE("StopAtStepHook: runs that do not train never reach the last step", "[no_train][stop]") {
  LrModel m;
  SECTION("num_steps = 2 stops after the second training run") {
    MonitoredTrainingSession session(m.train_op(), hookfuse_test::QuarterInput{},
                                     hooks(StopAtStepHook({.num_steps = 2})));
    session.run(no_train);
    session.run(no_train);
    CHECK_FALSE(session.should_stop());
    session.run();
    session.run(no_train);
    CHECK_FALSE(session.should_stop());
    session.run();
    CHECK(session.should_stop());
    CHECK(session.global_step() == 2);
  }
  SECTION("a step already at the last step stops after a run that does not train") {
    // num_steps = 0: last_step = 0; TF: stale 0 + 1 >= 0, then the step read again, 0 >= 0.
    MonitoredTrainingSession session(m.train_op(), hookfuse_test::QuarterInput{},
                                     hooks(StopAtStepHook({.num_steps = 0})));
    session.run(no_train);
    CHECK(session.should_stop());
    CHECK(session.global_step() == 0);
    CHECK_THROWS_AS(session.run(), RuntimeError);
  }
}

TEST_CASE("NanTensorHook checks the loss of a run that does not train", "[no_train][nan]") {
  // QuarterInput feeds NaN in run 2: TF's NanTensorHook fetches the loss in every run.
  LrModel m;
  hookfuse_test::QuarterInput input;
  input.nan_at = 2;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), input, hooks(NanTensorHook<"loss", CapturingLogger>({}, {&lines})));
  session.run();
  CHECK_THROWS_AS(session.run(no_train), NanLossDuringTrainingError);
  CHECK(session.global_step() == 1);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].text == "Model diverged with loss = NaN.");
}

namespace {
/// A saver recording the global step of every save.
struct StepSaver {
  std::vector<std::int64_t>* steps;
  std::string save(VariableList, std::string_view save_path, std::int64_t global_step) {
    steps->push_back(global_step);
    return std::string(save_path) + "-" + std::to_string(global_step);
  }
  std::optional<std::string> restore_latest(VariableList, std::string_view) {
    return std::nullopt;
  }
};
using SaverHook = CheckpointSaverHook<StepSaver, boost::hana::tuple<>, Fake, CapturingLogger>;
}  // namespace

TEST_CASE("CheckpointSaverHook in runs that do not train follows TensorFlow's step comparisons",
          "[no_train][checkpoint_saver]") {
  // TF's after_run: should_trigger_for_step(stale + steps_per_run), then
  // should_trigger_for_step(global_step read after the run), which is the stale step here.
  LrModel m;
  FakeClock clock;
  Lines lines;
  std::vector<std::int64_t> saves;
  SECTION("save_steps: never saves in a run that does not train") {
    // save_steps = 2: saved at 0 on creation (timer at 0). Run 1 (0 -> 1): 1 < 2. Run 2
    // (no_train at 1): pre-check for 2 fires, the check for 1 does not (1 < 0 + 2). Run 3
    // (1 -> 2): saves 2. Run 4 (no_train at 2): 3 < 4. end(): step 2 was saved last, no save.
    MonitoredTrainingSession session(
        m.train_op(), hookfuse_test::QuarterInput{},
        hooks(SaverHook("ckpt", {.save_steps = 2}, StepSaver{&saves}, {}, Fake{&clock},
                        CapturingLogger{&lines})));
    session.run();
    session.run(no_train);
    CHECK(saves == std::vector<std::int64_t>{0});
    session.run();
    session.run(no_train);
    session.close();
    CHECK(saves == std::vector<std::int64_t>{0, 2});
  }
  SECTION("save_secs: a run that does not train saves its step when the time has come") {
    // save_secs = 10: saved at 0 on creation (t = 0). Run 1 (0 -> 1, t = 1): no. Run 2
    // (no_train at 1, t = 15): both checks fire: saves step 1 (the variables after run 1, which
    // this run did not change). end(): step 1 was saved last, no save.
    MonitoredTrainingSession session(
        m.train_op(), hookfuse_test::QuarterInput{},
        hooks(SaverHook("ckpt", {.save_secs = 10.0}, StepSaver{&saves}, {}, Fake{&clock},
                        CapturingLogger{&lines})));
    clock.seconds = 1;
    session.run();
    clock.seconds = 15;
    session.run(no_train);
    CHECK(saves == std::vector<std::int64_t>{0, 1});
    CHECK(session.hook<0>().last_triggered_step() == 1);
    session.close();
    CHECK(saves == std::vector<std::int64_t>{0, 1});
  }
}
