// tests/test_no_train_run_io.cpp: SummarySaverHook (read back from the event file with
// io::read_events) and ProfilerHook (its timeline files) in hooked runs that do not train
// (session.run(no_train)). The core hooks are in test_no_train_run.cpp.
//
// The specification is TensorFlow's code (tensorflow/python/training/basic_session_run_hooks.py,
// TF 1.15 / 2.x compat.v1):
//   SummarySaverHook.before_run: _request_summary = next_step is None or
//       timer.should_trigger_for_step(next_step).
//   SummarySaverHook.after_run: global_step = stale_global_step + 1; read again
//       (session.run(global_step_tensor)) when next_step is None or the summary was requested;
//       START at global_step in the first run; when requested, update_last_triggered_step and
//       add_summary at global_step; next_step = global_step + 1.
// In a run that does not train the step read again is the stale step, and when nothing is
// requested the hook still takes stale + 1 as the step the run ended on.
//   ProfilerHook: before_run traces when next_step is not None and
//       timer.should_trigger_for_step(next_step); after_run: the first run starts the timer at
//       the stale step; global_step = stale + 1, read again when traced; next_step =
//       global_step + 1.
//
// The model: learning rate 0, so W = b = 0 and run k (from 1, training or not) has x = k / 4,
// y = k, loss = k^2 (tests/lr_model.hpp, QuarterInput).
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/hooks/profiler_hook.hpp>
#include <hookfuse/hooks/summary_saver_hook.hpp>
#include <hookfuse/io/event_reader.hpp>
#include <hookfuse/io/summary_writer_cache.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io_test_support.hpp"
#include "lr_model.hpp"

using namespace hookfuse;
using hookfuse_test::ScratchDir;

namespace {

/// The only events file of `dir`.
std::vector<io::Event> events_of(const std::filesystem::path& dir) {
  const auto files = io::event_files(dir);
  REQUIRE(files.size() == 1);
  return io::read_events(files.front());
}

/// (step, value) of every "loss" summary, in file order.
std::vector<std::pair<std::int64_t, double>> loss_summaries(const std::vector<io::Event>& events) {
  std::vector<std::pair<std::int64_t, double>> out;
  for (const auto& e : events) {
    if (e.what != io::Event::What::summary) continue;
    for (const auto& v : e.summary.value)
      if (v.tag == "loss") out.emplace_back(e.step, v.scalar().value_or(-1.0));
  }
  return out;
}

/// The steps of the SessionLog START events.
std::vector<std::int64_t> start_steps(const std::vector<io::Event>& events) {
  std::vector<std::int64_t> out;
  for (const auto& e : events)
    if (e.what == io::Event::What::session_log && e.session_log.status == io::SessionLog::START)
      out.push_back(e.step);
  return out;
}

/// Runs a session with SummarySaverHook(save_steps = 4) on the loss: `runs` lists each run,
/// 'T' trains, 'N' does not. Returns the events written.
std::vector<io::Event> run_sequence(const std::string& runs, std::int64_t* final_step) {
  ScratchDir dir;
  hookfuse_test::LrModel m;
  auto summaries = summary::merge(summary::scalar<"loss">(m.loss()));
  {
    MonitoredTrainingSession session(
        m.train_op(), hookfuse_test::QuarterInput{},
        hooks(SummarySaverHook({.save_steps = 4, .output_dir = dir.path()}, summaries)));
    for (char r : runs) {
      if (r == 'T') session.run();
      else session.run(no_train);
    }
    *final_step = session.global_step();
  }
  io::SummaryWriterCache::clear();
  return events_of(dir.path());
}

}  // namespace

TEST_CASE("SummarySaverHook: a quiet run that does not train takes stale + 1 as its step",
          "[no_train][summary_saver]") {
  // Uninterrupted, save_steps = 4 from step 0: run 1 writes at 1, then at 5, 9.
  // With run 4 not training (step 3): runs 1-3 end on 1, 2, 3 (writes at 1, next_step 4). Run 4
  // (no_train at 3) checks step 4: 4 < 1 + 4, quiet; it takes 3 + 1 = 4 as its step, so
  // next_step = 5. Run 5 (3 -> 4) checks 5 and fires: writes run 5's loss (25) at the step read
  // after it, 4; next_step 5. Run 6 (4 -> 5) checks 5 < 8: quiet; then 8 (run 9), 12 (run 13).
  std::int64_t step = 0;
  const auto plain = run_sequence("TTTTTTTTTT", &step);
  CHECK(step == 10);
  CHECK(loss_summaries(plain) ==
        std::vector<std::pair<std::int64_t, double>>{{1, 1.0}, {5, 25.0}, {9, 81.0}});
  const auto events = run_sequence("TTTNTTTTTTTT", &step);
  CHECK(step == 11);
  CHECK(loss_summaries(events) ==
        std::vector<std::pair<std::int64_t, double>>{{1, 1.0}, {4, 25.0}, {8, 81.0}});
  CHECK(start_steps(events) == std::vector<std::int64_t>{1});
}

