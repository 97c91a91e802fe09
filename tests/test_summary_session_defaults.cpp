// tests/test_summary_session_defaults.cpp: the summary hooks a MonitoredTrainingSession made with
// SessionOptions installs by default, checked on real event files read back with io::read_events.
//
// The specification is TensorFlow's code (tensorflow/python/training/monitored_session.py,
// MonitoredTrainingSession, TF 1.15 / 2.x compat.v1):
//   save_summaries_steps and save_summaries_secs both USE_DEFAULT -> steps = 100, secs = None;
//       only one given -> the other None.
//   non-chief -> the user's hooks only.
//   chief: all_hooks = chief_only_hooks; summary_dir = summary_dir or checkpoint_dir; if
//       summary_dir: StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps)
//       when log_step_count_steps > 0 (default 100), then SummarySaverHook(scaffold, save_steps,
//       save_secs, output_dir=summary_dir) when either is > 0; then CheckpointSaverHook when
//       checkpoint_dir; then the user's hooks.
//   Both hooks take their writer from SummaryWriterCache.get(summary_dir): one event file.
// With the hooks' own cadences (basic_session_run_hooks.py, see test_summary_saver_hook.cpp):
// from global step 0 the SummarySaverHook writes at steps 1, 101, 201, ... and the
// StepCounterHook's first rate is at step 101 (step 1 sets its baseline), then 201, ...
//
// The model: loss = mean((x W + b - y)^2) with learning rate 0, so W = b = 0 and run k (from 1)
// has x = k / 4, y = k: loss = k^2 and "accuracy" (mean x) = k / 4 (tests/lr_model.hpp). The
// clock is a FakeClock that the input advances by a fixed tick per batch (no sleeps).
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/event_reader.hpp>
#include <hookfuse/io/summary_writer_cache.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "io_test_support.hpp"
#include "lr_model.hpp"

using namespace hookfuse;
using hookfuse_test::ScratchDir;
namespace fs = std::filesystem;
namespace hana = boost::hana;

