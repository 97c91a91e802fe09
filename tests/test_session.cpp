// tests/test_session.cpp: MonitoredTrainingSession's hook protocol against TensorFlow 1.x's
// MonitoredSession (tf.compat.v1.train.MonitoredTrainingSession and SessionRunHook):
// the order of events, closing, end of input, exceptions, fetches and stop requests; the rules
// of TensorFlow's _HookedSession.run (no run after a stop or close), the caller's fetches
// (sess.run([train_op, loss])) and original_args, and hooks the caller keeps (std::ref).
//
// The model is a one-weight linear regression trained with learning rate 0 (so nothing about the
// numbers changes between runs except the input): run i (from 1) feeds x = i and y = 2 i.
#include <boost/hana/at.hpp>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <hookfuse/hookfuse.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__unix__)
#include <unistd.h>
#endif

#include "lr_model.hpp"

using namespace hookfuse;
namespace hana = boost::hana;

namespace {

using Events = std::vector<std::string>;

/// Run i feeds x = i, y = 2 i. `limit` ends the data after that many batches (-1: never);
/// `throw_at` makes the that-many-th call of next() throw.
struct CountingInput {
  float x = 0.0f;
  float y = 0.0f;
  std::int64_t i = 0;
  std::int64_t limit = -1;
  std::int64_t throw_at = -1;
  std::int64_t calls = 0;
  bool next() {
    if (++calls == throw_at) throw std::runtime_error("input failed");
    if (limit >= 0 && i >= limit) return false;
    ++i;
    x = static_cast<float>(i);
    y = 2.0f * static_cast<float>(i);
    return true;
  }
  Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

using Model = hookfuse_test::LrModel;

/// Records every event it sees, as "<name>.<event>", into a log owned by the test. Optionally
/// throws from after_run in a given run, or requests a stop in before_run/after_run of a run.
struct RecordingHook {
  std::string name;
  Events* events;
  int runs = 0;  // before_run calls
  int throw_in_after_run = -1;
  int stop_in_before_run = -1;
  int stop_in_after_run = -1;

  void begin() { events->push_back(name + ".begin"); }
  template <class Session>
  void after_create_session(Session& session) {
    events->push_back(name + ".after_create_session@" + std::to_string(session.global_step()));
  }
  SessionRunArgs<> before_run(SessionRunContext& ctx) {
    ++runs;
    events->push_back(name + ".before_run");
    if (runs == stop_in_before_run) ctx.request_stop();
    return {};
  }
  void after_run(SessionRunContext& ctx, const SessionRunValues<>&) {
    events->push_back(name + ".after_run");
    if (runs == throw_in_after_run) throw std::runtime_error("hook failed");
    if (runs == stop_in_after_run) ctx.request_stop();
  }
  template <class Session>
  void end(Session&) {
    events->push_back(name + ".end");
  }
};

template <class Session>
int run_until_stop(Session& session, int max_runs = 10000) {
  int runs = 0;
  while (!session.should_stop() && runs < max_runs) {
    session.run();
    ++runs;
  }
  return runs;
}

int count(const Events& events, const std::string& e) {
  int n = 0;
  for (const auto& x : events) n += (x == e);
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("Session: the order of events across two hooks", "[session]") {
  Model m(7);
  Events events;
  {
    MonitoredTrainingSession session(
        m.train_op(), CountingInput{},
        hooks(RecordingHook{"A", &events}, RecordingHook{"B", &events}));
    CHECK(events ==
          Events{"A.begin", "B.begin", "A.after_create_session@7", "B.after_create_session@7"});
    events.clear();

    session.run();
    session.run();
    CHECK(events == Events{"A.before_run", "B.before_run", "A.after_run", "B.after_run",
                           "A.before_run", "B.before_run", "A.after_run", "B.after_run"});
    events.clear();

    CHECK_FALSE(session.should_stop());
    session.close();
    CHECK(events == Events{"A.end", "B.end"});
    CHECK(session.should_stop());
    session.close();  // a second close() does nothing
    CHECK(events == Events{"A.end", "B.end"});
  }
  // The destructor does not call end() again.
  CHECK(events == Events{"A.end", "B.end"});
}

TEST_CASE("Session: the destructor closes a session that was not closed", "[session]") {
  Model m;
  Events events;
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(RecordingHook{"A", &events}));
    session.run();
    events.clear();
  }
  CHECK(events == Events{"A.end"});
}

TEST_CASE("Session: a session with no runs still begins and ends", "[session]") {
  Model m;
  Events events;
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(RecordingHook{"A", &events}));
  }
  CHECK(events == Events{"A.begin", "A.after_create_session@0", "A.end"});
}

