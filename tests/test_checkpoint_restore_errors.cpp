// tests/test_checkpoint_restore_errors.cpp: restores that cannot go as asked, with real files in
// a temporary directory. A checkpoint that lost a file or fails its CRC never makes a run start
// over: io::Saver::restore_latest, latest_checkpoint and MonitoredTrainingSession raise an error
// naming the file and the newest intact checkpoint, and leave every file as it was (the state
// file compared byte for byte); with RestoreFallback::newest_intact they resume from that one.
// A path to one file of a checkpoint, or a prefix without files, gets an error that says what
// to pass; load_checkpoint resolves a directory.
//
// Expected kinds and texts follow TensorFlow 1.x (tensorflow/python/training/saver.py,
// Saver.restore: ValueError "The passed save_path is not a valid checkpoint: <path>" when
// "<path>.index" is missing; session_manager.py, _restore_checkpoint: restores the state file's
// model_checkpoint_path unconditionally, so a missing data file is the restore op's
// NotFoundError; checkpoint_utils.py, load_checkpoint: ValueError "Couldn't find 'checkpoint'
// file or checkpoints in given directory"). Expected values are worked out by hand: the Saver
// model's weights at step s are w[i] = s + 0.25 i, b[i] = -s / 2 - i; the session's weights at
// step 10 are copied from the model in memory when the first run stops there.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <hookfuse/io/saver.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "capturing_logger.hpp"
#include "checkpoint_session_model.hpp"
#include "checkpoint_test_vars.hpp"
#include "error_of.hpp"
#include "temp_dir.hpp"

using namespace hookfuse;
namespace fs = std::filesystem;
using hookfuse_test::CapturingLogger;
using hookfuse_test::error_of;
using hookfuse_test::Lines;
using hookfuse_test::read_text;
using hookfuse_test::TempDir;
using hookfuse_test::test_var;
using hookfuse_test::TestVar;

using hookfuse_test::all_files_in;
using hookfuse_test::DenseModel;
using hookfuse_test::run_until_stop;
using hookfuse_test::StepInput;

namespace {

/// w [2, 3] float, b [3] float, global_step int64 [], set to a function of the step.
struct SmallModel {
  std::vector<float> w = std::vector<float>(6);
  std::vector<float> b = std::vector<float>(3);
  std::int64_t step = 0;
  std::vector<TestVar> vars() {
    return {test_var("dense/kernel", {2, 3}, w), test_var("dense/bias", {3}, b),
            test_var("global_step", step)};
  }
  void set(std::int64_t s) {
    for (std::size_t i = 0; i < w.size(); ++i)
      w[i] = static_cast<float>(s) + 0.25f * static_cast<float>(i);
    for (std::size_t i = 0; i < b.size(); ++i)
      b[i] = -static_cast<float>(s) * 0.5f - static_cast<float>(i);
    step = s;
  }
  void fill(float v) {
    w.assign(6, v);
    b.assign(3, v);
    step = -1;
  }
};

/// `dir` with checkpoints model.ckpt-10 and model.ckpt-20 of SmallModel, saved in that order.
void save_10_and_20(const fs::path& dir) {
  io::Saver saver;
  SmallModel m;
  for (const int s : {10, 20}) {
    m.set(s);
    (void)saver.save(m.vars(), (dir / "model.ckpt").string(), s);
  }
}

}  // namespace

// =============================================================================================
// A damaged newest checkpoint: an error naming it, nothing changed on disk
// =============================================================================================

