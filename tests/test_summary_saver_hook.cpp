// tests/test_summary_saver_hook.cpp: summaries in the model (summary::scalar, summary::histogram),
// SummarySaverHook and StepCounterHook's "global_step/sec", run in a real
// MonitoredTrainingSession and read back from the event file with io::read_events.
//
// The specification is TensorFlow's code (tensorflow/python/training/basic_session_run_hooks.py,
// TF 1.15 / 2.x compat.v1):
//   SummarySaverHook.before_run: _request_summary = next_step is None or
//       timer.should_trigger_for_step(next_step); fetch the summary op only then.
//   SummarySaverHook.after_run: global_step = session.run(global_step_tensor), read after the
//       train op, i.e. the run's stale global step + 1 (optimizer.minimize increments it); on the
//       first run add_session_log(START, global_step); when requested,
//       timer.update_last_triggered_step(global_step) and add_summary(summary, global_step);
//       next_step = global_step + 1.
// So from global step 0 with save_steps = 8: run 1 ends on step 1 and writes (first run, timer
// at 1); run k asks should_trigger_for_step(k), true when k >= last + 8: runs 9, 17, 25 write, at
// steps 9, 17, 25 (the 1, 9, 17, 25). The values written at step k come from run k's
// forward pass, the same run whose run<"loss">() returns them.
//   StepCounterHook writes Summary(tag = global_step.op.name + "/sec" = "global_step/sec",
//       simple_value = elapsed_steps / elapsed_time) at the global step read after the run.
//
// The model: loss = mean((x W + b - y)^2) with learning rate 0, so W = b = 0 and run k (from 1)
// has x = k / 4, y = k, loss = k^2 (tests/lr_model.hpp, CountingInput below). No sleeps: the
// second-based cadences use a FakeClock.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/hooks/summary_saver_hook.hpp>
#include <hookfuse/io/event_reader.hpp>
#include <hookfuse/io/summary_writer.hpp>
#include <hookfuse/io/summary_writer_cache.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "io_test_support.hpp"
#include "lr_model.hpp"

using namespace hookfuse;
using hookfuse_test::ScratchDir;

namespace {

using Fake = ClockRef<FakeClock>;

/// Run k (from 1) feeds x = k / 4 and y = k.
using CountingInput = hookfuse_test::QuarterInput;

/// The only events file of `dir` (fails the test when there is not exactly one).
std::vector<io::Event> events_of(const std::filesystem::path& dir) {
  const auto files = io::event_files(dir);
  REQUIRE(files.size() == 1);
  return io::read_events(files.front());
}

std::vector<std::int64_t> summary_steps(const std::vector<io::Event>& events,
                                        const std::string& tag) {
  std::vector<std::int64_t> steps;
  for (const auto& e : events) {
    if (e.what != io::Event::What::summary) continue;
    for (const auto& v : e.summary.value)
      if (v.tag == tag) steps.push_back(e.step);
  }
  return steps;
}

const io::SummaryValue* find_value(const io::Event& e, const std::string& tag) {
  for (const auto& v : e.summary.value)
    if (v.tag == tag) return &v;
  return nullptr;
}

}  // namespace

TEST_CASE("summary declarations are the tensors they summarize, listed at compile time",
          "[summary]") {
  hookfuse_test::LrModel m;
  auto loss = m.loss();
  auto s_loss = summary::scalar<"train_loss">(loss);          // a named tensor: fetched as "loss"
  auto s_mean = summary::scalar<"x_mean">(reduce_mean(m.x));  // unnamed: becomes "x_mean"
  auto s_w = summary::histogram<"weights">(m.W);              // a Variable: fetched as "W"
  using S = decltype(summary::merge(s_loss, s_mean, s_w));
  static_assert(
      std::is_same_v<S, summary::Merged<summary::Spec<summary::Kind::scalar, "train_loss", "loss">,
                                        summary::Spec<summary::Kind::scalar, "x_mean", "x_mean">,
                                        summary::Spec<summary::Kind::histogram, "weights", "W">>>);
  // Passed to a graph, a declaration puts its tensor there under the fetched name; one on the
  // loss itself adds nothing.
  auto g = bind(1, s_loss, s_mean, s_w);
  using G = decltype(g);
  static_assert(G::has<"loss"> && G::has<"x_mean"> && G::has<"W">);
  static_assert(!G::has<"train_loss"> && !G::has<"weights">);
  static_assert(G::size == decltype(bind(1, loss, named<"x_mean">(reduce_mean(m.x))))::size);
  float x = 8.0f, y = 1.0f;
  g.feed<"x">(&x, 1);
  g.feed<"y">(&y, 1);
  CHECK(g.compute<"x_mean">()(0, 0) == 8.0f);
}

