// tests/test_checkpoint_scenarios.cpp: MonitoredTrainingSession with checkpoint options and the
// default saver (io::Saver), end to end with real files: which files a run leaves, the state
// file, the restart, retention, keys and TensorFlow shapes, warm start (SessionOptions::
// warm_start_from and VariableInitializationHook) and a TensorFlow-written fixture.
//
// Expected file lists and steps come from TensorFlow's documented behaviour
// (basic_session_run_hooks.CheckpointSaverHook: a save at creation, when stale step + 1 reaches
// the last save + save_steps, and at end() unless already saved; Saver's prefix
// "<dir>/model.ckpt-<step>" and max_to_keep; the state file's relative paths, oldest first),
// worked out by hand in each test's comment. Values are compared bit for bit with what
// io::CheckpointReader reads from the files.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "checkpoint_session_model.hpp"
#include "capturing_logger.hpp"
#include "checkpoint_test_vars.hpp"
#include "error_of.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"

using namespace hookfuse;
namespace fs = std::filesystem;
using hookfuse_test::error_of;
using hookfuse_test::read_text;
using hookfuse_test::TempDir;

static_assert(CheckpointSaver<io::Saver>);
static_assert(std::is_same_v<DefaultSaver, io::Saver>);
static_assert(std::is_same_v<decltype(SessionOptions{}), SessionOptions<io::Saver>>);
static_assert(
    std::is_same_v<decltype(SessionOptions{}.warm_start_from), std::optional<io::WarmStart>>);

using hookfuse_test::all_files_in;
using hookfuse_test::DenseModel;
using hookfuse_test::run_until_stop;
using hookfuse_test::StepInput;

namespace {

/// Every file name in `dir` but the event file that a chief's default summary hooks write into
/// its checkpoint_dir (TF's summary_dir default; test_summary_session_defaults checks that file).
std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> out = all_files_in(dir);
  std::erase_if(out, [](const std::string& f) { return f.starts_with("events.out.tfevents."); });
  return out;
}

/// The files of checkpoints model.ckpt-<step> for `steps`, plus the state file.
std::set<std::string> checkpoint_files(std::initializer_list<int> steps) {
  std::set<std::string> out{"checkpoint"};
  for (const int s : steps) {
    out.insert("model.ckpt-" + std::to_string(s) + ".index");
    out.insert("model.ckpt-" + std::to_string(s) + ".data-00000-of-00001");
  }
  return out;
}

/// The state file's lines without any timestamps (their values would be the wall clock's).
std::vector<std::string> state_paths(const fs::path& dir) {
  std::vector<std::string> out;
  std::istringstream in(read_text(dir / "checkpoint"));
  for (std::string line; std::getline(in, line);)
    if (line.find("timestamp") == std::string::npos) out.push_back(line);
  return out;
}

/// The state file TF1's Saver (the session's) writes in the absolute directory `dir` naming
/// `steps` (oldest first), the last the latest: absolute paths, no timestamp lines
/// (checkpoint_management.py, update_checkpoint_state_internal with save_relative_paths=False).
std::vector<std::string> expected_state_paths(const fs::path& dir,
                                              std::initializer_list<int> steps) {
  const std::string d = dir.lexically_normal().generic_string() + "/model.ckpt-";
  std::vector<std::string> out{"model_checkpoint_path: \"" + d +
                               std::to_string(*(steps.end() - 1)) + "\""};
  for (const int s : steps)
    out.push_back("all_model_checkpoint_paths: \"" + d + std::to_string(s) + "\"");
  return out;
}

/// True when the model's weights equal, bit for bit, the tensors of checkpoint `prefix`.
bool weights_equal(DenseModel& m, const fs::path& prefix) {
  const io::CheckpointReader r(prefix);
  const std::vector<float> k = r.get_tensor<float>("dense/kernel");
  const std::vector<float> b = r.get_tensor<float>("dense/bias");
  // Row-major [3, 2] as the bundle stores it; the Variable is row-major too.
  return k.size() == 6 && b.size() == 2 &&
         std::memcmp(k.data(), m.dense.kernel.value.data(), 6 * sizeof(float)) == 0 &&
         std::memcmp(b.data(), m.dense.bias.value.data(), 2 * sizeof(float)) == 0;
}

using Quiet = SessionOptions<io::Saver, SteadyClock, NullLogger>;

}  // namespace

