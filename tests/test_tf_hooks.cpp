// tests/test_tf_hooks.cpp: FeedFnHook, FinalOpsHook and GlobalStepWaiterHook in a
// MonitoredTrainingSession, against TensorFlow 1.x's basic_session_run_hooks.py and
// monitored_session.py (_HookedSession's feed merging).
//
// The model is the one-weight linear regression of lr_model.hpp, loss = mean((x W + b - y)^2);
// "accuracy" is mean(x), a metric outside the loss's graph. With learning rate 0 the variables
// keep the values the test sets, so every expected number below is a hand computation from the
// fed x and y. Waiting uses a fake step source and a fake sleep: no sleeps.
#include <boost/hana/at.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <hookfuse/hookfuse.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capturing_logger.hpp"
#include "lr_model.hpp"

using namespace hookfuse;
namespace hana = boost::hana;

namespace {

using hookfuse_test::CapturingLogger;
using hookfuse_test::Line;
using hookfuse_test::Lines;

using Model = hookfuse_test::LrModel;

/// Run k (from 1) feeds x = k / 4 and y = k.
using CountingInput = hookfuse_test::QuarterInput;

/// A feed_fn that feeds x = 2k and y = k in its k-th call (a batch of one row).
struct CountingFeedFn {
  float x = 0.0f;
  float y = 0.0f;
  int calls = 0;
  auto operator()() {
    ++calls;
    x = 2.0f * static_cast<float>(calls);
    y = static_cast<float>(calls);
    return feed_dict(feed<"x">(&x, 1), feed<"y">(&y, 1));
  }
};

/// A feed_fn that feeds only x, always `value` (one row).
struct ConstXFeedFn {
  float value = 100.0f;
  auto operator()() { return feed<"x">(&value, 1); }
};

}  // namespace

// =============================================================================================
// FeedFnHook
// =============================================================================================

TEST_CASE("FeedFnHook feeds every placeholder of a run, calling feed_fn before each run",
          "[tf_hooks][feed_fn]") {
  Model m;
  m.W.value(0, 0) = 1.0f;  // loss = (x - y)^2 = (2k - k)^2 = k^2 in run k
  CountingFeedFn fn;
  MonitoredTrainingSession session(m.train_op(), hook_feeds(1), hooks(FeedFnHook(std::ref(fn))),
                                   m.accuracy());
  for (int k = 1; k <= 3; ++k) {
    const auto v = session.run<"loss", "accuracy">();
    REQUIRE(v.has_value());
    CHECK(fn.calls == k);
    CHECK(v->get<"loss">().item() == static_cast<double>(k * k));
    CHECK(v->get<"accuracy">().item() == 2.0 * k);  // mean(x) = x = 2k
  }
  CHECK(session.global_step() == 3);
}

TEST_CASE("FeedFnHook: its feed replaces the input object's feed of the same placeholder",
          "[tf_hooks][feed_fn]") {
  // TF: a feed_dict entry replaces any tensor's value, an input pipeline's included. The input
  // feeds x = k / 4 and y = k; the hook feeds x = 100; y still comes from the input.
  Model m;
  m.W.value(0, 0) = 1.0f;
  MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(FeedFnHook(ConstXFeedFn{})),
                                   m.accuracy());
  for (int k = 1; k <= 2; ++k) {
    const auto v = session.run<"loss", "accuracy">();
    CHECK(v->get<"accuracy">().item() == 100.0);
    CHECK(v->get<"loss">().item() == (100.0 - k) * (100.0 - k));
  }
}

TEST_CASE("FeedFnHook with a caller-fed session: the caller feeds y, the hook x",
          "[tf_hooks][feed_fn]") {
  Model m;
  m.W.value(0, 0) = 1.0f;
  MonitoredTrainingSession session(m.train_op(), caller_feeds(1), hooks(FeedFnHook(ConstXFeedFn{})),
                                   m.accuracy());
  float y = 98.0f;
  const auto v = session.run<"loss", "accuracy">(feed<"y">(&y, 1));
  CHECK(v->get<"accuracy">().item() == 100.0);
  CHECK(v->get<"loss">().item() == 4.0);  // (100 - 98)^2
}