TEST_CASE("Session: hooks are copied into the session and reachable through hooks()", "[session]") {
  Model m;
  Events events;
  RecordingHook outside{"A", &events};
  MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(outside));
  session.run();
  session.run();
  CHECK(hana::at_c<0>(session.hooks()).runs == 2);
  CHECK(outside.runs == 0);
}

TEST_CASE("Session: end of input stops cleanly and end() is still called", "[session]") {
  Model m;
  Events events;
  MonitoredTrainingSession session(m.train_op(), CountingInput{.limit = 3},
                                   hooks(RecordingHook{"A", &events}, RecordingHook{"B", &events}));
  events.clear();
  int runs = 0;
  CHECK_NOTHROW(runs = run_until_stop(session));
  CHECK(runs == 4);  // three steps, then a run that finds no data
  CHECK(session.should_stop());
  CHECK(session.global_step() == 3);  // no step in the fourth run
  // The fourth run: before_run was called, after_run was not (TensorFlow: OutOfRangeError is
  // raised by session.run, between the two).
  CHECK(count(events, "A.before_run") == 4);
  CHECK(count(events, "A.after_run") == 3);
  CHECK(events.back() == "B.before_run");
  session.close();
  CHECK(count(events, "A.end") == 1);
  CHECK(count(events, "B.end") == 1);
  CHECK(events.back() == "B.end");
}

TEST_CASE("Session: an exception from after_run propagates, end() is never called", "[session]") {
  Model m;
  Events events;
  {
    RecordingHook thrower{"A", &events};
    thrower.throw_in_after_run = 2;
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(thrower, RecordingHook{"B", &events}));
    session.run();
    events.clear();
    CHECK_THROWS_WITH(session.run(), "hook failed");
    // A threw in its after_run, so B's after_run of that run did not happen.
    CHECK(events == Events{"A.before_run", "B.before_run", "A.after_run"});
    session.close();
    CHECK(count(events, "A.end") == 0);
    CHECK(count(events, "B.end") == 0);
  }
  // Nor by the destructor.
  CHECK(count(events, "A.end") == 0);
  CHECK(count(events, "B.end") == 0);
}

TEST_CASE("Session: an exception from after_run, without close(): the destructor skips end()",
          "[session]") {
  Model m;
  Events events;
  {
    RecordingHook thrower{"A", &events};
    thrower.throw_in_after_run = 1;
    MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(thrower));
    CHECK_THROWS_AS(session.run(), std::runtime_error);
  }
  CHECK(count(events, "A.end") == 0);
}

TEST_CASE("Session: an exception from the input's next() propagates, end() is never called",
          "[session]") {
  Model m;
  Events events;
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{.throw_at = 3},
                                     hooks(RecordingHook{"A", &events}));
    session.run();
    session.run();
    events.clear();
    CHECK_THROWS_WITH(session.run(), "input failed");
    CHECK(events == Events{"A.before_run"});
    CHECK(session.global_step() == 2);
  }
  CHECK(count(events, "A.end") == 0);
}

// ---------------------------------------------------------------------------------------------

