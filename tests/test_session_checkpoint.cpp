// tests/test_session_checkpoint.cpp: MonitoredTrainingSession's checkpoint options (TensorFlow's
// checkpoint_dir, save_checkpoint_steps / _secs, is_chief, chief_only_hooks): which variables a
// checkpoint holds and under which TensorFlow shapes, the restore at creation, the saves of the
// CheckpointSaverHook the session installs, and the order of the hooks.
//
// The saver is a fake (FakeSaver): an in-memory "directory" that records every save (step and
// prefix) and copies the variables' bytes, and restores the latest of them. Expected step lists
// come from TensorFlow's code (tensorflow/python/training/basic_session_run_hooks.py,
// CheckpointSaverHook; monitored_session.py, MonitoredTrainingSession), worked out by hand in
// each test's comment.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <hookfuse/hookfuse.hpp>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "capturing_logger.hpp"
#include "checkpoint_fixtures.hpp"
#include "error_of.hpp"
#include "lr_model.hpp"

using namespace hookfuse;
using hookfuse_test::error_of;

namespace {

// --- test doubles ----------------------------------------------------------------------------

/// What the fake savers of a test share: the saved checkpoints (prefix -> variable -> bytes),
/// the latest prefix, every save as (global step, save_path given), and an event log that the
/// hooks of the order tests write to as well.
struct FakeDir {
  std::map<std::string, std::map<std::string, std::vector<unsigned char>>> checkpoints;
  std::optional<std::string> latest;
  std::vector<std::pair<std::int64_t, std::string>> saves;
  std::vector<std::string> restored;  // prefixes restored
  int restore_calls = 0;
  std::vector<std::string> events;
};

struct FakeSaver {
  FakeDir* dir;
  std::string save(VariableList vars, std::string_view save_path, std::int64_t global_step) {
    const std::string prefix = std::string(save_path) + "-" + std::to_string(global_step);
    auto& files = dir->checkpoints[prefix];
    for (const auto& v : vars) {
      const auto* p = static_cast<const unsigned char*>(v.data);
      const std::size_t bytes = static_cast<std::size_t>(v.num_elements()) *
                                (v.dtype == DType::float32 || v.dtype == DType::int32 ? 4u : 8u);
      files[std::string(v.name)] = std::vector<unsigned char>(p, p + bytes);
    }
    dir->latest = prefix;
    dir->saves.emplace_back(global_step, std::string(save_path));
    dir->events.push_back("save " + std::to_string(global_step));
    return prefix;
  }
  std::optional<std::string> restore_latest(VariableList vars, std::string_view) {
    ++dir->restore_calls;
    if (!dir->latest) return std::nullopt;
    const auto& files = dir->checkpoints.at(*dir->latest);
    for (const auto& v : vars) {
      const auto& bytes = files.at(std::string(v.name));
      std::memcpy(v.data, bytes.data(), bytes.size());
    }
    dir->restored.push_back(*dir->latest);
    dir->events.push_back("restore " + *dir->latest);
    return dir->latest;
  }
};
static_assert(CheckpointSaver<FakeSaver>);

std::vector<std::int64_t> saved_steps(const FakeDir& d) {
  std::vector<std::int64_t> out;
  for (const auto& s : d.saves) out.push_back(s.first);
  return out;
}

using hookfuse_test::ConstInput;

/// Records its events, with the global step where it knows it, into the shared event log.
struct RecordingHook {
  std::vector<std::string>* events;
  std::string name;
  void begin() { events->push_back(name + " begin"); }
  template <class S>
  void after_create_session(S& s) {
    events->push_back(name + " after_create_session " + std::to_string(s.global_step()));
  }
  template <class S>
  void end(S& s) {
    events->push_back(name + " end " + std::to_string(s.global_step()));
  }
};

using hookfuse_test::CapturingLogger;
using hookfuse_test::Line;
using hookfuse_test::Lines;

using hookfuse_test::run_until_stop;

using Model = hookfuse_test::LrModel;
using Steps = std::vector<std::int64_t>;

}  // namespace

// =============================================================================================
// The variables a checkpoint holds
// =============================================================================================