TEST_CASE(
    "Saver.restore_latest: the newest checkpoint's data file deleted is a NotFoundError "
    "naming it and the newest intact one, and changes nothing") {
  TempDir dir("restore_err");
  const fs::path D = dir.path;
  save_10_and_20(D);
  const fs::path data20 = D / "model.ckpt-20.data-00000-of-00001";
  fs::remove(data20);
  const std::string state_before = read_text(D / "checkpoint");
  const std::set<std::string> files_before = all_files_in(D);

  io::Saver saver;
  SmallModel m;
  m.fill(7.0f);
  const auto vars = m.vars();
  Lines lines;
  CapturingLogger logger{&lines};
  const std::string msg =
      error_of<io::NotFoundError>([&] { (void)saver.restore_latest(vars, D.string(), logger); });
  CHECK_THAT(msg, Catch::Contains((D / "checkpoint").string() + " names " +
                                  (D / "model.ckpt-20").string()) &&
                      Catch::Contains(data20.string()) &&
                      Catch::Contains("The newest intact checkpoint listed is " +
                                      (D / "model.ckpt-10").string()) &&
                      Catch::Contains("nothing on disk was changed") &&
                      Catch::Contains("restore_fallback = newest_intact"));
  // Nothing restored, nothing taken over, nothing logged, nothing on disk changed.
  CHECK(m.w == std::vector<float>(6, 7.0f));
  CHECK(m.step == -1);
  CHECK(saver.last_checkpoints().empty());
  CHECK(lines.empty());
  CHECK(read_text(D / "checkpoint") == state_before);
  CHECK(all_files_in(D) == files_before);

  // latest_checkpoint does not answer "none" (which would start a caller over): it names the
  // missing file and the newest listed checkpoint whose files are all present.
  const std::string latest = error_of<io::NotFoundError>([&] { (void)io::latest_checkpoint(D); });
  CHECK_THAT(latest, Catch::Contains(data20.string()) &&
                         Catch::Contains("The newest listed checkpoint whose files are all "
                                         "present is " +
                                         (D / "model.ckpt-10").string()));
  CHECK(read_text(D / "checkpoint") == state_before);
}

TEST_CASE(
    "Saver.restore_latest: the newest index deleted is TensorFlow's ValueError, a "
    "corrupt tensor a DataLossError, and nothing changes") {
  TempDir dir("restore_err");
  const fs::path D = dir.path;
  save_10_and_20(D);
  io::Saver saver;
  SmallModel m;
  m.fill(7.0f);
  const auto vars = m.vars();

  SECTION("index deleted") {
    fs::remove(D / "model.ckpt-20.index");
    const std::string state_before = read_text(D / "checkpoint");
    const auto files_before = all_files_in(D);
    CHECK_THAT(error_of<ValueError>([&] { (void)saver.restore_latest(vars, D.string()); }),
               Catch::Contains((D / "model.ckpt-20.index").string() + " is not found") &&
                   Catch::Contains((D / "model.ckpt-10").string()));
    CHECK(read_text(D / "checkpoint") == state_before);
    CHECK(all_files_in(D) == files_before);
    // TensorFlow's latest_checkpoint returns None here; ours names the missing index.
    CHECK_THAT(error_of<io::NotFoundError>([&] { (void)io::latest_checkpoint(D); }),
               Catch::Contains((D / "model.ckpt-20.index").string()));
  }
  SECTION("one byte of the data file flipped: the CRC32C check fails") {
    const fs::path data20 = D / "model.ckpt-20.data-00000-of-00001";
    std::string bytes = read_text(data20);
    bytes[0] = static_cast<char>(bytes[0] ^ 0x01);
    {
      std::ofstream out(data20, std::ios::binary | std::ios::trunc);
      out << bytes;
    }
    const std::string state_before = read_text(D / "checkpoint");
    CHECK_THAT(error_of<io::DataLossError>([&] { (void)saver.restore_latest(vars, D.string()); }),
               Catch::Contains(data20.string()) &&
                   Catch::Contains("The newest intact checkpoint listed is " +
                                   (D / "model.ckpt-10").string()));
    CHECK(read_text(D / "checkpoint") == state_before);
    // Every file is present, so latest_checkpoint (which only looks for them) names it.
    CHECK(io::latest_checkpoint(D) == D / "model.ckpt-20");
  }
  SECTION("no intact checkpoint listed: the error says so") {
    fs::remove(D / "model.ckpt-20.data-00000-of-00001");
    fs::remove(D / "model.ckpt-10.index");
    saver.set_restore_fallback(io::RestoreFallback::newest_intact);
    CHECK_THAT(error_of<io::NotFoundError>([&] { (void)saver.restore_latest(vars, D.string()); }),
               Catch::Contains("No checkpoint listed there is intact") &&
                   Catch::Contains((D / "model.ckpt-10.index").string()));
  }
  CHECK(m.w == std::vector<float>(6, 7.0f));
  CHECK(m.step == -1);
}

