// tests/test_profiler_hook.cpp: ProfilerHook (timeline-<step>.json, Chrome trace event format)
// and the session's phase timings, in a real MonitoredTrainingSession.
//
// The cadence is TensorFlow's code (tensorflow/python/training/basic_session_run_hooks.py,
// ProfilerHook, TF 1.15 / 2.x compat.v1):
//   begin:      _next_step = None
//   before_run: _request_summary = _next_step is not None and
//               timer.should_trigger_for_step(_next_step)
//   after_run:  stale = global step fetched with the run (before the train op's increment);
//               if _next_step is None: timer.update_last_triggered_step(stale)
//               global_step = stale + 1
//               if _request_summary: global_step = session.run(global_step) (after the train op),
//                   timer.update_last_triggered_step(global_step),
//                   save "timeline-{global_step}.json"
//               _next_step = global_step + 1
// and TF's own test (basic_session_run_hooks_test.py, ProfilerHookTest.test_save_steps): with
// save_steps = 2, runs 1, 3, 5 save nothing and runs 2 and 4 save one file each.
//
// Times come from the hook's injected clock, so the trace's ts and dur are exact: TickClock
// advances by a fixed 0.25 s (a binary fraction: every difference is exact) at every reading.
// The model is tests/lr_model.hpp with learning rate 0.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/hooks/profiler_hook.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "io_test_support.hpp"
#include "lr_model.hpp"

using namespace hookfuse;
using hookfuse_test::ScratchDir;

namespace {

/// Every reading returns the current time, then advances it by `tick` seconds.
struct TickClock {
  double t = 100.0;
  double tick = 0.25;
  int reads = 0;
  double now() {
    ++reads;
    const double r = t;
    t += tick;
    return r;
  }
};
using Tick = ClockRef<TickClock>;
using Fake = ClockRef<FakeClock>;

/// A logger that drops its lines (the hooks' INFO lines are not under test here).
struct QuietLogger {
  void log(Severity, std::string_view) const {}
};

/// x = 1, y = 2 for every batch of one row, forever.
struct ConstantInput {
  float x = 1.0f;
  float y = 2.0f;
  bool next() { return true; }
  Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

/// Two batches like ConstantInput, then the end of the input.
struct TwoBatches {
  float x = 1.0f;
  float y = 2.0f;
  int left = 2;
  bool next() { return left-- > 0; }
  Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

/// A hook with after_run only: it has an after_run interval and no before_run one.
struct AfterOnlyHook {
  int runs = 0;
  void after_run(SessionRunContext&, const SessionRunValues<>&) { ++runs; }
};
/// A hook with begin only: no interval at all.
struct BeginOnlyHook {
  void begin() {}
};

/// The global steps of the timeline-<step>.json files in `dir`.
std::set<std::int64_t> timeline_steps(const std::filesystem::path& dir) {
  std::set<std::int64_t> steps;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    REQUIRE(name.rfind("timeline-", 0) == 0);
    REQUIRE(name.size() > 14);
    REQUIRE(name.substr(name.size() - 5) == ".json");
    steps.insert(std::stoll(name.substr(9, name.size() - 14)));
  }
  return steps;
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);  // throws (fails the test) on malformed JSON
}

}  // namespace

TEST_CASE("ProfilerHook(save_steps = 2): TF's test, runs 2 and 4 save, 1, 3 and 5 do not",
          "[profiler]") {
  ScratchDir dir;
  hookfuse_test::LrModel m;
  FakeClock clock;
  MonitoredTrainingSession session(
      m.train_op(), ConstantInput{},
      hooks(ProfilerHook<Fake, QuietLogger>({.save_steps = 2, .output_dir = dir.path().string()},
                                            Fake{&clock})));
  // Run k ends on global step k. Run 1: first run, not traced, timer at step 0, next_step 2.
  // Run 2: should_trigger(2): 2 >= 0 + 2, traced, file named 2, timer at 2, next_step 3.
  // Run 3: 3 < 2 + 2, no. Run 4: traced, file 4. Run 5: 5 < 6, no.
  const std::vector<std::set<std::int64_t>> expected = {{}, {2}, {2}, {2, 4}, {2, 4}};
  for (const auto& files : expected) {
    session.run();
    CHECK(timeline_steps(dir.path()) == files);
  }
}