TEST_CASE("SummarySaverHook(save_steps = 8): START and summaries at steps 1, 9, 17, 25",
          "[summary][summary_saver]") {
  ScratchDir dir;
  hookfuse_test::LrModel m;
  auto loss = m.loss();
  auto x_mean = summary::scalar<"x_mean">(reduce_mean(m.x));
  auto summaries =
      summary::merge(summary::scalar<"loss">(loss), summary::histogram<"x">(m.x), x_mean);
  std::vector<double> fetched_loss;  // what the session computed, run by run
  {
    MonitoredTrainingSession session(
        m.train_op(), CountingInput{},
        hooks(SummarySaverHook({.save_steps = 8, .output_dir = dir.path()}, summaries)), x_mean);
    for (int run = 1; run <= 30; ++run)
      fetched_loss.push_back(session.run<"loss">()->get<"loss">().item());
    session.close();  // end(): flushes
  }
  const auto events = events_of(dir.path());
  REQUIRE(events.size() >= 2);
  CHECK(events[0].what == io::Event::What::file_version);
  // START first, at the step the first run ends on (TF: add_session_log before add_summary).
  CHECK(events[1].what == io::Event::What::session_log);
  CHECK(events[1].session_log.status == io::SessionLog::START);
  CHECK(events[1].step == 1);
  int starts = 0;
  for (const auto& e : events) starts += e.what == io::Event::What::session_log ? 1 : 0;
  CHECK(starts == 1);

  // Runs 1..30 from step 0: written at 1, 9, 17, 25 (see the file comment); one event each,
  // holding the three summaries in list order.
  const std::vector<std::int64_t> expected{1, 9, 17, 25};
  CHECK(summary_steps(events, "loss") == expected);
  CHECK(summary_steps(events, "x") == expected);
  CHECK(summary_steps(events, "x_mean") == expected);
  std::size_t checked = 0;
  for (const auto& e : events) {
    if (e.what != io::Event::What::summary) continue;
    REQUIRE(e.summary.value.size() == 3);
    CHECK(e.summary.value[0].tag == "loss");
    CHECK(e.summary.value[1].tag == "x");
    CHECK(e.summary.value[2].tag == "x_mean");
    const auto k = static_cast<double>(e.step);  // written at step k: run k's values
    // The loss the session returned for run k, and by hand y^2 = k^2 (W = b = 0).
    CHECK(e.summary.value[0].scalar() ==
          std::optional<double>(fetched_loss[static_cast<std::size_t>(e.step - 1)]));
    CHECK(e.summary.value[0].scalar() == std::optional<double>(k * k));
    CHECK(e.summary.value[0].kind == io::SummaryValue::Kind::tensor);  // the writer's default
    // Histogram of the batch's x (one value, k / 4).
    const auto& h = e.summary.value[1];
    CHECK(h.kind == io::SummaryValue::Kind::histo);
    CHECK(h.histo.num == 1.0);
    CHECK(h.histo.min == k / 4.0);
    CHECK(h.histo.max == k / 4.0);
    CHECK(h.histo.sum == k / 4.0);
    CHECK(e.summary.value[2].scalar() == std::optional<double>(k / 4.0));
    ++checked;
  }
  CHECK(checked == 4);
  io::SummaryWriterCache::clear();
}

TEST_CASE("SummarySaverHook(save_steps = 8), a train op adding 2 per run: steps 2, 10, 18, 26, 34",
          "[summary][summary_saver][step_increment]") {
  // TF's cadence with the step a run ends on = the step before it + 2: the first run writes (at
  // 2), then a run writes when the step it ends on is >= last + 8: 10, 18, 26, 34 (every 4th
  // run: 1, 5, 9, 13, 17), each with the values of that run (loss = run^2).
  ScratchDir dir;
  hookfuse_test::LrModel m;
  auto summaries = summary::merge(summary::scalar<"loss">(m.loss()));
  {
    auto op = m.train_op();
    op.global_step_increment = 2;
    MonitoredTrainingSession session(
        op, CountingInput{},
        hooks(SummarySaverHook({.save_steps = 8, .output_dir = dir.path()}, summaries)));
    for (int run = 1; run <= 20; ++run) session.run();
    CHECK(session.global_step() == 40);
    session.close();
  }
  const auto events = events_of(dir.path());
  REQUIRE(events.size() >= 2);
  CHECK(events[1].what == io::Event::What::session_log);
  CHECK(events[1].step == 2);
  CHECK(summary_steps(events, "loss") == std::vector<std::int64_t>{2, 10, 18, 26, 34});
  for (const auto& e : events) {
    if (e.what != io::Event::What::summary) continue;
    const double run = static_cast<double>(e.step) / 2.0;
    CHECK(e.summary.value[0].scalar() == std::optional<double>(run * run));
  }
  io::SummaryWriterCache::clear();
}

