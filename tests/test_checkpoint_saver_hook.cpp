// tests/test_checkpoint_saver_hook.cpp: CheckpointSaverHook and CheckpointSaverListener on
// their own (given to a session with hooks(...)), against TensorFlow's
// tensorflow/python/training/basic_session_run_hooks.py: the cadence, the listeners' calls and
// stop requests, the final save, the save path, copies, and a step where the hook does not fire
// allocating nothing.
//
// The saver is a fake recording (global step, save_path) per save; time comes from a FakeClock.

// clang-format off: alloc_counter.hpp must precede every Eigen header.
#define HOOKFUSE_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"
// clang-format on

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <hookfuse/hookfuse.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "capturing_logger.hpp"
#include "checkpoint_fixtures.hpp"
#include "lr_model.hpp"

using namespace hookfuse;

namespace {

struct SaveLog {
  std::vector<std::pair<std::int64_t, std::string>> saves;
  std::vector<std::size_t> var_counts;
  std::vector<std::string> events;
};

struct FakeSaver {
  SaveLog* log;
  std::string save(VariableList vars, std::string_view save_path, std::int64_t global_step) {
    log->saves.emplace_back(global_step, std::string(save_path));
    log->var_counts.push_back(vars.size());
    log->events.push_back("save " + std::to_string(global_step));
    return std::string(save_path) + "-" + std::to_string(global_step);
  }
  std::optional<std::string> restore_latest(VariableList, std::string_view) {
    return std::nullopt;
  }
};

std::vector<std::int64_t> steps_of(const SaveLog& log) {
  std::vector<std::int64_t> out;
  for (const auto& s : log.saves) out.push_back(s.first);
  return out;
}

using hookfuse_test::ConstInput;

/// Records every call with its global step; after_save returns true at the steps in `stop_at`.
struct RecordingListener {
  std::vector<std::string>* events;
  std::vector<std::int64_t> stop_at{};
  void begin() { events->push_back("begin"); }
  template <class S>
  void before_save(S& s, std::int64_t step) {
    events->push_back("before_save " + std::to_string(step) + " (session at " +
                      std::to_string(s.global_step()) + ")");
  }
  template <class S>
  bool after_save(S&, std::int64_t step) {
    events->push_back("after_save " + std::to_string(step));
    for (auto s : stop_at)
      if (s == step) return true;
    return false;
  }
  template <class S>
  void end(S&, std::int64_t step) {
    events->push_back("end " + std::to_string(step));
  }
};

/// Declares only after_save, returning nothing.
struct AfterSaveOnly {
  int* count;
  template <class S>
  void after_save(S&, std::int64_t) {
    ++*count;
  }
};

using hookfuse_test::CapturingLogger;
using hookfuse_test::Line;
using hookfuse_test::Lines;

using hookfuse_test::run_until_stop;

using Model = hookfuse_test::LrModel;
using Steps = std::vector<std::int64_t>;
template <class Ls = boost::hana::tuple<>, class C = SteadyClock>
using Hook = CheckpointSaverHook<FakeSaver, Ls, C, NullLogger>;

}  // namespace

TEST_CASE("CheckpointSaverHook: exactly one of save_secs and save_steps", "[checkpoint][hook]") {
  // TensorFlow: SecondOrStepTimer raises ValueError for neither and for both.
  SaveLog log;
  CHECK_THROWS_AS(Hook<>("D", {}, FakeSaver{&log}), std::invalid_argument);
  CHECK_THROWS_AS(Hook<>("D", {.save_secs = 1.0, .save_steps = 1}, FakeSaver{&log}),
                  std::invalid_argument);
  CHECK_NOTHROW(Hook<>("D", {.save_steps = 1}, FakeSaver{&log}));
}

TEST_CASE("CheckpointSaverHook: the save path is os.path.join(checkpoint_dir, basename)",
          "[checkpoint][hook]") {
  SaveLog log;
  CHECK(Hook<>("D", {.save_steps = 1}, FakeSaver{&log}).save_path() == "D/model.ckpt");
  CHECK(Hook<>("D/", {.save_steps = 1}, FakeSaver{&log}).save_path() == "D/model.ckpt");
  CHECK(Hook<>("", {.save_steps = 1}, FakeSaver{&log}).save_path() == "model.ckpt");
  CHECK(Hook<>("/tmp/run", {.save_steps = 1, .checkpoint_basename = "weights"}, FakeSaver{&log})
            .save_path() == "/tmp/run/weights");
}