TEST_CASE("ProfilerHook(save_steps = 4), a train op adding 2 per run: runs 2 and 4 (steps 4, 8)",
          "[profiler][step_increment]") {
  ScratchDir dir;
  hookfuse_test::LrModel m;
  FakeClock clock;
  auto op = m.train_op();
  op.global_step_increment = 2;
  MonitoredTrainingSession session(
      op, ConstantInput{},
      hooks(ProfilerHook<Fake, QuietLogger>({.save_steps = 4, .output_dir = dir.path().string()},
                                            Fake{&clock})));
  // Run k ends on global step 2k. Run 1: not traced, timer at step 0, next_step 2 + 2 = 4.
  // Run 2: should_trigger(4): 4 >= 0 + 4, traced, file 4, next_step 6. Run 3: 6 < 8, no
  // (next 8). Run 4: traced, file 8. Run 5: 10 < 12, no.
  const std::vector<std::set<std::int64_t>> expected = {{}, {4}, {4}, {4, 8}, {4, 8}};
  for (const auto& files : expected) {
    session.run();
    CHECK(timeline_steps(dir.path()) == files);
  }
}

TEST_CASE("ProfilerHook(save_steps = 3) after a restore at step 10: files 13, 16, 19",
          "[profiler]") {
  ScratchDir dir;
  hookfuse_test::LrModel m(10);
  FakeClock clock;
  MonitoredTrainingSession session(
      m.train_op(), ConstantInput{},
      hooks(ProfilerHook<Fake, QuietLogger>({.save_steps = 3, .output_dir = dir.path().string()},
                                            Fake{&clock})));
  // Run 1 goes 10 -> 11: not traced, timer at 10. Runs ending on 13, 16, 19 are traced
  // (13 >= 10 + 3, then every 3 steps from the last trigger).
  for (int i = 0; i < 10; ++i) session.run();
  CHECK(session.global_step() == 20);
  CHECK(timeline_steps(dir.path()) == std::set<std::int64_t>{13, 16, 19});
}

TEST_CASE("ProfilerHook(save_secs = 10) with a fake clock", "[profiler]") {
  ScratchDir dir;
  hookfuse_test::LrModel m;
  FakeClock clock;
  MonitoredTrainingSession session(
      m.train_op(), ConstantInput{},
      hooks(ProfilerHook<Fake, QuietLogger>({.save_secs = 10.0, .output_dir = dir.path().string()},
                                            Fake{&clock})));
  // Run k starts at t = 4 (k - 1) s (the fake clock does not move inside a run). Run 1 (t = 0):
  // not traced, timer at (step 0, t = 0). Runs 2, 3 (t = 4, 8): 8 < 10, no. Run 4 (t = 12):
  // traced, file 4, timer at t = 12. Runs 5, 6 (16, 20 < 22): no. Run 7 (t = 24): file 7.
  for (int k = 1; k <= 8; ++k) {
    session.run();
    clock.advance(4.0);
  }
  CHECK(timeline_steps(dir.path()) == std::set<std::int64_t>{4, 7});
}

TEST_CASE("ProfilerHook: a new session (begin) does not trace its first run", "[profiler]") {
  ScratchDir dir;
  FakeClock clock;
  ProfilerHook<Fake, QuietLogger> hook({.save_steps = 1, .output_dir = dir.path().string()},
                                       Fake{&clock});
  {
    hookfuse_test::LrModel m;
    MonitoredTrainingSession session(m.train_op(), ConstantInput{}, hooks(std::ref(hook)));
    session.run();  // 0 -> 1, first run: no file
    session.run();  // 1 -> 2: file 2
  }
  CHECK(timeline_steps(dir.path()) == std::set<std::int64_t>{2});
  {
    hookfuse_test::LrModel m(5);
    MonitoredTrainingSession session(m.train_op(), ConstantInput{}, hooks(std::ref(hook)));
    session.run();  // 5 -> 6: the new session's first run: no file
    CHECK(timeline_steps(dir.path()) == std::set<std::int64_t>{2});
    session.run();  // 6 -> 7: file 7
  }
  CHECK(timeline_steps(dir.path()) == std::set<std::int64_t>{2, 7});
}