TEST_CASE("SummarySaverHook after a restore: START and summaries continue from the global step",
          "[summary][summary_saver]") {
  ScratchDir dir;
  hookfuse_test::LrModel m(100);  // as restored from a checkpoint of step 100
  auto summaries = summary::merge(summary::scalar<"loss">(m.loss()));
  {
    MonitoredTrainingSession session(
        m.train_op(), CountingInput{},
        hooks(SummarySaverHook({.save_steps = 8, .output_dir = dir.path()}, summaries)));
    for (int run = 1; run <= 20; ++run) session.run();
  }
  const auto events = events_of(dir.path());
  REQUIRE(events.size() >= 2);
  // The first run ends on step 101: START there, then summaries every 8 from it.
  CHECK(events[1].what == io::Event::What::session_log);
  CHECK(events[1].session_log.status == io::SessionLog::START);
  CHECK(events[1].step == 101);
  CHECK(summary_steps(events, "loss") == std::vector<std::int64_t>{101, 109, 117});
  // Run 1 of this session (y = 1) was written at step 101.
  REQUIRE(find_value(events[2], "loss") != nullptr);
  CHECK(find_value(events[2], "loss")->scalar() == std::optional<double>(1.0));
  io::SummaryWriterCache::clear();
}

TEST_CASE("SummarySaverHook(save_secs = 10) with a fake clock", "[summary][summary_saver]") {
  ScratchDir dir;
  FakeClock clock;
  auto writer = io::create_file_writer(dir.path());
  hookfuse_test::LrModel m;
  auto summaries = summary::merge(summary::scalar<"loss">(m.loss()));
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(SummarySaverHook({.save_secs = 10.0, .summary_writer = writer}, summaries,
                             Fake{&clock})));
  for (int run = 1; run <= 17; ++run) {
    session.run();
    clock.advance(3.0);
  }
  session.close();
  // Run k starts at t = 3 (k - 1). Run 1 writes (first run) and sets the timer at t = 0; a run
  // writes when t >= last + 10: run 5 (t = 12), then 9 (t = 24), 13 (36), 17 (48).
  CHECK(summary_steps(io::read_events(writer->path()), "loss") ==
        std::vector<std::int64_t>{1, 5, 9, 13, 17});
}

TEST_CASE("SummarySaverHook: a new session (begin) writes START and summaries again",
          "[summary][summary_saver]") {
  ScratchDir dir;
  auto writer = io::create_file_writer(dir.path());
  hookfuse_test::LrModel m;
  auto summaries = summary::merge(summary::scalar<"loss">(m.loss()));
  SummarySaverHook hook({.save_steps = 8, .summary_writer = writer}, summaries);
  for (int session_no = 0; session_no < 2; ++session_no) {
    MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(std::ref(hook)));
    for (int run = 1; run <= 3; ++run) session.run();
  }
  const auto events = io::read_events(writer->path());
  std::vector<std::int64_t> starts;
  for (const auto& e : events)
    if (e.what == io::Event::What::session_log) starts.push_back(e.step);
  CHECK(starts == std::vector<std::int64_t>{1, 4});  // the second session starts at step 3
  CHECK(summary_steps(events, "loss") == std::vector<std::int64_t>{1, 4});
}

TEST_CASE("SummarySaverHook: checks its arguments", "[summary][summary_saver]") {
  hookfuse_test::LrModel m;
  auto summaries = summary::merge(summary::scalar<"loss">(m.loss()));
  using Hook = decltype(SummarySaverHook({.save_steps = 1, .summary_writer = {}}, summaries));
  CHECK_THROWS_AS(Hook({.save_steps = 8}, summaries), ValueError);  // no writer, no directory
  ScratchDir dir;
  auto writer = io::create_file_writer(dir.path());
  CHECK_THROWS_AS(Hook({.summary_writer = writer}, summaries), std::invalid_argument);
  CHECK_THROWS_AS(Hook({.save_steps = 8, .save_secs = 1.0, .summary_writer = writer}, summaries),
                  std::invalid_argument);
  CHECK_NOTHROW(Hook({.save_steps = 8, .summary_writer = writer}, summaries));
}

TEST_CASE("Two hooks writing into one directory share one file, copies share the writer",
          "[summary][summary_saver][step_counter]") {
  ScratchDir dir;
  FakeClock clock;
  hookfuse_test::LrModel m;
  auto summaries = summary::merge(summary::scalar<"loss">(m.loss()));
  SummarySaverHook saver({.save_steps = 5, .output_dir = dir.path()}, summaries);
  const auto copy = saver;
  CHECK(copy.summary_writer().get() == saver.summary_writer().get());
  StepCounterHook<Fake> counter({.every_n_steps = 5, .output_dir = dir.path().string() + "/"},
                                Fake{&clock});
  CHECK(counter.summary_writer().get() == saver.summary_writer().get());
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(saver, counter));
    for (int run = 1; run <= 11; ++run) {
      session.run();
      clock.advance(0.5);
    }
  }
  const auto events = events_of(dir.path());  // exactly one file in the directory
  CHECK(summary_steps(events, "loss") == std::vector<std::int64_t>{1, 6, 11});
  CHECK(summary_steps(events, "global_step/sec") == std::vector<std::int64_t>{6, 11});
  io::SummaryWriterCache::clear();
}