namespace {
/// Fetches "probe" only in even runs (TensorFlow: before_run returns None otherwise) and records
/// what after_run received.
struct EvenRunProbeHook {
  int runs = 0;
  std::vector<const void*>* data;  // values.get<"probe">().data per run
  std::vector<double>* values;     // the probe's value per run (NaN-free: -1 when not fetched)
  SessionRunArgs<"probe"> before_run(SessionRunContext&) {
    ++runs;
    return runs % 2 == 0 ? SessionRunArgs<"probe">{} : SessionRunArgs<"probe">::none();
  }
  void after_run(SessionRunContext&, const SessionRunValues<"probe">& v) {
    const TensorValue& t = v.get<"probe">();
    data->push_back(t.data);
    values->push_back(t.data != nullptr ? t.item() : -1.0);
  }
};
}  // namespace

TEST_CASE("Session: a fetch-only tensor is computed only in runs where a hook requests it",
          "[session]") {
  Model m;
  std::vector<const void*> data;
  std::vector<double> values;
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(EvenRunProbeHook{0, &data, &values}), m.probe());
  // The probe's buffer, as the graph holds it after each run (sum(x) = run index when computed).
  std::vector<float> held;
  for (int run = 1; run <= 6; ++run) {
    session.run();
    held.push_back(session.graph().value<"probe">()(0, 0));
  }
  // after_run gets the current batch's value when requested, and nothing otherwise.
  CHECK(values == std::vector<double>{-1, 2, -1, 4, -1, 6});
  CHECK(data[0] == nullptr);
  CHECK(data[1] != nullptr);
  // In odd runs the probe was not recomputed: the graph still holds the previous even run's
  // value (run 1: never computed, the zero-initialised buffer).
  CHECK(held == std::vector<float>{0, 2, 2, 4, 4, 6});
}

TEST_CASE("Session: a fetch-only tensor nobody requests is never computed", "[session]") {
  Model m;
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(StopAtStepHook({.num_steps = 5})), m.probe());
  run_until_stop(session);
  CHECK(session.graph().value<"probe">()(0, 0) == 0.0f);
  // Fetching it explicitly (as in end()) computes it for the last batch.
  CHECK(fetch<"probe">(session).item() == 5.0);
  CHECK(session.fetch<"loss">().item() == 100.0);  // (2 * 5 - 0)^2
  CHECK(fetch<"global_step">(session).item_int() == 5);
}

// ---------------------------------------------------------------------------------------------

namespace {
struct GlobalStepHook {
  std::vector<std::int64_t>* before;   // ctx.global_step() in before_run
  std::vector<std::int64_t>* fetched;  // run_values "global_step"
  std::vector<std::int64_t>* after;    // ctx.global_step() in after_run
  std::vector<double>* losses;         // run_values "loss"
  SessionRunArgs<"global_step", "loss"> before_run(SessionRunContext& ctx) {
    before->push_back(ctx.global_step());
    return {};
  }
  void after_run(SessionRunContext& ctx, const SessionRunValues<"global_step", "loss">& v) {
    CHECK(v.get<"global_step">().dtype == DType::int64);
    fetched->push_back(v.get<"global_step">().item_int());
    after->push_back(ctx.global_step());
    losses->push_back(v.get<"loss">().item());
  }
};
}  // namespace

TEST_CASE("Session: run values hold global_step before the increment, the context after",
          "[session]") {
  Model m(5);
  std::vector<std::int64_t> before, fetched, after;
  std::vector<double> losses;
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(GlobalStepHook{&before, &fetched, &after, &losses}));
  session.run();
  session.run();
  session.run();
  CHECK(before == std::vector<std::int64_t>{5, 6, 7});
  CHECK(fetched == std::vector<std::int64_t>{5, 6, 7});
  CHECK(after == std::vector<std::int64_t>{6, 7, 8});
  CHECK(losses == std::vector<double>{4, 16, 36});  // (2 i)^2 with W = b = 0
  CHECK(session.global_step() == 8);
}

