// tests/test_evaluation_session.cpp: MonitoredSession, the evaluation session
// (session/evaluation_session.hpp), against TensorFlow 1.x's tf.compat.v1.train.MonitoredSession
// as its evaluation loop uses it (evaluate_once: hooks, no train op, no global-step increment):
// the order of hook events, the end of the input (before_run without after_run), stop requests,
// no run after a stop, fetches by hooks and by the caller, caller feeds, and that evaluation
// changes neither the variables nor the global step. Which events each session kind emits is
// checked at compile time below; a hook declaring an event its session never emits is the
// compile-fail test tests/compile_fail/gradient_hook_in_evaluation_session.cpp. A run after the
// first allocates nothing (tests/alloc_counter.hpp, which this executable alone links). Both
// session kinds flush denormals to zero while they compute, as TensorFlow's CPU ops do, and
// restore the caller's floating-point mode (the last case).
//
// The model is y = W x + b with W = 0.5, b = 0.25; batch i (from 1) feeds x = i, y = 2 i, so its
// loss is (0.5 i + 0.25 - 2 i)^2 = (0.25 - 1.5 i)^2: 1.5625, 7.5625, 18.0625 for i = 1, 2, 3.
// clang-format off: alloc_counter.hpp must precede every Eigen header.
#define HOOKFUSE_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"
// clang-format on

#include <catch2/catch.hpp>
#include <cstddef>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <hookfuse/hookfuse.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "lr_model.hpp"

using namespace hookfuse;

namespace {

using Events = std::vector<std::string>;
using Model = hookfuse_test::LrModel;

/// Batch i (from 1) feeds x = i, y = 2 i; three batches unless told otherwise.
struct CountingInput : hookfuse_test::CountingInput {
  CountingInput() { limit = 3; }
  explicit CountingInput(std::int64_t n) { limit = n; }
};

/// Records every event as "<event>" plus what the run context says, and fetches "loss" and
/// "global_step" every run; requests a stop in after_run of run `stop_at` (from 1).
struct RecordingHook {
  Events* events;
  int stop_at = -1;
  int runs = 0;
  std::vector<double> losses;

  void begin() { events->push_back("begin"); }
  template <class Session>
  void after_create_session(Session& session) {
    events->push_back("after_create_session@" + std::to_string(session.global_step()));
  }
  SessionRunArgs<"loss", "global_step"> before_run(SessionRunContext& ctx) {
    ++runs;
    events->push_back("before_run@" + std::to_string(ctx.global_step()) + "+" +
                      std::to_string(ctx.global_step_increment()));
    return {};
  }
  void after_run(SessionRunContext& ctx, const SessionRunValues<"loss", "global_step">& v) {
    events->push_back("after_run@" + std::to_string(v.get<"global_step">().item_int()));
    losses.push_back(v.get<"loss">().item());
    if (runs == stop_at) ctx.request_stop();
  }
  template <class Session>
  void end(Session& session) {
    events->push_back("end@" + std::to_string(session.global_step()));
  }
};

/// Sums the loss over the runs it sees; allocates nothing.
struct LossSum {
  double sum = 0.0;
  SessionRunArgs<"loss"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"loss">& v) {
    sum += v.get<"loss">().item();
  }
};

void set_weights(Model& m) {
  m.W.value(0, 0) = 0.5f;
  m.b.value(0, 0) = 0.25f;
}

}  // namespace

// Which events each session kind emits (SessionEvents, hooks/concepts.hpp).
using EvalSession = decltype(MonitoredSession(std::declval<const GlobalStep&>(), CountingInput{},
                                              hooks(), std::declval<Model&>().loss()));
static_assert(!EvalSession::emitted_events::contains(SessionEvent::before_apply_gradients));
static_assert(EvalSession::emitted_events::contains(SessionEvent::begin) &&
              EvalSession::emitted_events::contains(SessionEvent::after_create_session) &&
              EvalSession::emitted_events::contains(SessionEvent::before_run) &&
              EvalSession::emitted_events::contains(SessionEvent::after_run) &&
              EvalSession::emitted_events::contains(SessionEvent::end));
using TrainSession = decltype(MonitoredTrainingSession(std::declval<Model&>().train_op(),
                                                       CountingInput{}, hooks()));
static_assert(TrainSession::emitted_events::contains(SessionEvent::before_apply_gradients));