TEST_CASE("Variables: a Dense layer's kernel is TF rank 2 and its bias rank 1",
          "[checkpoint][variables]") {
  using D = nn::Dense<"dense", float, 3, 4>;
  STATIC_REQUIRE(decltype(std::declval<D&>().kernel)::tf_rank == 2);
  STATIC_REQUIRE(decltype(std::declval<D&>().bias)::tf_rank == 1);
  STATIC_REQUIRE(Variable<"w", double, 2, 3>::tf_rank == 2);  // the default
  STATIC_REQUIRE(Variable<"s", double, 1, 1, 0>::tf_rank == 0);
}

TEST_CASE("Variables: a two-Dense model's checkpoint list, names, dtypes and TensorFlow shapes",
          "[checkpoint][variables]") {
  // The keys and shapes tf.compat.v1.layers.dense would give: kernel [in, units], bias [units]
  // (rank 1, although kept as a [1, units] row), global_step int64 of shape [] (rank 0). The
  // extra metric reads a third variable, "probe/w", outside the loss's graph; it belongs to the
  // model, so it is saved too. "hidden/kernel" is used twice (in the loss and in the metric)
  // and listed once.
  Placeholder<"x", float, 3> x;
  Placeholder<"labels", std::int32_t, 1> labels;
  nn::Dense<"hidden", float, 3, 4> hidden;
  nn::Dense<"out", float, 4, 2> out;
  Variable<"probe/w", float, 4, 1> probe_w;
  GlobalStep gs;
  auto h = hidden(x);
  auto logits = named<"logits">(out(relu(h)));
  auto loss = named<"loss">(sparse_softmax_cross_entropy(labels, logits));
  auto metric = named<"metric">(reduce_sum(matmul(matmul(x, hidden.kernel), probe_w)));
  auto train_op = GradientDescentOptimizer(0.1).minimize(loss, gs);
  gs.value = 7;
  MonitoredTrainingSession session(train_op, caller_feeds(2), hooks(), metric);

  const auto vars = session.variables();
  REQUIRE(vars.size() == 6);
  const std::vector<std::string_view> names{"hidden/kernel", "hidden/bias", "out/kernel",
                                            "out/bias", "probe/w", "global_step"};
  const std::vector<std::vector<std::int64_t>> shapes{{3, 4}, {4}, {4, 2}, {2}, {4, 1}, {}};
  for (std::size_t i = 0; i < vars.size(); ++i) {
    INFO("variable " << i);
    CHECK(vars[i].name == names[i]);
    const auto dims = vars[i].shape.dims();
    CHECK(std::vector<std::int64_t>(dims.begin(), dims.end()) == shapes[i]);
    CHECK(vars[i].dtype == (i == 5 ? DType::int64 : DType::float32));
  }
  CHECK(vars[0].num_elements() == 12);
  CHECK(vars[1].num_elements() == 4);
  CHECK(vars[5].num_elements() == 1);  // a scalar: rank 0, one element
  CHECK(vars[0].data == hidden.kernel.value.data());
  CHECK(vars[1].data == hidden.bias.value.data());
  CHECK(vars[4].data == probe_w.value.data());
  CHECK(vars[5].values<std::int64_t>()[0] == 7);

  // Row-major (C order), as a tensor bundle stores [3, 4]: element (1, 2) is the 7th value.
  CHECK(vars[0].values<float>()[1 * 4 + 2] == hidden.kernel.value(1, 2));
  // Writing through the list writes the variable (what a restore does).
  vars[3].values<float>()[1] = 2.5f;
  CHECK(out.bias.value(0, 1) == 2.5f);
  vars[5].values<std::int64_t>()[0] = 120;
  CHECK(session.global_step() == 120);

  const std::string msg = error_of<std::invalid_argument>([&] { (void)vars[0].values<double>(); });
  CHECK(msg == "hookfuse: checkpoint variable 'hidden/kernel' is float32, not float64");
}