TEST_CASE("Session: the loss fetched is computed before the variables are updated", "[session]") {
  // Learning rate 0.1 on one example x = 1, y = 2 from W = b = 0: the loss of the first run is 4,
  // computed with the variables before the update (TensorFlow fetches in the same session.run as
  // the train op).
  Model m;
  std::vector<std::int64_t> before, fetched, after;
  std::vector<double> losses;
  MonitoredTrainingSession session(GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs),
                                   CountingInput{},
                                   hooks(GlobalStepHook{&before, &fetched, &after, &losses}));
  session.run();
  REQUIRE(losses.size() == 1);
  CHECK(losses[0] == 4.0);
  // d loss / d W = -2 (y - (xW + b)) x = -4; W = 0 - 0.1 * -4 = 0.4. Same for b.
  CHECK(m.W.value(0, 0) == Approx(0.4f));
  CHECK(m.b.value(0, 0) == Approx(0.4f));
}

// ---------------------------------------------------------------------------------------------

TEST_CASE("Session: request_stop in after_run ends training after that run", "[session]") {
  Model m;
  Events events;
  RecordingHook stopper{"A", &events};
  stopper.stop_in_after_run = 3;
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(stopper, RecordingHook{"B", &events}));
  events.clear();
  CHECK(run_until_stop(session) == 3);
  CHECK(session.global_step() == 3);
  // The hooks after the stopper still get their after_run in that run.
  CHECK(count(events, "B.after_run") == 3);
  session.close();
  CHECK(count(events, "A.end") == 1);
  CHECK(count(events, "B.end") == 1);
}

TEST_CASE("Session: request_stop in before_run still runs that step", "[session]") {
  Model m;
  Events events;
  RecordingHook stopper{"A", &events};
  stopper.stop_in_before_run = 2;
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(stopper, RecordingHook{"B", &events}));
  events.clear();
  CHECK(run_until_stop(session) == 2);
  CHECK(session.global_step() == 2);
  CHECK(count(events, "A.after_run") == 2);
  CHECK(count(events, "B.after_run") == 2);
}

// TensorFlow's _HookedSession.run starts with
//   if self.should_stop(): raise RuntimeError('Run called even after should_stop requested.')
// so no hook event happens in such a run and nothing is trained.
TEST_CASE("Session: run() after a stop request throws RuntimeError, nothing runs", "[session]") {
  Model m;
  Events events;
  RecordingHook stopper{"A", &events};
  stopper.stop_in_after_run = 1;
  MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(stopper));
  CHECK(session.run());
  CHECK(session.should_stop());
  events.clear();
  CHECK_THROWS_AS(session.run(), RuntimeError);
  CHECK_THROWS_AS(session.run(), std::runtime_error);  // RuntimeError is a std::runtime_error
  CHECK_THROWS_WITH(session.run(), "Run called even after should_stop requested.");
  CHECK_THROWS_WITH(session.run<"loss">(), "Run called even after should_stop requested.");
  CHECK(events.empty());  // no before_run in the refused runs
  CHECK(session.global_step() == 1);
  CHECK(session.input().i == 1);  // no batch was taken
  session.close();
  CHECK(events == Events{"A.end"});  // the refusal does not cost the hooks their end()
}

TEST_CASE("Session: run() after the input ran out throws RuntimeError", "[session]") {
  Model m;
  MonitoredTrainingSession session(m.train_op(), CountingInput{.limit = 1}, hooks());
  CHECK(session.run());
  CHECK_FALSE(session.run());  // no data: no step, should_stop() becomes true
  CHECK(session.should_stop());
  CHECK_THROWS_WITH(session.run(), "Run called even after should_stop requested.");
  CHECK(session.global_step() == 1);
}

TEST_CASE("Session: run() after close() throws RuntimeError with TensorFlow's message",
          "[session]") {
  Model m;
  Events events;
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(RecordingHook{"A", &events}));
  session.run();
  session.close();
  events.clear();
  CHECK_THROWS_AS(session.run(), RuntimeError);
  CHECK_THROWS_WITH(session.run(), "Run called even after should_stop requested.");
  CHECK(events.empty());
  CHECK(session.global_step() == 1);
}