TEST_CASE("A hook's with_feeds: fetches and feeds in one before_run, after_run sees the fed run",
          "[tf_hooks][feed_fn]") {
  struct FeedAndFetch {
    float x = 3.0f;
    double seen_loss = -1.0;
    auto before_run(SessionRunContext&) {
      return with_feeds(SessionRunArgs<"loss">{}, feed<"x">(&x, 1));
    }
    void after_run(SessionRunContext&, const SessionRunValues<"loss">& v) {
      seen_loss = v.get<"loss">().item();
    }
  };
  Model m;
  m.W.value(0, 0) = 2.0f;
  FeedAndFetch hook;
  MonitoredTrainingSession session(m.train_op(), caller_feeds(1), hooks(std::ref(hook)));
  float y = 1.0f;
  session.run(feed<"y">(&y, 1));
  CHECK(hook.seen_loss == 25.0);  // (2 * 3 - 1)^2
}

TEST_CASE("A hook's inactive args feed nothing (TF: before_run returning None)",
          "[tf_hooks][feed_fn]") {
  struct SometimesFeeds {
    float x = 50.0f;
    bool on = false;
    auto before_run(SessionRunContext&) {
      auto a = with_feeds(SessionRunArgs<>{}, feed<"x">(&x, 1));
      a.active = on;
      return a;
    }
  };
  Model m;
  SometimesFeeds hook;
  MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(std::ref(hook)),
                                   m.accuracy());
  CHECK(session.run<"accuracy">()->get<"accuracy">().item() == 0.25);  // the input's x = 1/4
  hook.on = true;
  CHECK(session.run<"accuracy">()->get<"accuracy">().item() == 50.0);
}

TEST_CASE(
    "A FeedFnHook in an absent ConditionalHook (a chief-only hook off the chief) feeds "
    "nothing",
    "[tf_hooks][feed_fn]") {
  Model m;
  using Cond = ConditionalHook<FeedFnHook<ConstXFeedFn>>;
  SECTION("absent: the input's x") {
    MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(Cond()), m.accuracy());
    CHECK(session.run<"accuracy">()->get<"accuracy">().item() == 0.25);
  }
  SECTION("present: the hook's x") {
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(Cond(FeedFnHook(ConstXFeedFn{}), true)), m.accuracy());
    CHECK(session.run<"accuracy">()->get<"accuracy">().item() == 100.0);
  }
}