TEST_CASE("Variables: graph_variables in tape order, num_variables_v at compile time",
          "[checkpoint][variables]") {
  Model m;
  auto g = bind(1, m.loss());
  STATIC_REQUIRE(num_variables_v<decltype(g)> == 2);
  const auto vars = graph_variables(g);
  CHECK(vars[0].name == "W");
  CHECK(vars[1].name == "b");
  CHECK(vars[0].shape == VariableShape{2, {1, 1}});
}

// =============================================================================================
// The saves of the installed CheckpointSaverHook
// =============================================================================================

TEST_CASE("Session options: save_checkpoint_steps=50, StopAtStepHook(last_step=120) saves at 0, "
          "50, 100 and 120",
          "[checkpoint][session]") {
  // TensorFlow: after_create_session saves at the global step then (0) and starts the timer
  // there. Each after_run gets the stale step s (before the increment) and fires when
  // s + 1 >= last save + 50: the run taking the step from 49 to 50 saves 50, then 100. The
  // StopAtStepHook stops after the run reaching 120; end() saves 120 because it differs from
  // the last saved step (100).
  FakeDir dir;
  Model m;
  {
    MonitoredTrainingSession session(m.train_op(0.01), ConstInput{},
                                     SessionOptions<FakeSaver>{.checkpoint_dir = "D",
                                                               .save_checkpoint_steps = 50,
                                                               .save_summaries_steps = 0,
                                                               .log_step_count_steps = 0,
                                                               .saver = FakeSaver{&dir}},
                                     hooks(StopAtStepHook({.last_step = 120})));
    CHECK(dir.restore_calls == 1);  // the directory was empty: nothing restored
    CHECK(dir.restored.empty());
    CHECK(run_until_stop(session) == 120);
  }
  CHECK(saved_steps(dir) == Steps{0, 50, 100, 120});
  for (const auto& s : dir.saves) CHECK(s.second == "D/model.ckpt");
  CHECK(dir.latest == std::optional<std::string>("D/model.ckpt-120"));
}

TEST_CASE("Session options: a second session restores step 120, StopAtStepHook(num_steps=30) "
          "counts from there, and it saves 120 and 150",
          "[checkpoint][session]") {
  // First run as above: saves 0, 50, 100, 120. Second session on the same directory:
  // ChiefSessionCreator restores model.ckpt-120 (global_step 120 and the weights) before any
  // after_create_session; StopAtStepHook(num_steps=30) then sets last_step = 120 + 30 = 150.
  // CheckpointSaverHook.after_create_session saves "the state at step global_step", that is 120
  // again (TensorFlow does write model.ckpt-120 a second time), and starts its timer at 120: the
  // next timed save would be at 170, after the stop, so end() saves 150 (150 != 120).
  FakeDir dir;
  float w_after_first = 0.0f;
  float b_after_first = 0.0f;
  {
    Model m;
    MonitoredTrainingSession session(m.train_op(0.01), ConstInput{},
                                     SessionOptions<FakeSaver>{.checkpoint_dir = "D",
                                                               .save_checkpoint_steps = 50,
                                                               .save_summaries_steps = 0,
                                                               .log_step_count_steps = 0,
                                                               .saver = FakeSaver{&dir}},
                                     hooks(StopAtStepHook({.last_step = 120})));
    run_until_stop(session);
    w_after_first = m.W.value(0, 0);
    b_after_first = m.b.value(0, 0);
  }
  REQUIRE(w_after_first != 0.0f);  // the first run trained
  dir.saves.clear();

  Model m2;  // starts from W = b = 0, global_step 0
  std::vector<Line> lines;
  MonitoredTrainingSession session(
      m2.train_op(0.0), ConstInput{},  // learning rate 0: the restored weights stay as they are
      SessionOptions<FakeSaver, SteadyClock, CapturingLogger>{.checkpoint_dir = "D",
                                                              .save_checkpoint_steps = 50,
                                                              .save_summaries_steps = 0,
                                                              .log_step_count_steps = 0,
                                                              .saver = FakeSaver{&dir},
                                                              .logger = {&lines}},
      hooks(StopAtStepHook({.num_steps = 30})));
  CHECK(dir.restored == std::vector<std::string>{"D/model.ckpt-120"});
  // TensorFlow's lines: the hook's creation, Saver.restore's, then the save at creation.
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].text == "Create CheckpointSaverHook.");
  CHECK(lines[1].text == "Restoring parameters from D/model.ckpt-120");
  CHECK(lines[1].severity == Severity::info);
  CHECK(lines[2].text == "Saving checkpoints for 120 into D/model.ckpt.");
  CHECK(session.global_step() == 120);
  CHECK(m2.W.value(0, 0) == w_after_first);
  CHECK(m2.b.value(0, 0) == b_after_first);
  CHECK(session.hook<StopAtStepHook>().last_step() == std::optional<std::int64_t>(150));
  CHECK(saved_steps(dir) == Steps{120});  // the save at creation
  CHECK(run_until_stop(session) == 30);
  session.close();
  CHECK(session.global_step() == 150);
  CHECK(saved_steps(dir) == Steps{120, 150});
}