TEST_CASE(
    "Scenario: save_checkpoint_steps=50, last_step=120 leaves -0, -50, -100, -120, a "
    "restart with num_steps=30 resumes at 120 and ends at 150",
    "[checkpoint][scenario]") {
  // First run: saves at creation (0), when the run from 49 to 50 ends (50), 100, and at end()
  // (120 != 100). max_to_keep 5 keeps all four.
  TempDir dir("scenario");
  const fs::path D = dir.path;
  {
    DenseModel m;
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        SessionOptions{.checkpoint_dir = D.string(), .save_checkpoint_steps = 50},
        hooks(StopAtStepHook({.last_step = 120})));
    CHECK(!session.restored_from_checkpoint());
    run_until_stop(session);
    CHECK(session.global_step() == 120);
    session.close();
    CHECK(weights_equal(m, D / "model.ckpt-120"));
  }
  CHECK(files_in(D) == checkpoint_files({0, 50, 100, 120}));
  CHECK(state_paths(D) == expected_state_paths(D, {0, 50, 100, 120}));
  // Every checkpoint's global_step is its step.
  for (const int s : {0, 50, 100, 120}) {
    const io::CheckpointReader r(D / ("model.ckpt-" + std::to_string(s)));
    CHECK(r.get_tensor<std::int64_t>("global_step") == std::vector<std::int64_t>{s});
  }
  // The weights at 120 differ from those at 0: training happened.
  CHECK(io::CheckpointReader(D / "model.ckpt-0").get_tensor<float>("dense/kernel") !=
        io::CheckpointReader(D / "model.ckpt-120").get_tensor<float>("dense/kernel"));

  // Second process: restores 120 (weights and step) before after_create_session;
  // StopAtStepHook(num_steps=30) stops at 150; saves at creation (120 again, same values: the
  // files stay) and at end() (150). The state file lists all five, oldest first.
  {
    DenseModel m;
    m.fill(42.0f);
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        SessionOptions{.checkpoint_dir = D.string(), .save_checkpoint_steps = 50},
        hooks(StopAtStepHook({.num_steps = 30})));
    CHECK(session.restored_from_checkpoint());
    CHECK(session.global_step() == 120);
    CHECK(weights_equal(m, D / "model.ckpt-120"));
    run_until_stop(session);
    CHECK(session.global_step() == 150);
    session.close();
    CHECK(weights_equal(m, D / "model.ckpt-150"));
  }
  CHECK(files_in(D) == checkpoint_files({0, 50, 100, 120, 150}));
  CHECK(state_paths(D) == expected_state_paths(D, {0, 50, 100, 120, 150}));
  const auto state = io::get_checkpoint_state(D);
  REQUIRE(state);
  CHECK(state->all_model_checkpoint_timestamps.empty());  // TF1's Saver writes none
  CHECK(io::latest_checkpoint(D) == std::optional<fs::path>(D / "model.ckpt-150"));
}

TEST_CASE("Scenario: a sharded saver writes two-shard checkpoints a restarted session resumes from",
          "[checkpoint][scenario]") {
  // io::Saver(SaverOptions{.sharded = true}): variables dense/kernel, dense/bias, global_step
  // (the session's list order) go to shards 0, 1, 0. Saves at 0, 10, 20; max_to_keep 2 keeps
  // -10 and -20 with both shards each; no "_temp" directory is left.
  TempDir dir("sharded");
  const fs::path D = dir.path;
  {
    DenseModel m;
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{.checkpoint_dir = D.string(),
              .save_checkpoint_steps = 10,
              .saver = io::Saver(SaverOptions{.max_to_keep = 2, .sharded = true})},
        hooks(StopAtStepHook({.last_step = 20})));
    run_until_stop(session);
    session.close();
    CHECK(weights_equal(m, D / "model.ckpt-20"));
  }
  std::set<std::string> expected{"checkpoint"};
  for (const int s : {10, 20}) {
    const std::string p = "model.ckpt-" + std::to_string(s);
    expected.insert({p + ".index", p + ".data-00000-of-00002", p + ".data-00001-of-00002"});
  }
  CHECK(files_in(D) == expected);
  const io::BundleReader r(D / "model.ckpt-20");
  CHECK(r.num_shards() == 2);
  CHECK(r.entry("dense/kernel").shard_id == 0);
  CHECK(r.entry("dense/bias").shard_id == 1);
  CHECK(r.entry("global_step").shard_id == 0);

  // A restart with the default (one-shard) saver restores step 20 from the shards.
  DenseModel m;
  m.fill(42.0f);
  MonitoredTrainingSession session(m.train_op(), StepInput{&m.gs},
                                   Quiet{.checkpoint_dir = D.string(), .save_checkpoint_steps = 10},
                                   hooks(StopAtStepHook({.last_step = 20})));
  CHECK(session.restored_from_checkpoint());
  CHECK(session.global_step() == 20);
  CHECK(weights_equal(m, D / "model.ckpt-20"));
}