TEST_CASE("FeedFnHook: a feed of the wrong shape throws ShapeError naming the placeholder",
          "[tf_hooks][feed_fn]") {
  SECTION("two columns for a one-column placeholder") {
    Model m;
    std::vector<float> xs{1.0f, 2.0f};
    MonitoredTrainingSession session(
        m.train_op(), CountingInput{},
        hooks(FeedFnHook([&xs] { return feed<"x">(xs.data(), 1, 2); })));
    try {
      session.run();
      FAIL("no exception");
    } catch (const ShapeError& e) {
      CHECK(std::string(e.what()).find("'x'") != std::string::npos);
    }
    CHECK(session.global_step() == 0);  // nothing ran
  }
  SECTION("rows that differ from the input's other placeholder") {
    Model m;
    std::vector<float> xs{1.0f, 2.0f};
    MonitoredTrainingSession session(m.train_op(), hook_feeds(2), hooks(FeedFnHook([&xs] {
                                       return feed_dict(feed<"x">(xs.data(), 2),
                                                        feed<"y">(xs.data(), 1));
                                     })));
    CHECK_THROWS_AS(session.run(), ShapeError);
    CHECK(session.global_step() == 0);
  }
  SECTION("a placeholder no hook feeds") {
    Model m;
    MonitoredTrainingSession session(m.train_op(), hook_feeds(1),
                                     hooks(FeedFnHook(ConstXFeedFn{})));
    try {
      session.run();
      FAIL("no exception");
    } catch (const ShapeError& e) {
      CHECK(std::string(e.what()).find("'y'") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(hook_feeds(0), std::invalid_argument);
}

// =============================================================================================
// FinalOpsHook
// =============================================================================================

TEST_CASE("FinalOpsHook keeps the named tensors' values of the last batch, at end()",
          "[tf_hooks][final_ops]") {
  Model m;
  m.W.value(0, 0) = 2.0f;
  FinalOpsHook<"loss", "global_step", "accuracy", "W"> hook;
  {
    auto op = m.train_op();
    op.global_step_increment = 2;
    MonitoredTrainingSession session(op, CountingInput{}, hooks(std::ref(hook)), m.accuracy());
    for (int k = 1; k <= 3; ++k) session.run();
    CHECK_FALSE(hook.final_ops_values().has_value());  // nothing before end()
    CHECK_FALSE(hook.value<"loss">().has_value());
  }  // the destructor closes the session: end()
  REQUIRE(hook.final_ops_values().has_value());
  // The last batch is x = 3/4, y = 3: loss = (2 * 0.75 - 3)^2 = 2.25; mean(x) = 0.75.
  CHECK(hook.value<"loss">()->item() == 2.25);
  CHECK(hook.value<"accuracy">()->item() == 0.75);
  CHECK(hook.value<"global_step">()->item_int() == 6);
  CHECK(hook.value<"global_step">()->dtype == DType::int64);
  CHECK(hook.value<"W">()->item() == 2.0);  // learning rate 0
  const auto& values = *hook.final_ops_values();
  CHECK(values[0].value().item() == 2.25);
  CHECK(values[1].value().item_int() == 6);
}

namespace {
/// One batch of three rows: x = (1, 2, 3), y = 0.
struct ThreeRowInput {
  float xs[3] = {1.0f, 2.0f, 3.0f};
  float ys[3] = {0.0f, 0.0f, 0.0f};
  bool given = false;
  bool next() { return !std::exchange(given, true); }
  Index batch_size() const { return 3; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(xs, 3);
    g.template feed<"y">(ys, 3);
  }
};
}  // namespace

TEST_CASE("FinalOpsHook copies a non-scalar tensor row by row", "[tf_hooks][final_ops]") {
  Model m;
  FinalOpsHook<"x"> hook;
  {
    MonitoredTrainingSession session(m.train_op(), ThreeRowInput{}, hooks(std::ref(hook)));
    session.run();
    session.close();
  }
  const auto x = hook.value<"x">();
  REQUIRE(x.has_value());
  CHECK(x->rows == 3);
  CHECK(x->cols == 1);
  CHECK(x->at(0, 0) == 1.0);
  CHECK(x->at(1, 0) == 2.0);
  CHECK(x->at(2, 0) == 3.0);
}

TEST_CASE("FinalOpsHook in a caller-fed session: a tensor the last run did not compute is refused",
          "[tf_hooks][final_ops]") {
  // The caller's batch lives in the loop body and is gone when the session closes: TF's
  // feed_dict lasts one run, so end() must not compute "accuracy" (not fetched in the last
  // run) from it. It throws ShapeError instead of reading freed memory (ASan run: no report).
  Model m;
  m.W.value(0, 0) = 2.0f;
  FinalOpsHook<"loss", "accuracy"> hook;
  MonitoredTrainingSession session(m.train_op(), caller_feeds(2), hooks(std::ref(hook)),
                                   m.accuracy());
  for (int k = 1; k <= 2; ++k) {
    const std::vector<float> xs{1.0f, static_cast<float>(k)}, ys{0.0f, 0.0f};
    session.run(feed<"x">(xs, 2), feed<"y">(ys, 2));
  }
  // "loss" was computed in the last run (x = (1, 2), W = 2, lr 0): ((2·1)² + (2·2)²) / 2 = 10.
  CHECK(session.fetch<"loss">().item() == 10.0);
  CHECK_THROWS_AS(session.fetch<"accuracy">(), ShapeError);
  CHECK_THROWS_AS(session.close(), ShapeError);
}

TEST_CASE("FinalOpsHook in a caller-fed session: what the last run fetched is kept",
          "[tf_hooks][final_ops]") {
  Model m;
  m.W.value(0, 0) = 2.0f;
  FinalOpsHook<"accuracy"> hook;
  {
    MonitoredTrainingSession session(m.train_op(), caller_feeds(2), hooks(std::ref(hook)),
                                     m.accuracy());
    const std::vector<float> xs{1.0f, 3.0f}, ys{0.0f, 0.0f};
    const auto v = session.run<"accuracy">(feed<"x">(xs, 2), feed<"y">(ys, 2));
    CHECK(v->get<"accuracy">().item() == 2.0);  // mean(x) = (1 + 3) / 2
  }
  REQUIRE(hook.value<"accuracy">().has_value());
  CHECK(hook.value<"accuracy">()->item() == 2.0);
}

TEST_CASE("An empty kept value: item() and at() throw instead of reading nothing",
          "[tf_hooks][final_ops]") {
  // numpy: .item() of a size-0 array raises ValueError.
  KeptTensor empty;
  empty.rows = 0;
  empty.cols = 1;
  CHECK_THROWS_WITH(empty.value().item(), "TensorValue: element (0, 0) is outside the [0, 1] tensor");
  CHECK_THROWS_AS(empty.value().item_int(), std::out_of_range);
  const float two[2] = {1.0f, 2.0f};
  const TensorValue t{two, 1, 2, 2, 1, DType::float32};
  CHECK(t.at(0, 1) == 2.0);
  CHECK_THROWS_WITH(t.at(1, 0), "TensorValue: element (1, 0) is outside the [1, 2] tensor");
  CHECK_THROWS_AS(t.at(0, -1), std::out_of_range);
}

TEST_CASE("FinalOpsHook: a session ending before any batch was fed throws from close()",
          "[tf_hooks][final_ops]") {
  Model m;
  MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(FinalOpsHook<"loss">()));
  CHECK_THROWS_AS(session.close(), ShapeError);  // TF: session.run of an unfed placeholder fails
}

// =============================================================================================
// GlobalStepWaiterHook
// =============================================================================================

namespace {
/// Another worker's global step: each fake sleep moves it by `per_sleep`.
struct FakeWorker {
  std::int64_t step = 0;
  std::int64_t per_sleep = 300;
  std::vector<double> sleeps;
};
struct WorkerStep {
  FakeWorker* w;
  std::int64_t operator()() const { return w->step; }
};
struct WorkerSleep {
  FakeWorker* w;
  void operator()(double seconds) const {
    w->sleeps.push_back(seconds);
    w->step += w->per_sleep;
  }
};
using Waiter = GlobalStepWaiterHook<WorkerStep, WorkerSleep, CapturingLogger>;
}  // namespace

TEST_CASE("ThreadSleep, the default sleep, returns at once for zero, negative and NaN seconds",
          "[tf_hooks][global_step_waiter]") {
  // The hook tests pass a fake sleep; this runs the real one (in the sanitizer build too) on the
  // values it must not convert to a timespec, and once through nanosleep for one nanosecond.
  const ThreadSleep sleep;
  sleep(0.0);
  sleep(-1.0);
  sleep(-0.0);
  sleep(std::nan(""));
  sleep(-std::numeric_limits<double>::infinity());
  sleep(1e-9);  // one nanosecond: the nanosleep path
  SUCCEED("every call returned");
}

TEST_CASE("GlobalStepWaiterHook polls every 0.5 s until the step is reached, logging as TF",
          "[tf_hooks][global_step_waiter]") {
  FakeWorker w;
  Lines lines;
  Model m;
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(Waiter({.wait_until_step = 2500}, WorkerStep{&w},
                                                WorkerSleep{&w}, CapturingLogger{&lines})));
  session.run();
  // Reads 0, 300, ..., 2400 (below 2500: 9 sleeps of 0.5 s), then 2700.
  CHECK(w.sleeps == std::vector<double>(9, 0.5));
  CHECK(w.step == 2700);
  // The first line, then one each time the step moved more than 1000 past the last logged
  // (TF's last_logged_step starts at 0): 1200 (> 1000), 2400 (> 2200).
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].text == "Waiting for global step 2500 before starting training.");
  CHECK(lines[1].text ==
        "Waiting for global step 2500 before starting training. Current step is 1200.");
  CHECK(lines[2].text ==
        "Waiting for global step 2500 before starting training. Current step is 2400.");
  for (const auto& l : lines) CHECK(l.severity == Severity::info);
  CHECK(session.global_step() == 1);  // the run went on after the wait
  // Later runs do not wait or read the step.
  session.run();
  CHECK(w.sleeps.size() == 9);
  CHECK(lines.size() == 3);
}