// ---------------------------------------------------------------------------------------------

namespace {
/// A hook whose end() throws.
struct ThrowingEnd {
  int* ends;
  template <class S>
  void end(S&) {
    ++*ends;
    throw std::runtime_error("end failed");
  }
};

/// What the process writes to stderr (fd 2) while f runs; "" where fds cannot be redirected.
template <class F>
std::string stderr_of(F&& f) {
#if defined(__unix__)
  std::fflush(stderr);
  std::FILE* tmp = std::tmpfile();
  REQUIRE(tmp != nullptr);
  const int saved = dup(2);
  dup2(fileno(tmp), 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string text;
  std::rewind(tmp);
  for (int c = std::fgetc(tmp); c != EOF; c = std::fgetc(tmp)) text.push_back(static_cast<char>(c));
  std::fclose(tmp);
  return text;
#else
  f();
  return {};
#endif
}
}  // namespace

TEST_CASE("Session: the destructor does not call end() while an exception unwinds", "[session]") {
  // TensorFlow's MonitoredSession.__exit__ closes without calling hooks' end() when the block
  // exits with an exception. An end() that threw here would terminate the program.
  Model m;
  Events events;
  int ends = 0;
  std::string caught;
  try {
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(RecordingHook{"A", &events}, ThrowingEnd{&ends}));
    session.run();
    throw std::logic_error("the caller's own failure");
  } catch (const std::logic_error& e) {
    caught = e.what();
  }
  CHECK(caught == "the caller's own failure");
  CHECK(count(events, "A.end") == 0);
  CHECK(ends == 0);
}

TEST_CASE("Session: an exception from end() in the destructor is logged at ERROR, not thrown",
          "[session]") {
  Model m;
  int ends = 0;
  const std::string err = stderr_of([&] {
    CHECK_NOTHROW([&] {
      MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(ThrowingEnd{&ends}));
      session.run();
    }());
  });
  CHECK(ends == 1);
#if defined(__unix__)
  CHECK_THAT(err, Catch::Matchers::StartsWith("ERROR:hookfuse:"));
  CHECK_THAT(err, Catch::Matchers::Contains("end failed"));
#endif
}

TEST_CASE("Session: close() propagates an exception from a hook's end()", "[session]") {
  Model m;
  Events events;
  int ends = 0;
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(ThrowingEnd{&ends}, RecordingHook{"B", &events}));
    session.run();
    CHECK_THROWS_WITH(session.close(), "end failed");
    CHECK(ends == 1);
    // The hooks after the thrower are still ended (TensorFlow's close() would skip them).
    CHECK(count(events, "B.end") == 1);
    CHECK_NOTHROW(session.close());      // closed once: nothing more
  }
  CHECK(ends == 1);  // nor by the destructor
}

// ---------------------------------------------------------------------------------------------

namespace {
/// Records what the caller asked the run for (run_context.original_args) and the loss it saw.
struct OriginalArgsHook {
  std::vector<std::vector<std::string>>* seen;  // original_args().fetches per before_run
  std::vector<std::size_t>* in_after_run;       // its size again in after_run
  std::vector<double>* losses;
  SessionRunArgs<"loss"> before_run(SessionRunContext& ctx) {
    std::vector<std::string> names;
    for (std::string_view n : ctx.original_args().fetches) names.emplace_back(n);
    seen->push_back(names);
    return {};
  }
  void after_run(SessionRunContext& ctx, const SessionRunValues<"loss">& v) {
    in_after_run->push_back(ctx.original_args().fetches.size());
    losses->push_back(v.get<"loss">().item());
  }
};
}  // namespace