TEST_CASE("Session options: end() does not save again when the last step was just saved",
          "[checkpoint][session]") {
  // last_step = 100 is a multiple of 50: the run reaching 100 saves it, and end() sees
  // last_step == the timer's last triggered step (100), so it does not save.
  FakeDir dir;
  Model m;
  {
    MonitoredTrainingSession session(m.train_op(), ConstInput{},
                                     SessionOptions<FakeSaver>{.checkpoint_dir = "D",
                                                               .save_checkpoint_steps = 50,
                                                               .save_summaries_steps = 0,
                                                               .log_step_count_steps = 0,
                                                               .saver = FakeSaver{&dir}},
                                     hooks(StopAtStepHook({.last_step = 100})));
    run_until_stop(session);
  }
  CHECK(saved_steps(dir) == Steps{0, 50, 100});
}

TEST_CASE("Session options: save_checkpoint_secs with a fake clock", "[checkpoint][session]") {
  // The clock advances 3 s before each batch; the saver hook saves at creation (step 0, t = 0).
  // After run k the global step is k and the time 3k. The timer fires when now >= last save
  // time + 10: run 4 (t = 12 >= 10) saves 4, run 8 (t = 24 >= 22) saves 8; run 10 (t = 30 < 34)
  // does not, and end() saves 10 (10 != 8).
  FakeDir dir;
  FakeClock clock;
  Model m;
  std::vector<Line> lines;
  {
    MonitoredTrainingSession session(
        m.train_op(), ConstInput{&clock, 3.0},
        SessionOptions<FakeSaver, ClockRef<FakeClock>, CapturingLogger>{.checkpoint_dir = "ckpts/",
                                                                        .save_checkpoint_secs = 10,
                                                                        .save_summaries_steps = 0,
                                                                        .log_step_count_steps = 0,
                                                                        .saver = FakeSaver{&dir},
                                                                        .clock = {&clock},
                                                                        .logger = {&lines}},
        hooks(StopAtStepHook({.last_step = 10})));
    run_until_stop(session);
  }
  CHECK(saved_steps(dir) == Steps{0, 4, 8, 10});
  // TensorFlow's log lines (os.path.join: no second '/').
  std::vector<std::string> texts;
  for (const auto& l : lines) {
    CHECK(l.severity == Severity::info);
    texts.push_back(l.text);
  }
  CHECK(texts == std::vector<std::string>{"Create CheckpointSaverHook.",
                                          "Saving checkpoints for 0 into ckpts/model.ckpt.",
                                          "Saving checkpoints for 4 into ckpts/model.ckpt.",
                                          "Saving checkpoints for 8 into ckpts/model.ckpt.",
                                          "Saving checkpoints for 10 into ckpts/model.ckpt."});
}