TEST_CASE("ProfilerHook: the trace has every phase in step order, timed by the hook's clock",
          "[profiler]") {
  ScratchDir dir;
  hookfuse_test::LrModel m;
  TickClock clock;
  MonitoredTrainingSession session(
      m.train_op(), ConstantInput{},
      hooks(StopAtStepHook({.num_steps = 100}),
            ProfilerHook<Tick, QuietLogger>({.save_steps = 1, .output_dir = dir.path().string()},
                                            Tick{&clock}),
            BeginOnlyHook{}, AfterOnlyHook{}));
  session.run();  // not traced
  session.run();  // traced: timeline-2.json
  REQUIRE(timeline_steps(dir.path()) == std::set<std::int64_t>{2});
  const nlohmann::json trace = read_json(dir / "timeline-2.json");

  // The intervals, by hand: StopAtStepHook has before_run and after_run (hook 0), ProfilerHook
  // after_run only (hook 1), BeginOnlyHook neither (hook 2), AfterOnlyHook after_run (hook 3).
  const std::vector<std::string> names = {"before_run[0] hookfuse::StopAtStepHook",
                                          "input",
                                          "forward",
                                          "backward",
                                          "fetches",
                                          "unfused_update",
                                          "after_run[0] hookfuse::StopAtStepHook",
                                          "after_run[1] ProfilerHook",
                                          "after_run[3] AfterOnlyHook"};
  const auto& events = trace.at("traceEvents");
  REQUIRE(events.size() == 3 + names.size());
  CHECK(events[0].at("name") == "process_name");
  CHECK(events[1].at("name") == "thread_name");
  CHECK(events[2].at("name") == "step");
  CHECK(events[2].at("args").at("global_step") == 2);
  CHECK(trace.at("otherData").at("global_step") == 2);

  // One clock reading at the start and one at the end of each interval, 0.25 s apart, except
  // that the ProfilerHook's after_run reads the same clock once more itself (its timer's
  // update_last_triggered_step at a trigger): that interval is two ticks.
  double expected_ts = 0.0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& e = events[3 + i];
    INFO("event " << i << ": " << e.dump());
    const std::string name = e.at("name");
    if (names[i].find('[') == std::string::npos) {
      CHECK(name == names[i]);
      CHECK(e.at("cat") == names[i]);
    } else {
      // "after_run[1] ProfilerHook" stands for "after_run[1] hookfuse::ProfilerHook<...>"
      const std::string head = names[i].substr(0, names[i].find(' ') + 1);
      const std::string type = names[i].substr(names[i].find(' ') + 1);
      CHECK(name.rfind(head, 0) == 0);
      CHECK(name.find(type) != std::string::npos);
      CHECK(e.at("args").at("hook").get<std::string>().find(type) != std::string::npos);
    }
    const double expected_dur = names[i] == "after_run[1] ProfilerHook" ? 500000.0 : 250000.0;
    CHECK(e.at("ts").get<double>() == expected_ts);
    CHECK(e.at("dur").get<double>() == expected_dur);
    CHECK(e.at("dur").get<double>() >= 0.0);
    expected_ts += expected_dur;
  }
  // The phases tile the step: the step's duration is their sum, (9 + 1) ticks.
  CHECK(events[2].at("ts").get<double>() == 0.0);
  CHECK(events[2].at("dur").get<double>() == expected_ts);
  CHECK(expected_ts == 10 * 250000.0);
  CHECK(session.hook<3>().runs == 2);
}