TEST_CASE("Session: run<\"loss\", ...>() returns this step's values, as hooks see them",
          "[session]") {
  // Learning rate 0.1, W = b = 0. Run 1: x = 1, y = 2, loss (2 - 0)^2 = 4 before the update;
  // W = b = 0.4 after it. Run 2: x = 2, y = 4: prediction 0.4 * 2 + 0.4 = 1.2, loss 2.8^2 = 7.84.
  Model m;
  std::vector<std::vector<std::string>> seen;
  std::vector<std::size_t> in_after_run;
  std::vector<double> hook_losses;
  MonitoredTrainingSession session(GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs),
                                   CountingInput{.limit = 2},
                                   hooks(OriginalArgsHook{&seen, &in_after_run, &hook_losses}),
                                   m.accuracy());
  auto first = session.run<"loss", "global_step", "accuracy", "W">();
  REQUIRE(first.has_value());
  CHECK(first->get<"loss">().item() == 4.0);
  CHECK(first->get<"global_step">().item_int() == 0);  // before this step's increment
  CHECK(first->get<"accuracy">().item() == 1.0);       // mean(x) of the batch, x = 1
  CHECK(first->get<"W">().item() == Approx(0.4));      // a variable: a view, already updated
  auto second = session.run<"loss">();
  REQUIRE(second.has_value());
  CHECK(second->get<"loss">().item() == Approx(7.84).epsilon(1e-6));
  CHECK(hook_losses.size() == 2);
  CHECK(hook_losses[0] == 4.0);
  CHECK(hook_losses[1] == second->get<"loss">().item());
  // The hook saw the caller's fetches, by name and in order.
  CHECK(seen == std::vector<std::vector<std::string>>{{"loss", "global_step", "accuracy", "W"},
                                                       {"loss"}});
  CHECK(in_after_run == std::vector<std::size_t>{4, 1});
  // Out of data: no step, no values (as run() returning false).
  CHECK_FALSE(session.run<"loss">().has_value());
  CHECK(session.should_stop());
}

TEST_CASE("Session: a plain run() shows hooks no original fetches", "[session]") {
  Model m;
  std::vector<std::vector<std::string>> seen;
  std::vector<std::size_t> in_after_run;
  std::vector<double> losses;
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(OriginalArgsHook{&seen, &in_after_run, &losses}));
  CHECK(session.run());
  CHECK(seen == std::vector<std::vector<std::string>>{{}});
  CHECK(in_after_run == std::vector<std::size_t>{0});
}

// ---------------------------------------------------------------------------------------------

namespace {
/// Counts the events it receives; kept by the test and passed as std::ref.
struct CountingHook {
  int begins = 0;
  int creates = 0;
  int before_runs = 0;
  int after_runs = 0;
  int ends = 0;
  void begin() { ++begins; }
  template <class S>
  void after_create_session(S&) {
    ++creates;
  }
  SessionRunArgs<"loss"> before_run(SessionRunContext&) {
    ++before_runs;
    return {};
  }
  void after_run(SessionRunContext&, const SessionRunValues<"loss">&) { ++after_runs; }
  template <class S>
  void end(S&) {
    ++ends;
  }
};
}  // namespace

TEST_CASE("Session: hooks(std::ref(h)) calls every event on the caller's own hook", "[session]") {
  Model m;
  CountingHook h;
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(std::ref(h), StopAtStepHook({.num_steps = 5})));
    CHECK(h.begins == 1);
    CHECK(h.creates == 1);
    CHECK(&session.hook<0>() == &h);  // the caller's object, not a copy
    CHECK(&session.hook<CountingHook>() == &h);
    CHECK(run_until_stop(session) == 5);
    session.close();
  }
  CHECK(h.before_runs == 5);
  CHECK(h.after_runs == 5);
  CHECK(h.ends == 1);
}

TEST_CASE("Session: hook<I>() and hook<H>() reach the stored copies", "[session]") {
  Model m;
  Events events;
  RecordingHook outside{"A", &events};
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(outside, StopAtStepHook({.num_steps = 2})));
  session.run();
  CHECK(session.hook<0>().runs == 1);
  CHECK(session.hook<RecordingHook>().runs == 1);
  CHECK(&session.hook<RecordingHook>() == &hana::at_c<0>(session.hooks()));
  CHECK(&session.hook<StopAtStepHook>() == &hana::at_c<1>(session.hooks()));
  CHECK(outside.runs == 0);  // copied in
}