TEST_CASE(
    "Saver.restore_latest with restore_fallback = newest_intact resumes from the newest "
    "intact checkpoint, logs it and keeps every checkpoint listed") {
  TempDir dir("restore_err");
  const fs::path D = dir.path;
  save_10_and_20(D);
  fs::remove(D / "model.ckpt-20.data-00000-of-00001");

  io::Saver saver(SaverOptions{.restore_fallback = io::RestoreFallback::newest_intact});
  CHECK(saver.restore_fallback() == io::RestoreFallback::newest_intact);
  SmallModel m;
  m.fill(7.0f);
  const auto vars = m.vars();
  Lines lines;
  CapturingLogger logger{&lines};
  const std::string state_before = read_text(D / "checkpoint");
  CHECK(saver.restore_latest(vars, D.string(), logger) == (D / "model.ckpt-10").string());
  // Step 10's values, by hand: w[i] = 10 + 0.25 i, b[i] = -5 - i.
  CHECK(m.w == std::vector<float>{10.0f, 10.25f, 10.5f, 10.75f, 11.0f, 11.25f});
  CHECK(m.b == std::vector<float>{-5.0f, -6.0f, -7.0f});
  CHECK(m.step == 10);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].severity == Severity::warning);
  CHECK_THAT(lines[0].text, Catch::Contains((D / "model.ckpt-20.data-00000-of-00001").string()) &&
                                Catch::Contains("restoring " + (D / "model.ckpt-10").string()));
  // Restoring writes nothing; retention takes over the whole list, the damaged one included.
  CHECK(read_text(D / "checkpoint") == state_before);
  CHECK(saver.last_checkpoints() ==
        std::vector<std::string>{(D / "model.ckpt-10").string(), (D / "model.ckpt-20").string()});
}

// =============================================================================================
// The same in a restarted MonitoredTrainingSession
// =============================================================================================