TEST_CASE("Session options: neither cadence given means every 600 seconds (TensorFlow's default)",
          "[checkpoint][session]") {
  // 100 s per batch: saves at 0 (creation), then at the first run where now >= 600: run 6.
  // StopAtStepHook(last_step = 8): end() saves 8.
  FakeDir dir;
  FakeClock clock;
  Model m;
  {
    MonitoredTrainingSession session(
        m.train_op(), ConstInput{&clock, 100.0},
        SessionOptions<FakeSaver, ClockRef<FakeClock>, NullLogger>{.checkpoint_dir = "D",
                                                                   .save_summaries_steps = 0,
                                                                   .log_step_count_steps = 0,
                                                                   .saver = FakeSaver{&dir},
                                                                   .clock = {&clock}},
        hooks(StopAtStepHook({.last_step = 8})));
    run_until_stop(session);
  }
  CHECK(saved_steps(dir) == Steps{0, 6, 8});
}

TEST_CASE("Session options: both cadences is an error, a non-positive one installs no saver",
          "[checkpoint][session]") {
  FakeDir dir;
  Model m;
  using O = SessionOptions<FakeSaver, SteadyClock, NullLogger>;
  // TensorFlow passes both to CheckpointSaverHook, whose SecondOrStepTimer raises ValueError.
  CHECK_THROWS_AS(MonitoredTrainingSession(m.train_op(), ConstInput{},
                                           O{.checkpoint_dir = "D",
                                             .save_checkpoint_secs = 10,
                                             .save_checkpoint_steps = 5,
                                             .save_summaries_steps = 0,
                                             .log_step_count_steps = 0,
                                             .saver = FakeSaver{&dir}},
                                           hooks()),
                  std::invalid_argument);
  // save_checkpoint_steps = 0 (secs not given): TF installs no CheckpointSaverHook, but the
  // chief still restores from checkpoint_dir.
  {
    MonitoredTrainingSession session(m.train_op(), ConstInput{},
                                     O{.checkpoint_dir = "D",
                                       .save_checkpoint_steps = 0,
                                       .save_summaries_steps = 0,
                                       .log_step_count_steps = 0,
                                       .saver = FakeSaver{&dir}},
                                     hooks(StopAtStepHook({.num_steps = 3})));
    // Slots: StepCounterHook, SummarySaverHook (both off here), CheckpointSaverHook.
    CHECK(!session.hook<2>().has_value());  // the saver hook slot is empty
    run_until_stop(session);
  }
  CHECK(dir.saves.empty());
  CHECK(dir.restore_calls == 1);
}

// =============================================================================================
// Hook order, chief and non-chief
// =============================================================================================

TEST_CASE("Session options: hooks run chief-only first, then the checkpoint saver, then the "
          "user's, the final save comes before a user hook's end()",
          "[checkpoint][session][order]") {
  // monitored_session.py, MonitoredTrainingSession for a chief: all_hooks = chief_only_hooks,
  // then the CheckpointSaverHook it appends, then `hooks`; MonitoredSession calls every event in
  // that list order. The restore (ChiefSessionCreator, in create_session) comes after every
  // begin() and before every after_create_session.
  FakeDir dir;
  {
    Model m;
    MonitoredTrainingSession first(
        m.train_op(), ConstInput{},
        SessionOptions<FakeSaver, SteadyClock, NullLogger>{.checkpoint_dir = "D",
                                                           .save_checkpoint_steps = 50,
                                                           .save_summaries_steps = 0,
                                                           .log_step_count_steps = 0,
                                                           .saver = FakeSaver{&dir}},
        hooks(StopAtStepHook({.last_step = 3})));
    run_until_stop(first);
  }
  dir.events.clear();
  Model m;
  {
    MonitoredTrainingSession session(
        m.train_op(), ConstInput{},
        SessionOptions<FakeSaver, SteadyClock, NullLogger>{.checkpoint_dir = "D",
                                                           .save_checkpoint_steps = 50,
                                                           .save_summaries_steps = 0,
                                                           .log_step_count_steps = 0,
                                                           .saver = FakeSaver{&dir}},
        hooks(RecordingHook{&dir.events, "user"}, StopAtStepHook({.num_steps = 2})),
        chief_only_hooks(RecordingHook{&dir.events, "chief"}));
    run_until_stop(session);
  }
  CHECK(dir.events == std::vector<std::string>{"chief begin",
                                               "user begin",
                                               "restore D/model.ckpt-3",
                                               "chief after_create_session 3",
                                               "save 3",
                                               "user after_create_session 3",
                                               "chief end 5",
                                               "save 5",
                                               "user end 5"});
}