TEST_CASE("ProfilerHook: the JSON has what chrome://tracing and Perfetto read", "[profiler]") {
  ScratchDir dir;
  hookfuse_test::LrModel m;
  TickClock clock;
  MonitoredTrainingSession session(
      m.train_op(), ConstantInput{},
      hooks(ProfilerHook<Tick, QuietLogger>({.save_steps = 5, .output_dir = dir.path().string()},
                                            Tick{&clock})));
  for (int i = 0; i < 5; ++i) session.run();
  const nlohmann::json trace = read_json(dir / "timeline-5.json");
  // The JSON Object Format of the Trace Event Format: {"traceEvents": [...], ...}.
  REQUIRE(trace.is_object());
  REQUIRE(trace.at("traceEvents").is_array());
  CHECK(trace.at("displayTimeUnit") == "ms");
  int complete = 0, metadata = 0;
  for (const auto& e : trace.at("traceEvents")) {
    INFO(e.dump());
    REQUIRE(e.at("name").is_string());
    REQUIRE(e.at("ph").is_string());
    REQUIRE(e.at("pid").is_number_integer());
    REQUIRE(e.at("tid").is_number_integer());
    const std::string ph = e.at("ph");
    if (ph == "X") {  // complete event: ts and dur in microseconds
      ++complete;
      CHECK(e.at("ts").is_number());
      CHECK(e.at("dur").is_number());
      CHECK(e.at("dur").get<double>() >= 0.0);
      CHECK(e.at("cat").is_string());
    } else {
      CHECK(ph == "M");  // metadata: process_name / thread_name with args.name
      ++metadata;
      CHECK(e.at("args").at("name").is_string());
    }
  }
  CHECK(metadata == 2);
  CHECK(complete == 1 + 5 + 1);  // the step, the five fixed phases, the hook's after_run
}

TEST_CASE("ProfilerHook: steps it does not trace read no clock", "[profiler]") {
  ScratchDir dir;
  hookfuse_test::LrModel m;
  TickClock clock;
  MonitoredTrainingSession session(
      m.train_op(), ConstantInput{},
      hooks(StopAtStepHook({.num_steps = 100}),
            ProfilerHook<Tick, QuietLogger>({.save_steps = 4, .output_dir = dir.path().string()},
                                            Tick{&clock})));
  session.run();  // step 1: the timer starts (one reading in update_last_triggered_step)
  CHECK(clock.reads == 1);
  session.run();  // steps 2 and 3: nothing
  session.run();
  CHECK(clock.reads == 1);
  // Step 4: traced. The start, the end of each of the 8 intervals (StopAtStepHook's before_run,
  // the five fixed phases, StopAtStepHook's and ProfilerHook's after_run), the timer's reading.
  session.run();
  CHECK(clock.reads == 1 + 1 + 8 + 1);
  CHECK(timeline_steps(dir.path()) == std::set<std::int64_t>{4});
}

TEST_CASE("ProfilerHook: a traced run that ends the input writes nothing", "[profiler]") {
  ScratchDir dir;
  hookfuse_test::LrModel m;
  FakeClock clock;
  MonitoredTrainingSession session(
      m.train_op(), TwoBatches{},
      hooks(ProfilerHook<Fake, QuietLogger>({.save_steps = 1, .output_dir = dir.path().string()},
                                            Fake{&clock})));
  CHECK(session.run());        // not traced
  CHECK(session.run());        // traced: file 2
  CHECK_FALSE(session.run());  // would be traced, but the input ran out: no after_run, no file
  CHECK(timeline_steps(dir.path()) == std::set<std::int64_t>{2});
}