TEST_CASE(
    "A restarted session whose newest checkpoint lost its data file raises and writes "
    "nothing, and with newest_intact it resumes from the older one",
    "[checkpoint][scenario]") {
  // Run 1 stops at 10: saves 0 and 10 (save_checkpoint_steps = 10: at creation, then when the
  // step reaching 10 ends). Run 2 resumes at 10 and stops at 20: saves 10 again (same values,
  // files untouched) and 20. The state file lists 0, 10, 20.
  TempDir dir("restore_err");
  const fs::path D = dir.path;
  std::vector<float> weights_at_10;
  {
    DenseModel m;
    MonitoredTrainingSession session(m.train_op(), StepInput{&m.gs},
                                     SessionOptions<io::Saver, SteadyClock, NullLogger>{
                                         .checkpoint_dir = D.string(), .save_checkpoint_steps = 10},
                                     hooks(StopAtStepHook({.last_step = 10})));
    run_until_stop(session);
    session.close();
    weights_at_10 = m.weights();
  }
  {
    DenseModel m;
    MonitoredTrainingSession session(m.train_op(), StepInput{&m.gs},
                                     SessionOptions<io::Saver, SteadyClock, NullLogger>{
                                         .checkpoint_dir = D.string(), .save_checkpoint_steps = 10},
                                     hooks(StopAtStepHook({.last_step = 20})));
    CHECK(session.global_step() == 10);
    run_until_stop(session);
    session.close();
    CHECK(m.weights() != weights_at_10);
  }
  const fs::path data20 = D / "model.ckpt-20.data-00000-of-00001";
  REQUIRE(fs::exists(data20));
  fs::remove(data20);
  const std::string state_before = read_text(D / "checkpoint");
  const std::set<std::string> files_before = all_files_in(D);

  // Run 3: TensorFlow's behaviour, an error; no checkpoint, state file or event file written.
  {
    DenseModel m;
    const std::string msg = error_of<io::NotFoundError>([&] {
      MonitoredTrainingSession session(
          m.train_op(), StepInput{&m.gs},
          SessionOptions<io::Saver, SteadyClock, NullLogger>{.checkpoint_dir = D.string(),
                                                             .save_checkpoint_steps = 10},
          hooks(StopAtStepHook({.last_step = 30})));
    });
    CHECK_THAT(msg, Catch::Contains(data20.string()) &&
                        Catch::Contains("The newest intact checkpoint listed is " +
                                        (D / "model.ckpt-10").string()));
  }
  CHECK(read_text(D / "checkpoint") == state_before);
  CHECK(all_files_in(D) == files_before);

  // Run 4: opted in, it resumes at 10 with the weights run 1 had there, logs why, and trains
  // on to 20, writing model.ckpt-20 again.
  {
    DenseModel m;
    m.fill(42.0f);
    Lines lines;
    MonitoredTrainingSession session(m.train_op(), StepInput{&m.gs},
                                     SessionOptions<io::Saver, SteadyClock, CapturingLogger>{
                                         .checkpoint_dir = D.string(),
                                         .save_checkpoint_steps = 10,
                                         .restore_fallback = io::RestoreFallback::newest_intact,
                                         .logger = CapturingLogger{&lines}},
                                     hooks(StopAtStepHook({.last_step = 20})));
    CHECK(session.restored_from_checkpoint());
    CHECK(session.global_step() == 10);
    CHECK(m.weights() == weights_at_10);
    bool warned = false;
    bool restoring_10 = false;
    for (const auto& l : lines) {
      warned =
          warned ||
          (l.severity == Severity::warning && l.text.find(data20.string()) != std::string::npos &&
           l.text.find("restoring " + (D / "model.ckpt-10").string()) != std::string::npos);
      restoring_10 =
          restoring_10 || l.text == "Restoring parameters from " + (D / "model.ckpt-10").string();
    }
    CHECK(warned);
    CHECK(restoring_10);
    // The save at creation (step 10) keeps every checkpoint listed, the damaged one included.
    const auto state = io::get_checkpoint_state(D);
    REQUIRE(state);
    CHECK(state->model_checkpoint_path == (D / "model.ckpt-10").string());
    CHECK(state->all_model_checkpoint_paths ==
          std::vector<std::string>{(D / "model.ckpt-0").string(), (D / "model.ckpt-20").string(),
                                   (D / "model.ckpt-10").string()});
    run_until_stop(session);
    session.close();
  }
  CHECK(io::latest_checkpoint(D) == D / "model.ckpt-20");
  CHECK(io::load_checkpoint(D).get_tensor<std::int64_t>("global_step") ==
        std::vector<std::int64_t>{20});
}

TEST_CASE("SessionOptions::restore_fallback is for the saver the session makes") {
  TempDir dir("restore_err");
  DenseModel m;
  CHECK_THAT(error_of<ValueError>([&] {
               MonitoredTrainingSession session(
                   m.train_op(), StepInput{&m.gs},
                   SessionOptions<io::Saver, SteadyClock, NullLogger>{
                       .checkpoint_dir = dir.path.string(),
                       .restore_fallback = io::RestoreFallback::newest_intact,
                       .saver = io::Saver()},
                   hooks(StopAtStepHook({.last_step = 1})));
             }),
             Catch::Contains("restore_fallback is for the saver the session makes"));
}

// =============================================================================================
// Paths that are not a checkpoint prefix
// =============================================================================================

TEST_CASE("a path to one file of a checkpoint says which prefix to pass") {
  TempDir dir("restore_err");
  const fs::path D = dir.path;
  save_10_and_20(D);
  const fs::path prefix = D / "model.ckpt-20";
  const std::string hint = "this is one file of the checkpoint `" + prefix.string() +
                           "`; pass the prefix `" + prefix.string() + "`";
  SmallModel m;
  m.fill(7.0f);
  const auto vars = m.vars();
  io::Saver saver;
  for (const fs::path& file :
       {D / "model.ckpt-20.data-00000-of-00001", D / "model.ckpt-20.index"}) {
    INFO(file.string());
    // TensorFlow reads such a file as a V1 table: DataLossError ("not an sstable").
    CHECK_THAT(error_of<io::DataLossError>([&] { io::CheckpointReader r(file); }),
               Catch::StartsWith(file.string() + ": " + hint));
    CHECK_THAT(error_of<io::DataLossError>([&] { saver.restore(vars, file.string()); }),
               Catch::Contains(hint));
    CHECK_THAT(error_of<io::DataLossError>([&] { (void)io::list_variables(file); }),
               Catch::Contains(hint));
  }
  CHECK(m.step == -1);
  // A file name of a prefix that has no files: said too, with the kind of a missing file.
  const fs::path gone = D / "model.ckpt-30.index";
  CHECK_THAT(error_of<io::NotFoundError>([&] { io::CheckpointReader r(gone); }),
             Catch::Contains("one file of the checkpoint `" + (D / "model.ckpt-30").string()) &&
                 Catch::Contains("model.ckpt-30.index is not found either"));
}