TEST_CASE("Session options: a chief-only StopAtStepHook(num_steps) counts from the restored step",
          "[checkpoint][session][order]") {
  FakeDir dir;
  {
    Model m;
    MonitoredTrainingSession first(
        m.train_op(), ConstInput{},
        SessionOptions<FakeSaver, SteadyClock, NullLogger>{.checkpoint_dir = "D",
                                                           .save_checkpoint_steps = 50,
                                                           .save_summaries_steps = 0,
                                                           .log_step_count_steps = 0,
                                                           .saver = FakeSaver{&dir}},
        hooks(StopAtStepHook({.last_step = 40})));
    run_until_stop(first);
  }
  Model m;
  MonitoredTrainingSession session(
      m.train_op(), ConstInput{},
      SessionOptions<FakeSaver, SteadyClock, NullLogger>{.checkpoint_dir = "D",
                                                         .save_checkpoint_steps = 50,
                                                         .save_summaries_steps = 0,
                                                         .log_step_count_steps = 0,
                                                         .saver = FakeSaver{&dir}},
      hooks(), chief_only_hooks(StopAtStepHook({.num_steps = 5})));
  CHECK(session.global_step() == 40);
  CHECK(run_until_stop(session) == 5);
  CHECK(session.global_step() == 45);
}

TEST_CASE("Session options: a non-chief restores, saves nothing and skips chief-only hooks",
          "[checkpoint][session][chief]") {
  // monitored_session.py: `if not is_chief:` MonitoredSession(hooks=hooks): no chief-only hooks,
  // no CheckpointSaverHook. Its WorkerSessionCreator waits for the chief's restored variables,
  // which the worker shares; here each process owns its variables, so a non-chief restores the
  // chief's latest checkpoint itself (data-parallel ranks, docs/distributed.md).
  FakeDir dir;
  {
    Model m;
    MonitoredTrainingSession first(
        m.train_op(), ConstInput{},
        SessionOptions<FakeSaver, SteadyClock, NullLogger>{.checkpoint_dir = "D",
                                                           .save_checkpoint_steps = 50,
                                                           .save_summaries_steps = 0,
                                                           .log_step_count_steps = 0,
                                                           .saver = FakeSaver{&dir}},
        hooks(StopAtStepHook({.last_step = 10})));
    run_until_stop(first);
  }
  dir.saves.clear();
  dir.events.clear();
  dir.restore_calls = 0;
  Model m;
  {
    MonitoredTrainingSession session(
        m.train_op(), ConstInput{},
        SessionOptions<FakeSaver, SteadyClock, NullLogger>{.is_chief = false,
                                                           .checkpoint_dir = "D",
                                                           .save_checkpoint_steps = 1,
                                                           .saver = FakeSaver{&dir}},
        hooks(RecordingHook{&dir.events, "user"}, StopAtStepHook({.num_steps = 4})),
        chief_only_hooks(RecordingHook{&dir.events, "chief"}));
    CHECK(session.global_step() == 10);  // the chief's checkpoint at step 10
    CHECK(!session.hook<0>().has_value());  // the chief-only hook's slot
    CHECK(!session.hook<1>().has_value());  // the StepCounterHook's slot
    CHECK(!session.hook<2>().has_value());  // the SummarySaverHook's slot
    CHECK(!session.hook<3>().has_value());  // the saver hook's slot
    run_until_stop(session);
  }
  CHECK(dir.restore_calls == 1);
  REQUIRE(dir.restored.size() == 1);
  CHECK(dir.restored[0].ends_with("-10"));
  CHECK(dir.saves.empty());
  CHECK(dir.events == std::vector<std::string>{"user begin", "restore " + dir.restored[0],
                                               "user after_create_session 10", "user end 14"});
}