TEST_CASE("MonitoredSession: TensorFlow's hook events, without training", "[evaluation]") {
  Model m(7);
  set_weights(m);
  Events events;
  RecordingHook hook{&events, -1, 0, {}};
  {
    MonitoredSession session(m.gs, CountingInput{}, hooks(std::ref(hook)), m.loss());
    CHECK(events == Events{"begin", "after_create_session@7"});
    events.clear();

    CHECK(session.run());
    CHECK(session.run());
    CHECK(session.run());
    // The global step is read, never incremented (TF's evaluation loop has no train op).
    CHECK(events == Events{"before_run@7+0", "after_run@7", "before_run@7+0", "after_run@7",
                           "before_run@7+0", "after_run@7"});
    events.clear();

    // The end of the input: before_run, no after_run, should_stop (TF's OutOfRangeError).
    CHECK_FALSE(session.run());
    CHECK(events == Events{"before_run@7+0"});
    CHECK(session.should_stop());
    CHECK_THROWS_AS(session.run(), RuntimeError);
    events.clear();
  }
  CHECK(events == Events{"end@7"});
  REQUIRE(hook.losses.size() == 3);
  CHECK(hook.losses[0] == Approx(1.5625));
  CHECK(hook.losses[1] == Approx(7.5625));
  CHECK(hook.losses[2] == Approx(18.0625));
  // Nothing was trained.
  CHECK(m.W.value(0, 0) == 0.5f);
  CHECK(m.b.value(0, 0) == 0.25f);
  CHECK(m.gs.value == 7);
}

TEST_CASE("MonitoredSession: a hook's stop request ends the evaluation after that run",
          "[evaluation]") {
  Model m;
  set_weights(m);
  Events events;
  RecordingHook hook{&events, 2, 0, {}};
  MonitoredSession session(m.gs, CountingInput(100), hooks(std::ref(hook)), m.loss());
  int runs = 0;
  while (!session.should_stop()) {
    session.run();
    ++runs;
  }
  CHECK(runs == 2);
  CHECK_THROWS_WITH(session.run(), "Run called even after should_stop requested.");
  session.close();
  CHECK(events.back() == "end@0");
  session.close();  // end() once
  CHECK(events.back() == "end@0");
  CHECK(hook.losses.size() == 2);
}

TEST_CASE("MonitoredSession: the caller's fetches and feeds", "[evaluation]") {
  Model m;
  set_weights(m);
  SECTION("run<names>() from the input; extras computed only when fetched") {
    MonitoredSession session(m.gs, CountingInput(2), hooks(), m.loss(), m.accuracy());
    auto v1 = session.run<"loss", "accuracy">();
    REQUIRE(v1.has_value());
    CHECK(v1->get<"loss">().item() == Approx(1.5625));
    CHECK(v1->get<"accuracy">().item() == Approx(1.0));  // mean(x) for x = 1
    auto v2 = session.run<"accuracy">();
    REQUIRE(v2.has_value());
    CHECK(v2->get<"accuracy">().item() == Approx(2.0));
    CHECK_FALSE(session.run<"loss">().has_value());  // the input ran out
    CHECK(session.should_stop());
  }
  SECTION("caller_feeds: a batch of two rows") {
    MonitoredSession session(m.gs, caller_feeds(4), hooks(), m.loss());
    const float xs[] = {1.0f, 3.0f};
    const float ys[] = {2.0f, 6.0f};
    auto v = session.run<"loss">(feed<"x">(xs, 2), feed<"y">(ys, 2));
    REQUIRE(v.has_value());
    // mean((0.5 * 1 + 0.25 - 2)^2, (0.5 * 3 + 0.25 - 6)^2) = (1.5625 + 18.0625) / 2
    CHECK(v->get<"loss">().item() == Approx(9.8125));
    CHECK(session.run(feed<"x">(xs, 1), feed<"y">(ys, 1)));
    // A placeholder the fetch reads and nobody fed: ShapeError before computing anything.
    CHECK_THROWS_AS(session.run<"loss">(feed<"x">(xs, 1)), ShapeError);
  }
}

TEST_CASE("MonitoredSession: after the first run, run() allocates nothing", "[evaluation][alloc]") {
  Model m;
  set_weights(m);
  LossSum sum;
  MonitoredSession session(m.gs, CountingInput(21), hooks(std::ref(sum)), m.loss(), m.accuracy());
  session.run();  // warm-up
  const auto allocations = hookfuse_test::allocations_of([&] {
    for (int i = 0; i < 20; ++i) session.run();
  });
  CHECK(allocations.news == 0);
  CHECK(allocations.eigen_mallocs == 0);
  // sum over i = 1..21 of (0.25 - 1.5 i)^2 = 21 * 0.0625 - 0.75 * 231 + 2.25 * 3311
  CHECK(sum.sum == Approx(21 * 0.0625 - 0.75 * 231 + 2.25 * 3311));
  CHECK_FALSE(session.should_stop());
}

namespace {
/// A saver for SessionOptions in builds without hookfuse/io; never called (no checkpoint_dir).
struct NoSaver {
  std::string save(VariableList, std::string_view, std::int64_t) { return {}; }
  std::optional<std::string> restore_latest(VariableList, std::string_view) { return {}; }
};
}  // namespace