TEST_CASE("StepCounterHook writes global_step/sec = steps / fake-clock seconds",
          "[summary][step_counter]") {
  ScratchDir dir;
  FakeClock clock;
  auto writer = io::create_file_writer(dir.path(), {.scalar_form = io::ScalarForm::simple_value});
  hookfuse_test::LrModel m;
  std::vector<std::string> lines;
  struct Keep {
    std::vector<std::string>* lines;
    void log(Severity, std::string_view l) const { lines->emplace_back(l); }
  };
  {
    MonitoredTrainingSession session(
        m.train_op(), CountingInput{},
        hooks(StepCounterHook<Fake, Keep>({.every_n_steps = 10, .summary_writer = writer},
                                          Fake{&clock}, Keep{&lines})));
    for (int run = 1; run <= 11; ++run) {
      session.run();
      clock.advance(0.25);
    }
    for (int run = 12; run <= 21; ++run) {
      session.run();
      clock.advance(4.0);
    }
  }
  writer->flush();
  // Step 1 sets the baseline. Steps 1 -> 11: 10 steps in 10 * 0.25 = 2.5 s = 4 steps/s, written
  // at step 11. Steps 11 -> 21: 10 steps in 0.25 + 9 * 4 = 36.25 s, written at step 21.
  const auto events = io::read_events(writer->path());
  CHECK(summary_steps(events, "global_step/sec") == std::vector<std::int64_t>{11, 21});
  std::vector<double> rates;
  for (const auto& e : events)
    if (const auto* v = find_value(e, "global_step/sec")) {
      CHECK(v->kind == io::SummaryValue::Kind::simple_value);  // TF 1's form, as asked
      rates.push_back(*v->scalar());
    }
  REQUIRE(rates.size() == 2);
  CHECK(rates[0] == 4.0);
  CHECK(rates[1] == static_cast<double>(static_cast<float>(10.0 / 36.25)));
  // The log lines are unchanged.
  CHECK(lines == std::vector<std::string>{"global_step/sec: 4", "global_step/sec: 0.275862"});
}

TEST_CASE("SummarySaverHook: a summary outside the loss's graph is computed only when it fires",
          "[summary][summary_saver]") {
  // The summary reads a placeholder "z" that the loss does not: the caller feeds z only in the
  // runs where the hook fires (1 and 9 with save_steps = 8). Were the summary computed in runs
  // 2..8, reading the unfed z would throw ShapeError there.
  ScratchDir dir;
  auto writer = io::create_file_writer(dir.path());
  hookfuse_test::LrModel m;
  Placeholder<"z", float, 1> z;
  auto z_sum = summary::scalar<"z_sum">(reduce_sum(z));
  MonitoredTrainingSession session(
      m.train_op(), caller_feeds(1),
      hooks(SummarySaverHook({.save_steps = 8, .summary_writer = writer}, summary::merge(z_sum))),
      z_sum);
  float x = 1.0f, y = 2.0f;
  for (int run = 1; run <= 9; ++run) {
    float zv = 10.0f * static_cast<float>(run);
    if (run == 1 || run == 9)
      CHECK_NOTHROW(session.run(feed<"x">(&x, 1), feed<"y">(&y, 1), feed<"z">(&zv, 1)));
    else
      CHECK_NOTHROW(session.run(feed<"x">(&x, 1), feed<"y">(&y, 1)));
  }
  session.close();
  const auto events = io::read_events(writer->path());
  CHECK(summary_steps(events, "z_sum") == std::vector<std::int64_t>{1, 9});
  std::vector<double> values;
  for (const auto& e : events)
    if (const auto* v = find_value(e, "z_sum")) values.push_back(*v->scalar());
  CHECK(values == std::vector<double>{10.0, 90.0});
}

TEST_CASE("Control: reading an unfed placeholder in a run throws, so the test above can fail",
          "[summary][summary_saver]") {
  hookfuse_test::LrModel m;
  Placeholder<"z", float, 1> z;
  auto z_sum = named<"z_sum">(reduce_sum(z));
  MonitoredTrainingSession session(m.train_op(), caller_feeds(1), hooks(), z_sum);
  float x = 1.0f, y = 2.0f;
  CHECK_THROWS_AS(session.run<"z_sum">(feed<"x">(&x, 1), feed<"y">(&y, 1)), ShapeError);
}