TEST_CASE("CheckpointSaverHook: save_steps = 50 from global step 0 to 120 in a plain session",
          "[checkpoint][hook]") {
  // after_create_session saves 0; after_run fires when stale + 1 >= last + 50 (50, 100); end()
  // saves 120 (!= 100). Each save receives the session's variables: W, b and global_step.
  SaveLog log;
  std::vector<Line> lines;
  Model m;
  {
    MonitoredTrainingSession session(
        m.train_op(), ConstInput{},
        hooks(CheckpointSaverHook<FakeSaver, boost::hana::tuple<>, SteadyClock, CapturingLogger>(
                  "D", {.save_steps = 50}, FakeSaver{&log}, {}, {}, CapturingLogger{&lines}),
              StopAtStepHook({.last_step = 120})));
    CHECK(run_until_stop(session) == 120);
  }
  CHECK(steps_of(log) == Steps{0, 50, 100, 120});
  CHECK(log.var_counts == std::vector<std::size_t>{3, 3, 3, 3});
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].text == "Create CheckpointSaverHook.");
  CHECK(lines[2].text == "Saving checkpoints for 50 into D/model.ckpt.");
  CHECK(lines[2].severity == Severity::info);
}

TEST_CASE("CheckpointSaverHook: a saver passed as std::ref stays with the caller",
          "[checkpoint][hook]") {
  SaveLog log;
  FakeSaver saver{&log};
  Model m;
  {
    CheckpointSaverHook hook("D", {.save_steps = 2}, std::ref(saver), listeners(), SteadyClock{},
                             NullLogger{});
    STATIC_REQUIRE(std::is_same_v<decltype(hook)::saver_type, FakeSaver>);
    CHECK(&hook.saver() == &saver);
    MonitoredTrainingSession session(m.train_op(), ConstInput{},
                                     hooks(std::move(hook), StopAtStepHook({.num_steps = 3})));
    run_until_stop(session);
  }
  CHECK(steps_of(log) == Steps{0, 2, 3});
}

TEST_CASE("CheckpointSaverHook: a session closed before any step saves once, at creation",
          "[checkpoint][hook]") {
  // end(): last_step (7) == the timer's last triggered step (7, from after_create_session).
  SaveLog log;
  Model m(7);
  {
    MonitoredTrainingSession session(m.train_op(), ConstInput{},
                                     hooks(Hook<>("D", {.save_steps = 10}, FakeSaver{&log})));
    session.close();
  }
  CHECK(steps_of(log) == Steps{7});
}

TEST_CASE("CheckpointSaverHook: save_secs follows the clock, not the steps", "[checkpoint][hook]") {
  // Ticks of 4 s before each batch, save_secs = 10: saves at creation (step 0, t = 0), then at
  // the first run with now >= last save time + 10: run 3 (t = 12), run 6 (t = 24 >= 22), run 9
  // (t = 36 >= 34); StopAtStepHook(last_step = 10), end() saves 10 (!= 9).
  SaveLog log;
  FakeClock clock;
  Model m;
  {
    MonitoredTrainingSession session(
        m.train_op(), ConstInput{&clock, 4.0},
        hooks(Hook<boost::hana::tuple<>, ClockRef<FakeClock>>(
                  "D", {.save_secs = 10.0}, FakeSaver{&log}, {}, ClockRef<FakeClock>{&clock}),
              StopAtStepHook({.last_step = 10})));
    run_until_stop(session);
  }
  CHECK(steps_of(log) == Steps{0, 3, 6, 9, 10});
}

TEST_CASE("CheckpointSaverListener: begin, before_save, after_save and end, in TensorFlow's order",
          "[checkpoint][listener]") {
  // _save(): log, every listener's before_save, saver.save, every listener's after_save, each
  // with the step saved. begin() calls the listeners' begin(); end() saves (25 != 20) and then
  // calls their end(session, 25). A listener kept with std::ref is read afterwards.
  SaveLog log;
  RecordingListener listener{&log.events};
  int after_saves = 0;
  Model m;
  {
    MonitoredTrainingSession session(
        m.train_op(), ConstInput{},
        hooks(CheckpointSaverHook("D", {.save_steps = 10}, FakeSaver{&log},
                                  listeners(std::ref(listener), AfterSaveOnly{&after_saves}),
                                  SteadyClock{}, NullLogger{}),
              StopAtStepHook({.last_step = 25})));
    run_until_stop(session);
  }
  CHECK(log.events == std::vector<std::string>{
                          "begin",
                          "before_save 0 (session at 0)", "save 0", "after_save 0",
                          "before_save 10 (session at 10)", "save 10", "after_save 10",
                          "before_save 20 (session at 20)", "save 20", "after_save 20",
                          "before_save 25 (session at 25)", "save 25", "after_save 25",
                          "end 25"});
  CHECK(after_saves == 4);
}