TEST_CASE("Both sessions flush denormals to zero while they compute (TensorFlow's CPU ops), "
          "and restore the caller's mode",
          "[evaluation][session][denormal]") {
  static_assert(detail::ScopedFlushDenormal::supported,
                "every target hookfuse tests on (x86-64, AArch64, Armv7E-M with FPU) can flush");
  // TensorFlow's denormal_test: 0.1 * np.finfo(dtype).tiny evaluates to exactly 0 on a CPU,
  // for float32 and float64, and numpy code run after it still sees denormals (tiny / 16 * 16
  // == tiny). IEEE 754 without flushing gives a denormal, about 1.2e-39 for float.
  const float tiny = std::numeric_limits<float>::min();
  volatile float host_tiny = tiny;  // volatile: computed at run time, in the caller's mode
  const float ieee = host_tiny * 0.1f;
  REQUIRE(ieee > 0.0f);
  REQUIRE(ieee < tiny);
  const float xs[] = {tiny};
  const float ys[] = {0.0f};
  Model m;
  auto flush = named<"flush">(scale(m.x, 0.1f));
  {
    MonitoredTrainingSession session(m.train_op(), caller_feeds(1), hooks(), flush);
    const auto v = session.run<"flush">(feed<"x">(xs, 1), feed<"y">(ys, 1));
    REQUIRE(v.has_value());
    CHECK(v->get<"flush">().item() == 0.0);
    CHECK(session.fetch<"flush">().item() == 0.0);
  }
  CHECK(host_tiny / 16.0f * 16.0f == tiny);  // the caller's mode: denormals kept
  {
    MonitoredTrainingSession session(m.train_op(), caller_feeds(1),
                                     SessionOptions<NoSaver>{.flush_denormals = false}, hooks(),
                                     flush);
    const auto v = session.run<"flush">(feed<"x">(xs, 1), feed<"y">(ys, 1));
    REQUIRE(v.has_value());
    CHECK(v->get<"flush">().item() == static_cast<double>(ieee));  // IEEE 754's denormal
  }
  {
    MonitoredSession session(m.gs, caller_feeds(1), hooks(), flush);
    const auto v = session.run<"flush">(feed<"x">(xs, 1));
    REQUIRE(v.has_value());
    CHECK(v->get<"flush">().item() == 0.0);
  }
  CHECK(host_tiny / 16.0f * 16.0f == tiny);
  {  // A caller that flushes already keeps flushing after a run (nothing is written or restored).
    const detail::ScopedFlushDenormal caller_mode(true);
    volatile float again = host_tiny * 0.1f;
    REQUIRE(again == 0.0f);
    MonitoredSession session(m.gs, caller_feeds(1), hooks(), flush);
    CHECK(session.run<"flush">(feed<"x">(xs, 1))->get<"flush">().item() == 0.0);
    again = host_tiny * 0.1f;
    CHECK(again == 0.0f);
  }
  CHECK(host_tiny * 0.1f == ieee);  // and the test's own scope restored IEEE 754
  {  // fetch() outside a run flushes too: W = tiny, 0.1 W computed by fetch() alone.
    m.W.value(0, 0) = tiny;
    auto wflush = named<"wflush">(scale(m.W, 0.1f));
    MonitoredSession eval(m.gs, caller_feeds(1), hooks(), wflush);
    CHECK(eval.fetch<"wflush">().item() == 0.0);
    MonitoredTrainingSession train(m.train_op(), caller_feeds(1), hooks(), wflush);
    CHECK(train.fetch<"wflush">().item() == 0.0);
    m.W.value(0, 0) = 0.0f;
  }
  {  // Only the flush bits are restored: an overflow raised inside the run stays visible.
    const float big[] = {3e38f};
    MonitoredTrainingSession session(m.train_op(), caller_feeds(1), hooks(), flush);
    std::feclearexcept(FE_ALL_EXCEPT);
    const auto v = session.run<"loss">(feed<"x">(xs, 1), feed<"y">(big, 1));  // (0 - 3e38)^2
    REQUIRE(v.has_value());
    CHECK(std::isinf(v->get<"loss">().item()));
    CHECK(std::fetestexcept(FE_OVERFLOW) != 0);
  }
  // float64 too.
  Placeholder<"d", double, 1> d;
  auto flush64 = named<"flush64">(scale(d, 0.1));
  const double dtiny[] = {std::numeric_limits<double>::min()};
  MonitoredSession session(m.gs, caller_feeds(1), hooks(), flush64);
  const auto v = session.run<"flush64">(feed<"d">(dtiny, 1));
  REQUIRE(v.has_value());
  CHECK(v->get<"flush64">().item() == 0.0);
  volatile double host_dtiny = dtiny[0];
  CHECK(host_dtiny * 0.1 > 0.0);
}