TEST_CASE("GlobalStepWaiterHook: wait_until_step <= 0 or a step already reached: no wait",
          "[tf_hooks][global_step_waiter]") {
  FakeWorker w;
  w.step = 40;
  Lines lines;
  Model m;
  SECTION("0") {
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(Waiter({.wait_until_step = 0}, WorkerStep{&w},
                                                  WorkerSleep{&w}, CapturingLogger{&lines})));
    session.run();
    CHECK(lines.empty());  // TF returns before logging
  }
  SECTION("reached") {
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(Waiter({.wait_until_step = 40}, WorkerStep{&w},
                                                  WorkerSleep{&w}, CapturingLogger{&lines})));
    session.run();
    CHECK(lines.size() == 1);  // TF logs the first line before the first read
  }
  CHECK(w.sleeps.empty());
}

TEST_CASE("GlobalStepWaiterHook: a new session (begin) waits again",
          "[tf_hooks][global_step_waiter]") {
  FakeWorker w;
  Lines lines;
  Waiter hook({.wait_until_step = 600}, WorkerStep{&w}, WorkerSleep{&w}, CapturingLogger{&lines});
  Model m;
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(std::ref(hook)));
    session.run();
  }
  CHECK(w.sleeps.size() == 2);  // 0, 300 -> 600
  w.step = 0;
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(std::ref(hook)));
    session.run();
  }
  CHECK(w.sleeps.size() == 4);
}