// ---------------------------------------------------------------------------------------------

namespace {
struct NoEvents {};  // declares nothing: not a hook (a compile error in hooks(...))
struct OnlyEnd {
  int* ends;
  template <class S>
  void end(S&) {
    ++*ends;
  }
};
struct ConstBeforeRun {  // a const before_run is callable as the protocol calls it
  SessionRunArgs<"loss"> before_run(SessionRunContext&) const { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"loss">&) const {}
};
}  // namespace

static_assert(!DeclaresBegin<NoEvents> && !DeclaresBeforeRun<NoEvents> && !DeclaresEnd<NoEvents>);
static_assert(DeclaresEnd<OnlyEnd> && !DeclaresBeforeRun<OnlyEnd>);
static_assert(DeclaresBeforeRun<ConstBeforeRun> && HandlesBeforeRun<ConstBeforeRun>);
static_assert(std::is_same_v<run_args_t<ConstBeforeRun>, SessionRunArgs<"loss">>);
static_assert(std::is_same_v<run_values_t<NoEvents>, SessionRunValues<>>);
static_assert(!DeclaresAnyEvent<NoEvents> && DeclaresAnyEvent<OnlyEnd>);
static_assert(std::is_same_v<hook_t<std::reference_wrapper<OnlyEnd>>, OnlyEnd>);
// A reference_wrapper itself declares no event: hooks(std::ref(h)) works only because the
// session unwraps it (hook_t, hook_ref).
static_assert(!DeclaresAnyEvent<std::reference_wrapper<OnlyEnd>>);

TEST_CASE("Session: hooks may declare any subset of the events", "[session]") {
  Model m;
  int ends = 0;
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                     hooks(OnlyEnd{&ends}, ConstBeforeRun{}));
    session.run();
    CHECK(ends == 0);
  }
  CHECK(ends == 1);
}

TEST_CASE("Session: a session without hooks", "[session]") {
  Model m;
  MonitoredTrainingSession session(m.train_op(), CountingInput{.limit = 4}, hooks());
  CHECK(run_until_stop(session) == 5);
  CHECK(session.global_step() == 4);
}

namespace {
/// Busy every third run of its own count (0, 3, 6, ...: runs 1, 4, 7, ...), where it fetches
/// "loss"; says so through idle_runs() (SkipsIdleRuns) and records what the session tells it.
struct EveryThird {
  Events* events;
  std::int64_t count = 0;  // runs received or skipped
  SessionRunArgs<"loss"> before_run(SessionRunContext&) {
    events->push_back("before_run#" + std::to_string(count));
    return {count % 3 == 0};
  }
  void after_run(SessionRunContext&, const SessionRunValues<"loss">& v) {
    if (count % 3 == 0) events->push_back("loss " + std::to_string(v.get<"loss">().item()));
    ++count;
  }
  std::int64_t idle_runs() const { return (3 - count % 3) % 3; }
  void skip_runs(std::int64_t n) {
    events->push_back("skip_runs " + std::to_string(n));
    count += n;
  }
  template <class S>
  void end(S&) {
    events->push_back("end#" + std::to_string(count));
  }
};
}  // namespace