TEST_CASE("SummarySaverHook: a firing run that does not train writes its values at its step",
          "[no_train][summary_saver]") {
  // Runs 1-4 train (writes at 1; run 4 ends on 4, next_step 5). Run 5 (no_train at 4) checks
  // 5 >= 1 + 4: fires, reads the step again (4) and writes its own loss (25) at 4, timer at 4,
  // next_step 5. Run 6 (4 -> 5) checks 5 < 8: quiet. Runs 7-9 end on 6, 7, 8: run 9 writes 81
  // at 8.
  std::int64_t step = 0;
  const auto events = run_sequence("TTTTNTTTT", &step);
  CHECK(step == 8);
  CHECK(loss_summaries(events) ==
        std::vector<std::pair<std::int64_t, double>>{{1, 1.0}, {4, 25.0}, {8, 81.0}});
}

TEST_CASE("SummarySaverHook: a first run that does not train starts the session at its step",
          "[no_train][summary_saver]") {
  // Run 1 (no_train at 0): next_step is None, so it writes: START and its loss (1) at the step
  // read again, 0; next_step 1. Run 2 (0 -> 1) checks 1 < 0 + 4: quiet; runs 3-5 end on 2, 3,
  // 4: run 5 writes 25 at 4.
  std::int64_t step = 0;
  const auto events = run_sequence("NTTTT", &step);
  CHECK(step == 4);
  CHECK(start_steps(events) == std::vector<std::int64_t>{0});
  CHECK(loss_summaries(events) ==
        std::vector<std::pair<std::int64_t, double>>{{0, 1.0}, {4, 25.0}});
}

namespace {
struct QuietLogger {
  void log(Severity, std::string_view) const {}
};

/// The global steps of the timeline-<step>.json files in `dir`.
std::set<std::int64_t> timeline_steps(const std::filesystem::path& dir) {
  std::set<std::int64_t> steps;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    REQUIRE(name.rfind("timeline-", 0) == 0);
    REQUIRE(name.size() > 14);
    steps.insert(std::stoll(name.substr(9, name.size() - 14)));
  }
  return steps;
}
}  // namespace

TEST_CASE("ProfilerHook: runs that do not train count as TensorFlow counts them, and are traced",
          "[no_train][profiler]") {
  ScratchDir dir;
  hookfuse_test::LrModel m;
  FakeClock clock;
  MonitoredTrainingSession session(
      m.train_op(), hookfuse_test::QuarterInput{},
      hooks(ProfilerHook<ClockRef<FakeClock>, QuietLogger>(
          {.save_steps = 2, .output_dir = dir.path().string()}, ClockRef<FakeClock>{&clock})));
  // save_steps = 2. Uninterrupted: files 2, 4, 6. Run 1 (0 -> 1): first run, timer at 0,
  // next_step 2. Run 2 (1 -> 2): traced, file 2, next_step 3. Run 3 (no_train at 2): 3 < 4,
  // quiet; takes 2 + 1 = 3 as its step, next_step 4. Run 4 (2 -> 3) checks 4: traced, file
  // named after the step read again, 3; next_step 4. Run 5 (3 -> 4): 4 < 5. Run 6 (no_train at
  // 4) checks 5: traced, file 4 (its own step), next_step 5. Run 7 (4 -> 5): 5 < 6.
  const std::string runs = "TTNTTNT";
  const std::vector<std::set<std::int64_t>> expected = {{},        {2},       {2},      {2, 3},
                                                        {2, 3},    {2, 3, 4}, {2, 3, 4}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i] == 'T') session.run();
    else session.run(no_train);
    INFO("run " << i + 1);
    CHECK(timeline_steps(dir.path()) == expected[i]);
  }
  CHECK(session.global_step() == 5);
  // The trace of the run that does not train: the training step's phases, one interval each
  // (input, forward, backward, fetches, unfused_update, then the ProfilerHook's after_run).
  std::ifstream in(dir.path() / "timeline-4.json");
  const auto trace = nlohmann::json::parse(in);
  const auto& events = trace.at("traceEvents");
  REQUIRE(events.size() == 3 + 6);
  CHECK(events[3].at("name") == "input");
  CHECK(events[5].at("name") == "backward");
  CHECK(events[7].at("name") == "unfused_update");
  CHECK(trace.at("otherData").at("global_step") == 4);
}