TEST_CASE("GlobalStepWaiterHook on the session's own step: no endless wait",
          "[tf_hooks][global_step_waiter]") {
  Lines lines;
  std::vector<double> sleeps;
  auto sleep = [&sleeps](double s) { sleeps.push_back(s); };
  using OwnStepWaiter = GlobalStepWaiterHook<SessionGlobalStep, decltype(sleep), CapturingLogger>;
  SECTION("below: RuntimeError naming both steps, without sleeping") {
    Model m(5);
    MonitoredTrainingSession session(
        m.train_op(), CountingInput{},
        hooks(OwnStepWaiter({.wait_until_step = 10}, {}, sleep, CapturingLogger{&lines})));
    try {
      session.run();
      FAIL("no exception");
    } catch (const RuntimeError& e) {
      CHECK(std::string(e.what()) ==
            "GlobalStepWaiterHook: waiting for global step 10, but the global step is 5 and "
            "nothing but this session moves it (give the hook a step source that another "
            "worker moves)");
    }
    CHECK(sleeps.empty());
  }
  SECTION("already there (restored): runs") {
    Model m(10);
    MonitoredTrainingSession session(
        m.train_op(), CountingInput{},
        hooks(OwnStepWaiter({.wait_until_step = 10}, {}, sleep, CapturingLogger{&lines})));
    CHECK(session.run());
    CHECK(session.global_step() == 11);
    CHECK(sleeps.empty());
  }
  CHECK_THROWS_AS(
      OwnStepWaiter({.wait_until_step = 1, .poll_secs = -1.0}, {}, sleep, CapturingLogger{&lines}),
      std::invalid_argument);
  // An infinite interval would overflow the conversion inside std::this_thread::sleep_for.
  CHECK_THROWS_WITH(
      OwnStepWaiter({.wait_until_step = 1, .poll_secs = INFINITY}, {}, sleep,
                    CapturingLogger{&lines}),
      Catch::Contains("poll_secs must be in [0, 3600] seconds (TensorFlow polls every 0.5), got "
                      "inf"));
}