TEST_CASE(
    "a prefix without files: TensorFlow's 'not a valid checkpoint', naming the "
    "directory's latest checkpoint") {
  TempDir dir("restore_err");
  const fs::path D = dir.path;
  save_10_and_20(D);
  const fs::path missing = D / "model.ckpt-15";
  const std::string latest =
      "the latest checkpoint in " + D.string() + " is " + (D / "model.ckpt-20").string();
  SmallModel m;
  const auto vars = m.vars();
  io::Saver saver;
  const std::string restore_msg =
      error_of<ValueError>([&] { saver.restore(vars, missing.string()); });
  CHECK_THAT(restore_msg, Catch::StartsWith("The passed save_path is not a valid checkpoint: " +
                                            missing.string()) &&
                              Catch::Contains("expected model.ckpt-15.index and "
                                              "model.ckpt-15.data-00000-of-00001, found neither") &&
                              Catch::Contains(latest));
  // The reader keeps tf.train.load_checkpoint's kind for a missing prefix, NotFoundError.
  CHECK_THAT(error_of<io::NotFoundError>([&] { io::CheckpointReader r(missing); }),
             Catch::Contains((D / "model.ckpt-15.index").string() + ": not found") &&
                 Catch::Contains(latest));
  // A data file alone is reported as found.
  fs::copy_file(D / "model.ckpt-10.data-00000-of-00001", D / "model.ckpt-15.data-00000-of-00001");
  CHECK_THAT(error_of<ValueError>([&] { saver.restore(vars, missing.string()); }),
             Catch::Contains("found only model.ckpt-15.data-00000-of-00001"));
  // A directory without a state file: no latest checkpoint to name.
  const fs::path empty = D / "empty";
  fs::create_directory(empty);
  const std::string no_hint =
      error_of<ValueError>([&] { saver.restore(vars, (empty / "model.ckpt-1").string()); });
  CHECK(no_hint.find("latest checkpoint") == std::string::npos);
  // The directory itself given as a prefix.
  CHECK_THAT(error_of<io::NotFoundError>([&] { io::CheckpointReader r(D); }),
             Catch::Contains(D.string() + " is a directory, not a checkpoint prefix") &&
                 Catch::Contains(latest));
}

TEST_CASE(
    "load_checkpoint and list_variables on a directory open its latest checkpoint, as "
    "tf.train.load_checkpoint") {
  TempDir dir("restore_err");
  const fs::path D = dir.path;
  save_10_and_20(D);
  const io::CheckpointReader r = io::load_checkpoint(D);
  CHECK(r.bundle().prefix() == D / "model.ckpt-20");
  CHECK(r.get_tensor<std::int64_t>("global_step") == std::vector<std::int64_t>{20});
  // Step 20's bias, by hand: b[i] = -10 - i.
  CHECK(r.get_tensor<float>("dense/bias") == std::vector<float>{-10.0f, -11.0f, -12.0f});
  CHECK(io::load_checkpoint(D / "model.ckpt-10").get_tensor<std::int64_t>("global_step") ==
        std::vector<std::int64_t>{10});
  const auto listed = io::list_variables(D);
  REQUIRE(listed.size() == 3);
  CHECK(listed[0].first == "dense/bias");
  CHECK(listed[1].first == "dense/kernel");
  CHECK(listed[2].first == "global_step");

  const fs::path empty = D / "empty";
  fs::create_directory(empty);
  CHECK_THAT(error_of<ValueError>([&] { (void)io::load_checkpoint(empty); }),
             Catch::StartsWith("Couldn't find 'checkpoint' file or checkpoints in given "
                               "directory " +
                               empty.string()));
}