namespace {

using Fake = ClockRef<FakeClock>;
using Options = SessionOptions<io::Saver, Fake, NullLogger>;

/// Run k (from 1) feeds x = k / 4 and y = k, and advances the clock by `tick` seconds.
struct TickingInput {
  FakeClock* clock;
  double tick;
  float x = 0.0f;
  float y = 0.0f;
  std::int64_t i = 0;
  bool next() {
    ++i;
    x = static_cast<float>(i) / 4.0f;
    y = static_cast<float>(i);
    clock->advance(tick);
    return true;
  }
  Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

/// The only events file of `dir` (fails the test when there is not exactly one).
std::vector<io::Event> events_of(const fs::path& dir) {
  const auto files = io::event_files(dir);
  REQUIRE(files.size() == 1);
  return io::read_events(files.front());
}

std::vector<std::int64_t> steps_of(const std::vector<io::Event>& events, const std::string& tag) {
  std::vector<std::int64_t> steps;
  for (const auto& e : events) {
    if (e.what != io::Event::What::summary) continue;
    for (const auto& v : e.summary.value)
      if (v.tag == tag) steps.push_back(e.step);
  }
  return steps;
}

std::vector<double> values_of(const std::vector<io::Event>& events, const std::string& tag) {
  std::vector<double> values;
  for (const auto& e : events) {
    if (e.what != io::Event::What::summary) continue;
    for (const auto& v : e.summary.value)
      if (v.tag == tag) values.push_back(v.scalar().value_or(-1.0));
  }
  return values;
}

std::vector<std::int64_t> start_steps(const std::vector<io::Event>& events) {
  std::vector<std::int64_t> steps;
  for (const auto& e : events)
    if (e.what == io::Event::What::session_log && e.session_log.status == io::SessionLog::START)
      steps.push_back(e.step);
  return steps;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

template <class Session>
void run_until_stop(Session& session) {
  while (!session.should_stop()) session.run();
}

/// A user hook whose end() reads what the default hooks left in `dir` (they end before it).
struct EndReader {
  fs::path dir;
  std::vector<std::int64_t> loss_steps{};
  bool final_checkpoint = false;
  template <class Session>
  void end(Session& session) {
    loss_steps = steps_of(events_of(dir), "loss");
    final_checkpoint =
        fs::exists(dir / ("model.ckpt-" + std::to_string(session.global_step()) + ".index"));
  }
};

/// A chief-only hook that does nothing but exist.
struct ChiefHook {
  void begin() {}
};

}  // namespace

TEST_CASE("summary::merge_all_t: every summary of the loss and the extras, inner first, once",
          "[summary][session_summaries]") {
  hookfuse_test::LrModel m;
  auto pred = summary::histogram<"pred">(matmul(m.x, m.W) + m.b);  // unnamed: named "pred"
  auto loss = summary::scalar<"loss">(named<"loss">(mean_squared_error(m.y, pred)));
  auto acc = summary::scalar<"accuracy">(m.accuracy());
  using All = summary::merge_all_t<decltype(loss), decltype(acc), decltype(loss)>;
  static_assert(std::is_same_v<
                All, summary::Merged<summary::Spec<summary::Kind::histogram, "pred", "pred">,
                                     summary::Spec<summary::Kind::scalar, "loss", "loss">,
                                     summary::Spec<summary::Kind::scalar, "accuracy", "accuracy">>>);
  static_assert(std::is_same_v<summary::merge_all_t<decltype(m.loss())>, summary::Merged<>>);
  CHECK(true);
}

TEST_CASE("Session summaries: defaults write loss and accuracy at 1, 101, 201 and global_step/sec "
          "at 101, 201 into one event file of checkpoint_dir",
          "[summary][session_summaries]") {
  ScratchDir dir;
  FakeClock clock;
  hookfuse_test::LrModel m;
  {
    MonitoredTrainingSession session(
        m.train_op(), TickingInput{&clock, 0.25},
        Options{.checkpoint_dir = dir.path().string(), .clock = {&clock}},
        hooks(StopAtStepHook({.last_step = 250})), summary::scalar<"loss">(m.loss()),
        summary::scalar<"accuracy">(m.accuracy()));
    // Slots 0 and 1: the StepCounterHook and the SummarySaverHook, both present.
    CHECK(session.hook<0>().has_value());
    CHECK(session.hook<1>().has_value());
    CHECK(session.hook<2>().has_value());  // the CheckpointSaverHook
    run_until_stop(session);
    CHECK(session.global_step() == 250);
  }
  const auto events = events_of(dir.path());  // exactly one event file
  REQUIRE(events.size() >= 2);
  CHECK(events[0].what == io::Event::What::file_version);
  CHECK(start_steps(events) == std::vector<std::int64_t>{1});
  const std::vector<std::int64_t> every_100{1, 101, 201};
  CHECK(steps_of(events, "loss") == every_100);
  CHECK(steps_of(events, "accuracy") == every_100);
  // Run k's values: loss k^2, accuracy k / 4.
  CHECK(values_of(events, "loss") == std::vector<double>{1.0, 101.0 * 101.0, 201.0 * 201.0});
  CHECK(values_of(events, "accuracy") == std::vector<double>{0.25, 25.25, 50.25});
  // The rate: 100 steps between triggers, 100 batches of 0.25 s: 4 steps per second.
  CHECK(steps_of(events, "global_step/sec") == std::vector<std::int64_t>{101, 201});
  CHECK(values_of(events, "global_step/sec") == std::vector<double>{4.0, 4.0});
  io::SummaryWriterCache::clear();
}

TEST_CASE("Session summaries: save_summaries_steps, save_summaries_secs, log_step_count_steps",
          "[summary][session_summaries]") {
  SECTION("save_summaries_steps = 50, log_step_count_steps = 40") {
    ScratchDir dir;
    FakeClock clock;
    hookfuse_test::LrModel m;
    {
      MonitoredTrainingSession session(
          m.train_op(), TickingInput{&clock, 1.0},
          Options{.checkpoint_dir = dir.path().string(),
                  .save_summaries_steps = 50,
                  .log_step_count_steps = 40,
                  .clock = {&clock}},
          hooks(StopAtStepHook({.last_step = 130})), summary::scalar<"loss">(m.loss()));
      run_until_stop(session);
    }
    const auto events = events_of(dir.path());
    CHECK(steps_of(events, "loss") == std::vector<std::int64_t>{1, 51, 101});
    CHECK(steps_of(events, "global_step/sec") == std::vector<std::int64_t>{41, 81, 121});
    CHECK(values_of(events, "global_step/sec") == std::vector<double>{1.0, 1.0, 1.0});
  }
  SECTION("save_summaries_secs = 10 (steps not given: none)") {
    ScratchDir dir;
    FakeClock clock;
    hookfuse_test::LrModel m;
    {
      MonitoredTrainingSession session(
          m.train_op(), TickingInput{&clock, 1.0},
          Options{.checkpoint_dir = dir.path().string(),
                  .save_summaries_secs = 10.0,
                  .log_step_count_steps = 0,  // no StepCounterHook
                  .clock = {&clock}},
          hooks(StopAtStepHook({.last_step = 40})), summary::scalar<"loss">(m.loss()));
      CHECK(!session.hook<0>().has_value());
      CHECK(session.hook<1>().has_value());
      run_until_stop(session);
    }
    // The clock is read in before_run (before run k's batch: k - 1 s) and when the hook fires
    // (after the batch: k s). Run 1 writes (first run) and records t = 1; run k fires when
    // k - 1 >= 1 + 10, k = 12 (t = 12), then k - 1 >= 22, k = 23, then 34.
    const auto events = events_of(dir.path());
    CHECK(steps_of(events, "loss") == std::vector<std::int64_t>{1, 12, 23, 34});
    CHECK(steps_of(events, "global_step/sec").empty());
  }
  SECTION("summary_dir alone: summaries there, no checkpoints") {
    ScratchDir dir;
    FakeClock clock;
    hookfuse_test::LrModel m;
    {
      MonitoredTrainingSession session(
          m.train_op(), TickingInput{&clock, 1.0},
          Options{.summary_dir = dir.path().string(), .clock = {&clock}},
          hooks(StopAtStepHook({.last_step = 120})), summary::scalar<"loss">(m.loss()));
      CHECK(!session.hook<2>().has_value());  // no checkpoint_dir: no CheckpointSaverHook
      run_until_stop(session);
    }
    CHECK(names_in(dir.path()).size() == 1);  // the event file only
    const auto events = events_of(dir.path());
    CHECK(steps_of(events, "loss") == std::vector<std::int64_t>{1, 101});
    CHECK(steps_of(events, "global_step/sec") == std::vector<std::int64_t>{101});
  }
  SECTION("summary_dir wins over checkpoint_dir for the event file") {
    ScratchDir ckpt;
    ScratchDir sums;
    FakeClock clock;
    hookfuse_test::LrModel m;
    {
      MonitoredTrainingSession session(
          m.train_op(), TickingInput{&clock, 1.0},
          Options{.checkpoint_dir = ckpt.path().string(),
                  .summary_dir = sums.path().string(),
                  .clock = {&clock}},
          hooks(StopAtStepHook({.last_step = 5})), summary::scalar<"loss">(m.loss()));
      run_until_stop(session);
    }
    CHECK(io::event_files(ckpt.path()).empty());
    CHECK(steps_of(events_of(sums.path()), "loss") == std::vector<std::int64_t>{1});
  }
  SECTION("save_summaries_steps = 0 and log_step_count_steps = 0: no hooks, no event file") {
    ScratchDir dir;
    FakeClock clock;
    hookfuse_test::LrModel m;
    {
      MonitoredTrainingSession session(
          m.train_op(), TickingInput{&clock, 1.0},
          Options{.checkpoint_dir = dir.path().string(),
                  .save_summaries_steps = 0,
                  .log_step_count_steps = 0,
                  .clock = {&clock}},
          hooks(StopAtStepHook({.last_step = 5})), summary::scalar<"loss">(m.loss()));
      CHECK(!session.hook<0>().has_value());
      CHECK(!session.hook<1>().has_value());
      run_until_stop(session);
    }
    CHECK(io::event_files(dir.path()).empty());
  }
  SECTION("both save_summaries_steps and save_summaries_secs: std::invalid_argument, no file") {
    ScratchDir dir;
    FakeClock clock;
    hookfuse_test::LrModel m;
    CHECK_THROWS_AS(MonitoredTrainingSession(m.train_op(), TickingInput{&clock, 1.0},
                                             Options{.checkpoint_dir = dir.path().string(),
                                                     .save_summaries_steps = 10,
                                                     .save_summaries_secs = 10.0,
                                                     .clock = {&clock}},
                                             hooks(), summary::scalar<"loss">(m.loss())),
                    std::invalid_argument);
    CHECK(names_in(dir.path()).empty());
  }
  io::SummaryWriterCache::clear();
}

TEST_CASE("Session summaries: TF's hook order, and the final writes land before the user's end()",
          "[summary][session_summaries]") {
  ScratchDir dir;
  FakeClock clock;
  hookfuse_test::LrModel m;
  EndReader reader{dir.path()};
  {
    MonitoredTrainingSession session(
        m.train_op(), TickingInput{&clock, 1.0},
        Options{.checkpoint_dir = dir.path().string(), .clock = {&clock}},
        hooks(StopAtStepHook({.last_step = 150}), std::ref(reader)),
        chief_only_hooks(ChiefHook{}), summary::scalar<"loss">(m.loss()));
    using Loss = summary::Spec<summary::Kind::scalar, "loss", "loss">;
    static_assert(std::is_same_v<
                  std::remove_cvref_t<decltype(session.hooks())>,
                  hana::tuple<ConditionalHook<ChiefHook>,
                              ConditionalHook<StepCounterHook<Fake, NullLogger>>,
                              ConditionalHook<SummarySaverHook<summary::Merged<Loss>, Fake>>,
                              ConditionalHook<CheckpointSaverHook<io::Saver, hana::tuple<>, Fake,
                                                                  NullLogger>>,
                              StopAtStepHook, std::reference_wrapper<EndReader>>>);
    run_until_stop(session);
  }
  // When the user's end() ran, the SummarySaverHook had flushed every summary and the
  // CheckpointSaverHook had saved the last step.
  CHECK(reader.loss_steps == std::vector<std::int64_t>{1, 101});
  CHECK(reader.final_checkpoint);
  io::SummaryWriterCache::clear();
}

TEST_CASE("Session summaries: no directory, or a non-chief, installs none and writes no file",
          "[summary][session_summaries]") {
  ScratchDir dir;
  FakeClock clock;
  hookfuse_test::LrModel m;
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());  // a file written relative to the working directory shows here
  {
    MonitoredTrainingSession session(m.train_op(), TickingInput{&clock, 1.0},
                                     Options{.clock = {&clock}},
                                     hooks(StopAtStepHook({.last_step = 150})),
                                     summary::scalar<"loss">(m.loss()));
    CHECK(!session.hook<0>().has_value());
    CHECK(!session.hook<1>().has_value());
    run_until_stop(session);
  }
  fs::current_path(cwd);
  CHECK(names_in(dir.path()).empty());

  const fs::path d = dir.path() / "D";
  {
    MonitoredTrainingSession session(
        m.train_op(), TickingInput{&clock, 1.0},
        Options{.is_chief = false, .checkpoint_dir = d.string(), .clock = {&clock}},
        hooks(StopAtStepHook({.num_steps = 150})), summary::scalar<"loss">(m.loss()));
    CHECK(!session.hook<0>().has_value());
    CHECK(!session.hook<1>().has_value());
    run_until_stop(session);
  }
  CHECK(names_in(d).empty());
  CHECK(names_in(dir.path()).empty());
}
