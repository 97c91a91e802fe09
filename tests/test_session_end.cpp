// tests/test_session_end.cpp: errors from hooks' end() (issue 36: failures are never
// swallowed). Every hook's end() runs even when an earlier one throws, so a CheckpointSaverHook
// after a failing hook still writes the final checkpoint (read back here with
// io::CheckpointReader); close() then raises the first error and logs the later ones, the
// destructor logs them all. Also CheckpointSaverHook's listeners (each end() runs) and its
// begin(), which creates checkpoint_dir through io::Saver::create_checkpoint_dir (TF's hook
// creates it in begin()). Hosted only: io::Saver writes real files.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <hookfuse/hookfuse.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "capturing_logger.hpp"
#include "error_of.hpp"
#include "lr_model.hpp"
#include "temp_dir.hpp"

using namespace hookfuse;
using hookfuse_test::CapturingLogger;
using hookfuse_test::CountingInput;
using hookfuse_test::error_of;
using hookfuse_test::Lines;
using hookfuse_test::LrModel;
using hookfuse_test::TempDir;
namespace fs = std::filesystem;

namespace {

/// A hook whose end() counts its calls, then throws std::runtime_error(message).
struct ThrowingEnd {
  const char* message;
  int* ends;
  template <class S>
  void end(S&) {
    ++*ends;
    throw std::runtime_error(message);
  }
};

/// A hook whose end() counts its calls.
struct CountingEnd {
  int* ends;
  template <class S>
  void end(S&) {
    ++*ends;
  }
};

/// A checkpoint listener whose end() counts its calls and, with a message, throws it.
struct EndListener {
  const char* message;  // nullptr: does not throw
  int* ends;
  template <class S>
  void end(S&, std::int64_t) {
    ++*ends;
    if (message != nullptr) throw std::runtime_error(message);
  }
};

/// What the process writes to stderr (fd 2) while f runs.
template <class F>
std::string stderr_of(F&& f) {
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
}

/// The global step stored in checkpoint `prefix`.
std::int64_t saved_global_step(const fs::path& prefix) {
  const io::CheckpointReader reader(prefix);
  const std::vector<std::int64_t> step = reader.get_tensor<std::int64_t>("global_step");
  REQUIRE(step.size() == 1);
  return step[0];
}

/// A saver hook into `dir` that saves at creation and at end() only (save_steps beyond the run).
auto saver_hook(const fs::path& dir) {
  return CheckpointSaverHook(dir.string(), {.save_steps = 1000}, io::Saver{}, listeners(),
                             SteadyClock{}, NullLogger{});
}

}  // namespace

TEST_CASE("Session end: a hook's end() error before the saver hook still gets the final "
          "checkpoint written, and close() raises it",
          "[session][end]") {
  TempDir tmp("session_end");
  const fs::path dir = tmp.path / "run" / "ckpt";  // missing: the saver hook's begin() makes it
  LrModel m;
  int thrown = 0, after = 0;
  MonitoredTrainingSession session(
      m.train_op(0.1), CountingInput{},
      hooks(ThrowingEnd{"summary flush failed", &thrown}, saver_hook(dir),
            CountingEnd{&after}, StopAtStepHook({.num_steps = 3})));
  while (!session.should_stop()) session.run();
  REQUIRE(m.gs.value == 3);
  CHECK_FALSE(fs::exists(dir / "model.ckpt-3.index"));  // only step 0 saved so far

  CHECK(error_of<std::runtime_error>([&] { session.close(); }) == "summary flush failed");
  CHECK(thrown == 1);
  CHECK(after == 1);  // the hook after the saver hook is ended too
  CHECK(fs::exists(dir / "model.ckpt-3.index"));
  CHECK(saved_global_step(dir / "model.ckpt-3") == 3);
  CHECK(io::latest_checkpoint(dir) == dir / "model.ckpt-3");
  CHECK_NOTHROW(session.close());  // closed once
  CHECK(thrown == 1);
}

TEST_CASE("Session end: with two failing end()s, close(logger) raises the first and logs the "
          "second",
          "[session][end]") {
  LrModel m;
  int ends = 0, last = 0;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(ThrowingEnd{"first end failed", &ends}, ThrowingEnd{"second end failed", &ends},
            CountingEnd{&last}));
  session.run();
  CHECK(error_of<std::runtime_error>([&] { session.close(CapturingLogger{&lines}); }) ==
        "first end failed");
  CHECK(ends == 2);
  CHECK(last == 1);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].severity == Severity::error);
  CHECK_THAT(lines[0].text, Catch::Matchers::Contains("second end failed"));
  CHECK_THAT(lines[0].text, Catch::Matchers::Contains("close() raises the first"));
}

TEST_CASE("Session end: the destructor runs every end(), logs each error and throws nothing",
          "[session][end]") {
  TempDir tmp("session_end");
  const fs::path dir = tmp.path / "ckpt";
  LrModel m;
  int ends = 0;
  const std::string err = stderr_of([&] {
    CHECK_NOTHROW([&] {
      MonitoredTrainingSession session(
          m.train_op(), CountingInput{},
          hooks(ThrowingEnd{"first end failed", &ends}, saver_hook(dir),
                ThrowingEnd{"second end failed", &ends}));
      session.run();
      session.run();
    }());
  });
  CHECK(ends == 2);
  CHECK(saved_global_step(dir / "model.ckpt-2") == 2);
  const auto first = err.find("ERROR:hookfuse:");
  const auto a = err.find("first end failed");
  const auto b = err.find("second end failed");
  CHECK(first == 0);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  CHECK(a < b);  // logged in the order the hooks ran
  CHECK(err.find("ERROR:hookfuse:", a) < b);
}