// =============================================================================================
// run_step_fn and StepContext
// =============================================================================================

namespace {
/// Counts its hook events.
struct EventCounter {
  int* before;
  int* after;
  SessionRunArgs<> before_run(SessionRunContext&) {
    ++*before;
    return {};
  }
  void after_run(SessionRunContext&, const SessionRunValues<>&) { ++*after; }
};
}  // namespace

TEST_CASE("run_step_fn: run_with_hooks is a hook iteration, session().evaluate is not",
          "[tf_hooks][run_step_fn]") {
  Model m;
  m.W.value(0, 0) = 1.0f;
  int before = 0, after = 0;
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(EventCounter{&before, &after}), m.accuracy());
  const double result = session.run_step_fn([](auto& step) {
    // A training step with every hook: run 1 feeds x = 1/4, y = 1: loss = (0.25 - 1)^2.
    const auto v = step.template run_with_hooks<"loss">();
    // Read before evaluating: values are views valid until the next run or evaluation.
    const double loss = v->template get<"loss">().item();
    // An auxiliary evaluation on another batch: x = 4, y = 1 -> loss = 9, mean(x) = 4.
    float xv = 4.0f, yv = 1.0f;
    const auto e = step.session().template evaluate<"loss", "accuracy", "global_step">(
        feed<"x">(&xv, 1), feed<"y">(&yv, 1));
    CHECK(e.template get<"loss">().item() == 9.0);
    CHECK(e.template get<"accuracy">().item() == 4.0);
    CHECK(e.template get<"global_step">().item_int() == 1);  // the step after run 1
    return loss;
  });
  CHECK(result == 0.5625);
  CHECK(before == 1);  // one hook iteration: the evaluation called no hook
  CHECK(after == 1);
  CHECK(session.global_step() == 1);
  CHECK_FALSE(session.should_stop());
  // The next plain run feeds its own batch again (run 2: x = 1/2, y = 2).
  CHECK(session.run<"loss">()->get<"loss">().item() == 2.25);
}

TEST_CASE("run_step_fn: request_stop ends training once the step function returns",
          "[tf_hooks][run_step_fn]") {
  Model m;
  MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks());
  int steps = 0;
  while (!session.should_stop()) {
    session.run_step_fn([&steps](auto& step) {
      step.run_with_hooks();
      ++steps;
      if (steps == 3) step.request_stop();
      CHECK(step.stop_requested() == (steps == 3));
    });
  }
  CHECK(steps == 3);
  CHECK(session.global_step() == 3);
  CHECK_THROWS_AS(session.run(), RuntimeError);  // TF: run after should_stop
}

TEST_CASE("evaluate without feeds reads the last batch, an unfed placeholder throws",
          "[tf_hooks][run_step_fn]") {
  Model m;
  MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(), m.accuracy());
  CHECK_THROWS_AS(session.evaluate<"accuracy">(), ShapeError);  // nothing fed yet
  session.run();
  session.run();
  CHECK(session.evaluate<"accuracy">().get<"accuracy">().item() == 0.5);  // run 2's x
  CHECK(session.global_step() == 2);
  session.close();
  CHECK_THROWS_AS(session.evaluate<"accuracy">(), RuntimeError);
}