TEST_CASE("Session options: without checkpoint_dir nothing is restored or written",
          "[checkpoint][session]") {
  FakeDir dir;
  dir.latest = "D/model.ckpt-99";  // would fail if read: no such checkpoint in the fake
  Model m;
  {
    MonitoredTrainingSession session(
        m.train_op(), ConstInput{},
        SessionOptions<FakeSaver, SteadyClock, NullLogger>{.save_checkpoint_steps = 1,
                                                           .saver = FakeSaver{&dir}},
        hooks(StopAtStepHook({.num_steps = 3})));
    CHECK(!session.hook<0>().has_value());
    run_until_stop(session);
  }
  CHECK(dir.restore_calls == 0);
  CHECK(dir.saves.empty());
}

// The default saver is io::Saver, only declared in the core (no LevelDB here): its behaviour
// with real files is tested in test_checkpoint_scenarios.cpp. A saver without warm_start_type
// (FakeSaver) gives SessionOptions a warm_start_from that can only stay empty.
static_assert(std::is_same_v<DefaultSaver, io::Saver>);
static_assert(std::is_same_v<decltype(SessionOptions<FakeSaver>{}.warm_start_from),
                             std::optional<detail::NoWarmStart>>);

namespace {
/// A saver the session makes itself from SaverOptions; records the max_to_keep it was given.
struct ConfigurableSaver {
  int* max_to_keep_seen;
  explicit ConfigurableSaver(int* seen) : max_to_keep_seen(seen) {}
  explicit ConfigurableSaver(const SaverOptions& o) : max_to_keep_seen(&last_max_to_keep()) {
    last_max_to_keep() = o.max_to_keep;
  }
  static int& last_max_to_keep() {
    static int v = -1;
    return v;
  }
  std::string save(VariableList, std::string_view p, std::int64_t s) {
    return std::string(p) + "-" + std::to_string(s);
  }
  std::optional<std::string> restore_latest(VariableList, std::string_view) {
    return std::nullopt;
  }
};
}  // namespace

TEST_CASE("Session options: max_to_keep goes to the saver the session makes",
          "[checkpoint][session]") {
  Model m;
  using O = SessionOptions<ConfigurableSaver, SteadyClock, NullLogger>;
  {
    MonitoredTrainingSession session(m.train_op(), ConstInput{},
                                     O{.checkpoint_dir = "D",
                                       .save_summaries_steps = 0,
                                       .log_step_count_steps = 0,
                                       .max_to_keep = 2},
                                     hooks());
    CHECK(ConfigurableSaver::last_max_to_keep() == 2);
  }
  {
    MonitoredTrainingSession session(
        m.train_op(), ConstInput{},
        O{.checkpoint_dir = "D", .save_summaries_steps = 0, .log_step_count_steps = 0}, hooks());
    CHECK(ConfigurableSaver::last_max_to_keep() == 5);  // TensorFlow's Saver default
  }
  int seen = 0;
  const std::string msg = error_of<ValueError>([&] {
    MonitoredTrainingSession session(m.train_op(), ConstInput{},
                                     O{.checkpoint_dir = "D",
                                       .save_summaries_steps = 0,
                                       .log_step_count_steps = 0,
                                       .max_to_keep = 3,
                                       .saver = ConfigurableSaver(&seen)},
                                     hooks());
  });
  CHECK(msg.find("max_to_keep is for the saver the session makes") != std::string::npos);
}

TEST_CASE("Session options: the existing constructors and extras still work alongside",
          "[checkpoint][session]") {
  FakeDir dir;
  Model m;
  MonitoredTrainingSession session(
      m.train_op(), ConstInput{},
      SessionOptions<FakeSaver, SteadyClock, NullLogger>{.checkpoint_dir = "D",
                                                         .save_checkpoint_steps = 2,
                                                         .save_summaries_steps = 0,
                                                         .log_step_count_steps = 0,
                                                         .saver = FakeSaver{&dir}},
      hooks(StopAtStepHook({.num_steps = 4})), chief_only_hooks(), m.accuracy());
  auto r = session.run<"accuracy">();
  REQUIRE(r);
  CHECK(r->get<"accuracy">().item() == 1.0);  // mean(x), x = 1
  run_until_stop(session);
  session.close();
  CHECK(saved_steps(dir) == Steps{0, 2, 4});
}