TEST_CASE("Session end: every checkpoint listener's end() runs, the first error is raised",
          "[session][end][checkpoint]") {
  TempDir tmp("session_end");
  const fs::path dir = tmp.path / "ckpt";
  LrModel m;
  int ends = 0;
  Lines lines;
  MonitoredTrainingSession session(
      m.train_op(), CountingInput{},
      hooks(CheckpointSaverHook(dir.string(), {.save_steps = 1000}, io::Saver{},
                                listeners(EndListener{"listener one failed", &ends},
                                          EndListener{"listener two failed", &ends},
                                          EndListener{nullptr, &ends}),
                                SteadyClock{}, CapturingLogger{&lines})));
  session.run();
  lines.clear();
  CHECK(error_of<std::runtime_error>([&] { session.close(NullLogger{}); }) ==
        "listener one failed");
  CHECK(ends == 3);
  CHECK(saved_global_step(dir / "model.ckpt-1") == 1);
  std::vector<std::string> errors;
  for (const auto& l : lines)
    if (l.severity == Severity::error) errors.push_back(l.text);
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0], Catch::Matchers::Contains("listener two failed"));
}

TEST_CASE("CheckpointSaverHook: begin() creates a missing, nested checkpoint_dir",
          "[checkpoint]") {
  TempDir tmp("session_end");
  const fs::path dir = tmp.path / "a" / "b" / "c";
  auto hook = saver_hook(dir);
  REQUIRE_FALSE(fs::exists(tmp.path / "a"));
  hook.begin();
  CHECK(fs::is_directory(dir));
  hook.begin();  // an existing directory is fine
  CHECK(fs::is_directory(dir));
}

TEST_CASE("CheckpointSaverHook: begin() with a checkpoint_dir under a regular file throws "
          "IoError naming it",
          "[checkpoint]") {
  TempDir tmp("session_end");
  const fs::path file = tmp.path / "plain_file";
  std::ofstream(file) << "not a directory";
  const fs::path dir = file / "ckpt";
  auto hook = saver_hook(dir);
  const std::string message = error_of<io::IoError>([&] { hook.begin(); });
  CHECK_THAT(message, Catch::Matchers::Contains(dir.string()));
  CHECK_THAT(message, Catch::Matchers::Contains("checkpoint_dir"));
  CHECK(fs::is_regular_file(file));
}

namespace {
using EX = Placeholder<"x", float, 1>;
using EY = Placeholder<"y", float, 1>;
auto linear_model_fn = [](EX x, EY y, auto mode, const int&, auto& vars) {
  auto& W = nn::get_variable<"W", float, 1, 1, 2>(vars, nn::zeros{});
  auto& b = nn::get_variable<"b", float, 1, 1, 1>(vars, nn::zeros{});
  auto predictions = named<"predictions">(matmul(x, W) + b);
  auto loss = named<"loss">(mean_squared_error(y, predictions));
  return EstimatorSpec{.mode = mode,
                       .predictions = predictions,
                       .loss = loss,
                       .train_op = GradientDescentOptimizer(0.01).minimize(loss, vars.global_step())};
};
}  // namespace

TEST_CASE("Session end: Estimator::train and evaluate raise the first end() error, log the "
          "later ones through the config's logger, and train still saves the final step",
          "[session][end][estimator]") {
  TempDir tmp("session_end");
  const fs::path dir = tmp.path / "model";
  const float xs[4] = {1, 2, 3, 4};
  const float ys[4] = {2, 4, 6, 8};
  Lines lines;
  Estimator estimator(linear_model_fn,
                      RunConfig<FakeClock, CapturingLogger>{.model_dir = dir.string(),
                                                            .logger = CapturingLogger{&lines}},
                      0);
  int ends = 0;
  const auto errors_logged = [&lines] {
    std::vector<std::string> out;
    for (const auto& l : lines)
      if (l.severity == Severity::error) out.push_back(l.text);
    return out;
  };

  const std::string trained = error_of<std::runtime_error>([&] {
    estimator.train(
        numpy_input_fn<EX, EY>(xs, 4, ys, {.batch_size = 1, .num_epochs = std::nullopt, .shuffle = false}),
        {.steps = 5},
        hooks(ThrowingEnd{"first end failed", &ends}, ThrowingEnd{"second end failed", &ends}));
  });
  CHECK(trained == "first end failed");
  CHECK(ends == 2);
  CHECK(saved_global_step(dir / "model.ckpt-5") == 5);  // the saver hook's end() ran
  auto logged = errors_logged();
  REQUIRE(logged.size() == 1);
  CHECK_THAT(logged[0], Catch::Matchers::Contains("second end failed"));

  lines.clear();
  ends = 0;
  const std::string evaluated = error_of<std::runtime_error>([&] {
    (void)estimator.evaluate(
        numpy_input_fn<EX, EY>(xs, 4, ys, {.batch_size = 4, .num_epochs = 1, .shuffle = false}),
        {}, hooks(ThrowingEnd{"eval end failed", &ends}, ThrowingEnd{"eval end 2", &ends}));
  });
  CHECK(evaluated == "eval end failed");
  CHECK(ends == 2);
  logged = errors_logged();
  REQUIRE(logged.size() == 1);
  CHECK_THAT(logged[0], Catch::Matchers::Contains("eval end 2"));
}