TEST_CASE("Session: hooks that say when they are idle are not called in runs where all are idle",
          "[session][idle]") {
  Events events;
  Model m;
  CountingInput input;
  input.limit = 10;
  MonitoredTrainingSession s(m.train_op(), input, hooks(EveryThird{&events}));
  static_assert(decltype(s)::skips_idle_runs);
  for (int i = 0; i < 7; ++i) s.run();  // called in runs 1, 4, 7; told of 2 + 2 runs sat out
  // loss = y^2 = (2 i)^2 with W = b = 0: 4, 64, 196 in runs 1, 4, 7.
  CHECK(events == Events{"before_run#0", "loss 4.000000", "skip_runs 2", "before_run#3",
                         "loss 64.000000", "skip_runs 2", "before_run#6", "loss 196.000000"});
  events.clear();
  // Run 8 is idle: the caller's fetch is served all the same.
  const auto v = s.run<"loss">();
  REQUIRE(v.has_value());
  CHECK(v->get<"loss">().item() == 256.0);  // (2 * 8)^2
  CHECK(events.empty());
  CHECK(s.hook<EveryThird>().count == 8);  // told of run 8 first; the next run asks it again
  s.run();                                 // run 9: called (count 8, no fetch)
  s.run();                                 // run 10: busy
  CHECK_FALSE(s.run());  // the input ran out in an idle run: not counted as sat out
  s.close();
  CHECK(events == Events{"skip_runs 1", "before_run#8", "before_run#9", "loss 400.000000",
                         "end#10"});
  CHECK(m.gs.value == 10);
}

TEST_CASE("Session: a hook the caller keeps (std::ref) or one with checkpoint state is called "
          "every run",
          "[session][idle]") {
  Events events;
  Model m;
  EveryThird kept{&events};
  using ByRef = decltype(MonitoredTrainingSession(m.train_op(), CountingInput{},
                                                  hooks(std::ref(kept))));
  static_assert(!ByRef::skips_idle_runs);
  using CondByRef = decltype(MonitoredTrainingSession(
      m.train_op(), CountingInput{}, hooks(ConditionalHook(std::ref(kept), true))));
  static_assert(CondByRef::skips_idle_runs);  // a slot that never says a run is idle when present
  CountingInput input;
  input.limit = 4;
  MonitoredTrainingSession s(m.train_op(), input,
                             hooks(ConditionalHook(std::ref(kept), true)));
  while (!s.should_stop()) s.run();
  CHECK(kept.count == 4);  // called in every run, nothing to sync
  // Run 5 ends the input: its before_run, no after_run (TensorFlow's OutOfRangeError).
  CHECK(events == Events{"before_run#0", "loss 4.000000", "before_run#1", "before_run#2",
                         "before_run#3", "loss 64.000000", "before_run#4"});
}

TEST_CASE("Session: the idle fast path only when every hook can sit out runs", "[session][idle]") {
  Events events;
  Model m;
  using WithIdle = decltype(MonitoredTrainingSession(m.train_op(), CountingInput{},
                                                     hooks(EveryThird{&events},
                                                           LoggingTensorHook<"loss">(
                                                               {.every_n_iter = 5}))));
  static_assert(WithIdle::skips_idle_runs);
  using WithNan = decltype(MonitoredTrainingSession(
      m.train_op(), CountingInput{}, hooks(EveryThird{&events}, NanTensorHook<"loss">())));
  static_assert(!WithNan::skips_idle_runs);  // NanTensorHook checks the loss every run
  using WithRecording = decltype(MonitoredTrainingSession(
      m.train_op(), CountingInput{}, hooks(RecordingHook{"a", &events})));
  static_assert(!WithRecording::skips_idle_runs);
  using NoHooks = decltype(MonitoredTrainingSession(m.train_op(), CountingInput{}, hooks()));
  static_assert(!NoHooks::skips_idle_runs);
  // An every_n_secs LoggingTensorHook is never idle (the clock decides each run), an at_end
  // one always is.
  CHECK(LoggingTensorHook<"loss">({.every_n_secs = 1.0}).idle_runs() == 0);
  CHECK(LoggingTensorHook<"loss">({.at_end = true}).idle_runs() ==
        std::numeric_limits<std::int64_t>::max());
  // A ConditionalHook forwards; an empty one is idle for good.
  CHECK(ConditionalHook(EveryThird{&events}, false).idle_runs() ==
        std::numeric_limits<std::int64_t>::max());
  CHECK(ConditionalHook(EveryThird{&events}, true).idle_runs() == 0);
}