TEST_CASE("Scenario: max_to_keep=2 over saves 10..100 leaves only -90 and -100",
          "[checkpoint][scenario]") {
  // Saves at 0, 10, ..., 100 (end() does not save again: 100 was just saved); after each, the
  // oldest beyond two is deleted: -90 and -100 remain, on disk and in the state file.
  TempDir dir("keep2");
  DenseModel m;
  {
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{.checkpoint_dir = dir.path.string(), .save_checkpoint_steps = 10, .max_to_keep = 2},
        hooks(StopAtStepHook({.last_step = 100})));
    run_until_stop(session);
  }
  CHECK(files_in(dir.path) == checkpoint_files({90, 100}));
  CHECK(state_paths(dir.path) == expected_state_paths(dir.path, {90, 100}));
}

TEST_CASE("Scenario: checkpoint keys, dtypes and TensorFlow shapes of a Dense model",
          "[checkpoint][scenario]") {
  // tf.layers.dense(x, 2) on x [batch, 3]: dense/kernel [3, 2], dense/bias [2] (rank 1, kept
  // as a [1, 2] row in hookfuse), global_step int64 [] (rank 0).
  TempDir dir("keys");
  DenseModel m;
  {
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{.checkpoint_dir = dir.path.string(), .save_checkpoint_steps = 1},
        hooks(StopAtStepHook({.last_step = 1})));
    run_until_stop(session);
  }
  const io::CheckpointReader r(dir.path / "model.ckpt-1");
  CHECK(r.keys() == std::vector<std::string>{"dense/bias", "dense/kernel", "global_step"});
  const auto shapes = r.get_variable_to_shape_map();
  CHECK(shapes.at("dense/kernel") == io::TensorShape{3, 2});
  CHECK(shapes.at("dense/bias") == io::TensorShape{2});
  CHECK(shapes.at("global_step") == io::TensorShape{});
  CHECK(shapes.at("global_step").dims() == 0);
  const auto dtypes = r.get_variable_to_dtype_map();
  CHECK(dtypes.at("dense/kernel") == io::DataType::DT_FLOAT);
  CHECK(dtypes.at("dense/bias") == io::DataType::DT_FLOAT);
  CHECK(dtypes.at("global_step") == io::DataType::DT_INT64);
  CHECK(!fs::exists(dir.path / "model.ckpt-1.meta"));  // no MetaGraphDef
}

TEST_CASE("Scenario: without checkpoint_dir, or as a non-chief, the default saver writes nothing",
          "[checkpoint][scenario]") {
  TempDir dir("nodir");
  DenseModel m;
  {
    MonitoredTrainingSession session(m.train_op(), StepInput{&m.gs}, SessionOptions{},
                                     hooks(StopAtStepHook({.num_steps = 2})));
    run_until_stop(session);
    CHECK(session.global_step() == 2);
  }
  {
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        SessionOptions{.is_chief = false, .checkpoint_dir = dir.path.string()},
        hooks(StopAtStepHook({.num_steps = 2})));
    run_until_stop(session);
    CHECK(session.global_step() == 4);
  }
  CHECK(all_files_in(dir.path).empty());
}

// --- warm start -------------------------------------------------------------------------------

namespace {
/// A run of 20 steps into `dir` (checkpoints -0 and -20): the "pretrained" model.
void pretrain(const fs::path& dir) {
  DenseModel m;
  MonitoredTrainingSession session(
      m.train_op(), StepInput{&m.gs},
      Quiet{.checkpoint_dir = dir.string(), .save_checkpoint_steps = 20},
      hooks(StopAtStepHook({.last_step = 20})));
  run_until_stop(session);
}
}  // namespace