TEST_CASE("ProfilerHook: checks its arguments", "[profiler]") {
  ScratchDir dir;
  using P = ProfilerHook<Fake, QuietLogger>;
  FakeClock clock;
  CHECK_THROWS_AS(P({.output_dir = dir.path().string()}, Fake{&clock}), std::invalid_argument);
  CHECK_THROWS_AS(
      P({.save_steps = 1, .save_secs = 1.0, .output_dir = dir.path().string()}, Fake{&clock}),
      std::invalid_argument);
  // output_dir under a regular file cannot be created.
  { std::ofstream(dir / "file") << "x"; }
  CHECK_THROWS_AS(P({.save_steps = 1, .output_dir = (dir / "file" / "sub").string()}, Fake{&clock}),
                  io::IoError);
  // A missing output_dir is created (TF creates it through its summary writer).
  P made({.save_steps = 1, .output_dir = (dir / "a" / "b").string()}, Fake{&clock});
  CHECK(std::filesystem::is_directory(dir / "a" / "b"));
}

TEST_CASE("Phase timings are compiled only with a hook that wants them", "[profiler]") {
  using Plain = detail::StepPhases<boost::hana::tuple<StopAtStepHook, AfterOnlyHook>>;
  using Profiled = detail::StepPhases<
      boost::hana::tuple<StopAtStepHook, std::reference_wrapper<ProfilerHook<>>, BeginOnlyHook>>;
  STATIC_REQUIRE_FALSE(Plain::timed);
  STATIC_REQUIRE(Profiled::timed);
  STATIC_REQUIRE(Profiled::size == 1 + 5 + 2);  // StopAtStepHook's two events, ProfilerHook's one
  STATIC_REQUIRE(std::is_empty_v<detail::StepMarks<Plain::timed, Plain::size + 1>>);
  STATIC_REQUIRE(WantsPhaseTimings<ProfilerHook<>>);
  STATIC_REQUIRE(PhaseTimingHook<ProfilerHook<>>);
  STATIC_REQUIRE(PhaseTimingHook<ConditionalHook<ProfilerHook<>>>);
  STATIC_REQUIRE_FALSE(WantsPhaseTimings<StopAtStepHook>);
  STATIC_REQUIRE_FALSE(WantsPhaseTimings<ConditionalHook<StopAtStepHook>>);
}

TEST_CASE("ProfilerHook as a chief-only hook: traced on the chief, absent elsewhere",
          "[profiler]") {
  for (const bool chief : {true, false}) {
    ScratchDir dir;
    hookfuse_test::LrModel m;
    FakeClock clock;
    MonitoredTrainingSession session(
        m.train_op(), ConstantInput{}, SessionOptions<>{.is_chief = chief},
        hooks(),  // no checkpoint_dir: no saver hook
        chief_only_hooks(ProfilerHook<Fake, QuietLogger>(
            {.save_steps = 1, .output_dir = dir.path().string()}, Fake{&clock})));
    session.run();
    session.run();
    CHECK(timeline_steps(dir.path()) ==
          (chief ? std::set<std::int64_t>{2} : std::set<std::int64_t>{}));
  }
}

TEST_CASE("Two ProfilerHooks: each writes its own steps, the first that asks gives the clock",
          "[profiler]") {
  ScratchDir dir1, dir2;
  hookfuse_test::LrModel m;
  FakeClock still;  // never moves: every interval it times is 0
  TickClock ticking;
  MonitoredTrainingSession session(
      m.train_op(), ConstantInput{},
      hooks(ProfilerHook<Fake, QuietLogger>({.save_steps = 1, .output_dir = dir1.path().string()},
                                            Fake{&still}),
            ProfilerHook<Tick, QuietLogger>({.save_steps = 2, .output_dir = dir2.path().string()},
                                            Tick{&ticking})));
  for (int i = 0; i < 3; ++i) session.run();
  CHECK(timeline_steps(dir1.path()) == std::set<std::int64_t>{2, 3});
  CHECK(timeline_steps(dir2.path()) == std::set<std::int64_t>{2});
  // Step 2 was asked for by both: hook 0 comes first, so its still clock timed it, and the
  // second hook's file shows that timeline (every dur 0). The ticking clock was read only by
  // its own timer: at the first run and at the trigger of step 2.
  const nlohmann::json trace = read_json(dir2 / "timeline-2.json");
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == "X") CHECK(e.at("dur").get<double>() == 0.0);
  CHECK(ticking.reads == 2);
}