TEST_CASE("CheckpointSaverListener: after_save returning true stops the session after that save",
          "[checkpoint][listener]") {
  // TensorFlow: in after_run, `if self._save(...): run_context.request_stop()`; the return of
  // the save in after_create_session is ignored (so true at step 0 does not stop). Asked to stop
  // at step 20: the session stops after the run reaching 20; end() does not save again (20 is
  // the last saved step) and calls the listener's end(20).
  SaveLog log;
  std::vector<Line> lines;
  RecordingListener listener{&log.events, {0, 20}};
  Model m;
  int runs = 0;
  {
    MonitoredTrainingSession session(
        m.train_op(), ConstInput{},
        hooks(CheckpointSaverHook("D", {.save_steps = 10}, FakeSaver{&log},
                                  listeners(std::ref(listener)), SteadyClock{},
                                  CapturingLogger{&lines})));
    runs = run_until_stop(session);
  }
  CHECK(runs == 20);
  CHECK(steps_of(log) == Steps{0, 10, 20});
  CHECK(log.events.back() == "end 20");
  // TensorFlow logs the request each time a listener makes it (here at 0 and at 20).
  int requests = 0;
  for (const auto& l : lines) {
    if (l.text.starts_with("A CheckpointSaverListener requested that training be stopped. "
                           "listener: ")) {
      ++requests;
      CHECK(l.text.find("RecordingListener") != std::string::npos);
    }
  }
  CHECK(requests == 2);
}

TEST_CASE("CheckpointSaverHook: a copy made before the session is an independent hook",
          "[checkpoint][hook]") {
  SaveLog log_a, log_b;
  Hook<> a("A", {.save_steps = 2}, FakeSaver{&log_a});
  Hook<> b = a;  // same options and saver (pointing at log_a)
  b.saver().log = &log_b;
  Model m1, m2(10);
  {
    MonitoredTrainingSession s1(m1.train_op(), ConstInput{},
                                hooks(std::move(a), StopAtStepHook({.num_steps = 3})));
    MonitoredTrainingSession s2(m2.train_op(), ConstInput{},
                                hooks(std::move(b), StopAtStepHook({.num_steps = 4})));
    run_until_stop(s1);
    run_until_stop(s2);
  }
  CHECK(steps_of(log_a) == Steps{0, 2, 3});
  CHECK(steps_of(log_b) == Steps{10, 12, 14});
}

TEST_CASE("CheckpointSaverHook: a copy of a running hook does not save through its session",
          "[checkpoint][hook]") {
  SaveLog log;
  Hook<> hook("D", {.save_steps = 1}, FakeSaver{&log});
  Model m;
  MonitoredTrainingSession session(m.train_op(), ConstInput{}, hooks(std::ref(hook)));
  session.run();
  REQUIRE(steps_of(log) == Steps{0, 1});
  Hook<> copy = hook;  // bound to no session
  std::int64_t step = 5;
  SessionRunContext ctx(&step);
  SessionRunValues<"global_step"> values;
  std::int64_t stale = 4;
  values.results[0] = TensorValue{&stale, 1, 1, 1, 1, DType::int64};
  copy.after_run(ctx, values);  // its timer fires at 5, but it has no session to save
  CHECK(steps_of(log) == Steps{0, 1});
  CHECK(!ctx.stop_requested());
  session.run();  // the original still saves
  CHECK(steps_of(log) == Steps{0, 1, 2});
}

TEST_CASE("CheckpointSaverHook: a step where it does not fire allocates nothing",
          "[checkpoint][hook][alloc]") {
  // The saver allocates when it saves; between saves the hook only compares the step with the
  // timer's next trigger. Both the hook given directly and the one SessionOptions installs.
  SaveLog log;
  Model m;
  MonitoredTrainingSession direct(
      m.train_op(), ConstInput{}, hooks(Hook<>("D", {.save_steps = 1000}, FakeSaver{&log})));
  direct.run();  // first run outside the scope
  std::size_t news = 0, eigen = 0;
  {
    hookfuse_test::NoAllocScope scope;
    for (int i = 0; i < 20; ++i) direct.run();
    news = scope.news();
    eigen = scope.eigen_mallocs();
  }
  CHECK(news == 0);
  CHECK(eigen == 0);

  Model m2;
  MonitoredTrainingSession installed(
      m2.train_op(), ConstInput{},
      SessionOptions<FakeSaver, SteadyClock, NullLogger>{.checkpoint_dir = "D",
                                                         .save_checkpoint_steps = 1000,
                                                         .save_summaries_steps = 0,
                                                         .log_step_count_steps = 0,
                                                         .saver = FakeSaver{&log}},
      hooks(), chief_only_hooks(StopAtStepHook({.num_steps = 500})));
  installed.run();
  {
    hookfuse_test::NoAllocScope scope;
    for (int i = 0; i < 20; ++i) installed.run();
    news = scope.news();
    eigen = scope.eigen_mallocs();
  }
  CHECK(news == 0);
  CHECK(eigen == 0);
  CHECK(steps_of(log) == Steps{0, 0});  // one save at each creation, none since
}