TEST_CASE(
    "Warm start: warm_start_from sets the weights, not global_step, before the first save, "
    "a checkpoint in checkpoint_dir wins",
    "[checkpoint][warm_start]") {
  TempDir pre("pre"), run("run");
  pretrain(pre.path);
  const fs::path pretrained = pre.path / "model.ckpt-20";
  {
    // Fresh checkpoint_dir: the weights come from the pretrained checkpoint (a directory
    // resolves to its latest, -20), global_step stays 0, and model.ckpt-0 holds them.
    DenseModel m;
    m.fill(42.0f);
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{.checkpoint_dir = run.path.string(),
              .save_checkpoint_steps = 5,
              .warm_start_from = io::WarmStart{pre.path.string(), {{"/", "/"}}}},
        hooks(StopAtStepHook({.last_step = 5})));
    CHECK(!session.restored_from_checkpoint());
    CHECK(session.global_step() == 0);
    CHECK(weights_equal(m, pretrained));
    CHECK(weights_equal(m, run.path / "model.ckpt-0"));
    run_until_stop(session);
  }
  CHECK(files_in(run.path) == checkpoint_files({0, 5}));
  {
    // Restarted: checkpoint_dir holds -5, which is restored after the warm start and wins.
    DenseModel m;
    MonitoredTrainingSession session(m.train_op(), StepInput{&m.gs},
                                     Quiet{.checkpoint_dir = run.path.string(),
                                           .save_checkpoint_steps = 5,
                                           .warm_start_from = io::WarmStart{pretrained.string()}},
                                     hooks(StopAtStepHook({.num_steps = 5})));
    CHECK(session.restored_from_checkpoint());
    CHECK(session.global_step() == 5);
    CHECK(weights_equal(m, run.path / "model.ckpt-5"));
    CHECK(!weights_equal(m, pretrained));
  }
}

TEST_CASE("Warm start: a missing name is an error at session construction, no file written",
          "[checkpoint][warm_start]") {
  TempDir pre("pre"), run("run");
  pretrain(pre.path);
  DenseModel m;
  const std::string msg = error_of<ValueError>([&] {
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{
            .checkpoint_dir = run.path.string(),
            .save_checkpoint_steps = 1,
            .warm_start_from = io::WarmStart{pre.path.string(), {{"old/kernel", "dense/kernel"}}}},
        hooks());
  });
  CHECK(msg.find("old/kernel") != std::string::npos);
  CHECK(msg.find("dense/kernel") != std::string::npos);
  CHECK(all_files_in(run.path).empty());

  // The same through VariableInitializationHook, as a chief-only hook (before the saver hook).
  const std::string hook_msg = error_of<ValueError>([&] {
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{.checkpoint_dir = run.path.string(), .save_checkpoint_steps = 1}, hooks(),
        chief_only_hooks(VariableInitializationHook<NullLogger>(pre.path.string(),
                                                                {{"old/kernel", "dense/kernel"}})));
  });
  CHECK(hook_msg.find("old/kernel") != std::string::npos);
  // No checkpoint. (The hook fails in after_create_session, after the default summary hooks
  // opened the directory's event file, as TF's SummarySaverHook opens it in begin().)
  CHECK(files_in(run.path).empty());
}

TEST_CASE(
    "Warm start: VariableInitializationHook sets the weights, and leaves a restored "
    "session alone",
    "[checkpoint][warm_start]") {
  TempDir pre("pre"), run("run");
  pretrain(pre.path);
  const fs::path pretrained = pre.path / "model.ckpt-20";
  {
    DenseModel m;
    m.fill(42.0f);
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{.checkpoint_dir = run.path.string(), .save_checkpoint_steps = 3},
        hooks(StopAtStepHook({.last_step = 3})),
        chief_only_hooks(VariableInitializationHook<NullLogger>(pretrained.string())));
    const auto& r = session.hook<0>().get_if()->result();
    REQUIRE(r);
    CHECK(r->variables.size() == 2);  // dense/kernel and dense/bias, not global_step
    CHECK(session.global_step() == 0);
    CHECK(weights_equal(m, pretrained));
    CHECK(weights_equal(m, run.path / "model.ckpt-0"));  // chief-only: before the first save
    run_until_stop(session);
  }
  {
    DenseModel m;
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{.checkpoint_dir = run.path.string(), .save_checkpoint_steps = 3},
        hooks(StopAtStepHook({.num_steps = 1})),
        chief_only_hooks(VariableInitializationHook<NullLogger>(pretrained.string())));
    CHECK(!session.hook<0>().get_if()->result());
    CHECK(session.global_step() == 3);
    CHECK(weights_equal(m, run.path / "model.ckpt-3"));
  }
}

TEST_CASE(
    "Warm start: VariableInitializationHook as a user hook fails in begin() on a directory "
    "without a checkpoint, before the saver writes anything, and logs a restore",
    "[checkpoint][warm_start]") {
  TempDir empty("empty"), run("run"), pre("pre");
  DenseModel m;
  // A user hook runs after the saver hook, whose after_create_session saves model.ckpt-0: the
  // error comes from begin(), before any after_create_session, so nothing is saved.
  const std::string msg = error_of<io::NotFoundError>([&] {
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{.checkpoint_dir = run.path.string(), .save_checkpoint_steps = 1},
        hooks(VariableInitializationHook<NullLogger>(empty.path.string())));
  });
  CHECK(msg.find(empty.path.string()) != std::string::npos);
  CHECK(files_in(run.path).empty());

  // A prefix without its index file names the file it looked for.
  const std::string prefix = (empty.path / "model.ckpt-7").string();
  const std::string prefix_msg = error_of<io::NotFoundError>([&] {
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{.checkpoint_dir = run.path.string(), .save_checkpoint_steps = 1},
        hooks(VariableInitializationHook<NullLogger>(prefix)));
  });
  CHECK(prefix_msg.find(prefix + ".index") != std::string::npos);
  CHECK(files_in(run.path).empty());

  // run/ holding a checkpoint: the session restores it and the hook says it skips the warm start.
  pretrain(pre.path);
  {
    MonitoredTrainingSession session(
        m.train_op(), StepInput{&m.gs},
        Quiet{.checkpoint_dir = run.path.string(), .save_checkpoint_steps = 2},
        hooks(StopAtStepHook({.last_step = 2})));
    run_until_stop(session);
  }
  hookfuse_test::Lines lines;
  {
    DenseModel m2;
    MonitoredTrainingSession session(
        m2.train_op(), StepInput{&m2.gs},
        Quiet{.checkpoint_dir = run.path.string(), .save_checkpoint_steps = 2},
        hooks(VariableInitializationHook<hookfuse_test::CapturingLogger>(
            pre.path.string(), {{"/", "/"}}, hookfuse_test::CapturingLogger{&lines})));
    CHECK(session.restored_from_checkpoint());
  }
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].severity == Severity::info);
  CHECK(lines[0].text == "VariableInitializationHook: the session restored its own checkpoint, "
                         "so the warm start from " + pre.path.string() + " is skipped.");
}

TEST_CASE("Warm start: TensorFlow's ckpt_tf1_half_plus_three into rank-0 variables a, b, c",
          "[checkpoint][warm_start][fixture]") {
  // FORMATS.md: float scalars a = 0.5, b = 3.0, c = 3.0, shape [] each.
  const fs::path fixture = fs::path(HOOKFUSE_FIXTURES_DIR) / "tf" / "ckpt_tf1_half_plus_three";
  if (!fs::exists(fixture / "variables.index"))
    HOOKFUSE_SKIP("fixture " << fixture << " not found");
  Placeholder<"x", float, 1> x;
  Placeholder<"y", float, 1> y;
  Variable<"a", float, 1, 1, 0> a;  // TensorFlow rank 0: a scalar
  Variable<"b", float, 1, 1, 0> b;
  Variable<"c", float, 1, 1, 0> c;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(y, matmul(x, a) + b + c));
  auto train_op = GradientDescentOptimizer(0.0).minimize(loss, gs);
  MonitoredTrainingSession session(
      train_op, caller_feeds(1),
      Quiet{.warm_start_from = io::WarmStart{(fixture / "variables").string()}}, hooks());
  CHECK(a.value(0, 0) == 0.5f);
  CHECK(b.value(0, 0) == 3.0f);
  CHECK(c.value(0, 0) == 3.0f);
  const auto vars = session.variables();
  CHECK(vars[0].shape.dims().empty());
}
