// io::Saver (tf.compat.v1.train.Saver) and io::CheckpointManager (tf.train.CheckpointManager),
// one class template with two rule sets. Expected file lists and state-file texts are written
// out by hand from TensorFlow's rules: prefix <save_path>-<step>; the state file (text_format
// of CheckpointState, fields in number order, doubles as Python's repr) lists the kept
// checkpoints oldest first in the order saved: the CheckpointManager relative to the directory
// with timestamps, the Saver absolute for an absolute directory and without timestamps;
// retention drops the oldest beyond max_to_keep; max_to_keep=0 keeps every file and lists the
// newest. The tests of the CheckpointManager's state-file text were the Saver's before issue 36
// made the Saver follow TF1.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <hookfuse/io/checkpoint_manager.hpp>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <hookfuse/io/saver.hpp>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint_test_vars.hpp"
#include "error_of.hpp"
#include "kill/checkpoint_check.hpp"
#include "kill/toy_state.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using hookfuse::io::CheckpointManager;
using hookfuse::io::Saver;
using hookfuse_test::error_of;
using hookfuse_test::read_text;
using hookfuse_test::TempDir;
using hookfuse_test::test_var;
using hookfuse_test::TestVar;

namespace {

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// The two files of checkpoint model.ckpt-<step>.
std::vector<std::string> ckpt_files(std::initializer_list<int> steps) {
  std::vector<std::string> out{"checkpoint"};
  for (int s : steps) {
    out.push_back("model.ckpt-" + std::to_string(s) + ".data-00000-of-00001");
    out.push_back("model.ckpt-" + std::to_string(s) + ".index");
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// A small model: w [2, 3] float, b [3] float, global_step int64 [].
struct Model {
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
};

struct Opts {
  int max_to_keep = 5;
  double keep_checkpoint_every_n_hours = 10000.0;
};

}  // namespace

TEST_CASE(
    "CheckpointManager: max_to_keep=2 over saves at 10..100 leaves -90 and -100, on disk and "
    "listed") {
  TempDir dir("saver");
  double now = 1000.0;
  CheckpointManager saver(Opts{.max_to_keep = 2}, [&] { return now; });
  Model m;
  const std::string save_path = (dir.path / "model.ckpt").string();
  for (int s = 10; s <= 100; s += 10) {
    m.set(s);
    now = 1000.0 + s;
    const auto vars = m.vars();
    CHECK(saver.save(vars, save_path, s) == save_path + "-" + std::to_string(s));
  }
  CHECK(files_in(dir.path) == ckpt_files({90, 100}));
  CHECK(read_text(dir.path / "checkpoint") ==
        "model_checkpoint_path: \"model.ckpt-100\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-90\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-100\"\n"
        "all_model_checkpoint_timestamps: 1090.0\n"
        "all_model_checkpoint_timestamps: 1100.0\n"
        "last_preserved_timestamp: 1000.0\n");
  CHECK(hookfuse::io::latest_checkpoint(dir.path) == dir.path / "model.ckpt-100");
}

TEST_CASE("CheckpointManager: max_to_keep=0 keeps every file and lists only the newest") {
  TempDir dir("saver");
  double now = 50.5;
  CheckpointManager saver(Opts{.max_to_keep = 0}, [&] { return now; });
  Model m;
  const auto vars = m.vars();
  for (int s = 1; s <= 3; ++s) saver.save(vars, (dir.path / "model.ckpt").string(), s);
  CHECK(files_in(dir.path) == ckpt_files({1, 2, 3}));
  CHECK(read_text(dir.path / "checkpoint") ==
        "model_checkpoint_path: \"model.ckpt-3\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-3\"\n"
        "all_model_checkpoint_timestamps: 50.5\n"
        "last_preserved_timestamp: 50.5\n");
}

TEST_CASE(
    "CheckpointManager: a second manager after a restart continues the list: -0 -50 -100 -120 then "
    "-150") {
  TempDir dir("saver");
  const std::string save_path = (dir.path / "model.ckpt").string();
  double now = 2000.0;
  {
    CheckpointManager first(Opts{}, [&] { return now; });
    Model m;
    for (int s : {0, 50, 100, 120}) {
      m.set(s);
      now = 2000.0 + s;
      first.save(m.vars(), save_path, s);
    }
  }
  CheckpointManager second(Opts{}, [&] { return now; });
  Model m;  // zeros: the restore must bring back step 120's values
  const auto restored = second.restore_latest(m.vars(), dir.path.string());
  REQUIRE(restored.has_value());
  CHECK(fs::path(*restored) == dir.path / "model.ckpt-120");
  CHECK(m.step == 120);
  Model expected;
  expected.set(120);
  CHECK(m.w == expected.w);
  CHECK(m.b == expected.b);
  CHECK(second.last_checkpoints().size() == 4);
  m.set(150);
  now = 2150.0;
  second.save(m.vars(), save_path, 150);
  CHECK(files_in(dir.path) == ckpt_files({0, 50, 100, 120, 150}));
  CHECK(read_text(dir.path / "checkpoint") ==
        "model_checkpoint_path: \"model.ckpt-150\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-0\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-50\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-100\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-120\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-150\"\n"
        "all_model_checkpoint_timestamps: 2000.0\n"
        "all_model_checkpoint_timestamps: 2050.0\n"
        "all_model_checkpoint_timestamps: 2100.0\n"
        "all_model_checkpoint_timestamps: 2120.0\n"
        "all_model_checkpoint_timestamps: 2150.0\n"
        "last_preserved_timestamp: 2000.0\n");
  // One more save: retention continues over the recovered list, -0 goes.
  now = 2160.0;
  second.save(m.vars(), save_path, 160);
  CHECK(files_in(dir.path) == ckpt_files({50, 100, 120, 150, 160}));
}

TEST_CASE("retention survives a restart: the new Saver deletes what the old one listed") {
  TempDir dir("saver");
  const std::string save_path = (dir.path / "model.ckpt").string();
  Model m;
  {
    Saver first(Opts{.max_to_keep = 2});
    first.save(m.vars(), save_path, 10);
    first.save(m.vars(), save_path, 20);
  }
  Saver second(Opts{.max_to_keep = 2});
  REQUIRE(second.restore_latest(m.vars(), dir.path.string()));
  second.save(m.vars(), save_path, 30);
  CHECK(files_in(dir.path) == ckpt_files({20, 30}));
}

TEST_CASE("restore_latest on a directory without checkpoints returns nullopt, vars untouched") {
  TempDir dir("saver");
  Saver saver;
  Model m;
  m.set(7);
  CHECK_FALSE(saver.restore_latest(m.vars(), dir.path.string()).has_value());
  CHECK(m.step == 7);
  CHECK(saver.last_checkpoints().empty());
}

TEST_CASE(
    "CheckpointManager: saving an existing step replaces it and moves it to the end, not "
    "duplicated") {
  TempDir dir("saver");
  double now = 100.0;
  CheckpointManager saver(Opts{.max_to_keep = 2}, [&] { return now; });
  Model m;
  const std::string save_path = (dir.path / "model.ckpt").string();
  m.set(10);
  saver.save(m.vars(), save_path, 10);
  now = 101.0;
  m.set(20);
  saver.save(m.vars(), save_path, 20);
  now = 102.0;
  m.set(99);  // other values under the old prefix
  saver.save(m.vars(), save_path, 10);
  CHECK(read_text(dir.path / "checkpoint") ==
        "model_checkpoint_path: \"model.ckpt-10\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-20\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-10\"\n"
        "all_model_checkpoint_timestamps: 101.0\n"
        "all_model_checkpoint_timestamps: 102.0\n"
        "last_preserved_timestamp: 100.0\n");
  CHECK(hookfuse::io::CheckpointReader(dir.path / "model.ckpt-10")
            .get_tensor<std::int64_t>("global_step") == std::vector<std::int64_t>{99});
  now = 103.0;
  saver.save(m.vars(), save_path, 30);  // the oldest is now -20
  CHECK(files_in(dir.path) == ckpt_files({10, 30}));
}

TEST_CASE(
    "CheckpointManager: keep_checkpoint_every_n_hours preserves one checkpoint per interval (fake "
    "clock)") {
  // Hand-worked with max_to_keep=1, 1 hour, start T0: a dropped checkpoint is kept when its
  // time is >= 3600 s after the last preserved one (T0 at first).
  //   save 1 @T0+600, 2 @T0+1200 (drops 1: 600 < 3600, deleted), 3 @T0+4000 (drops 2: 1200,
  //   deleted), 4 @T0+4300 (drops 3: 4000 >= 3600, kept; last = T0+4000), 5 @T0+5000 (drops 4:
  //   4300-4000 < 3600, deleted), 6 @T0+8000 (drops 5: deleted), 7 @T0+8100 (drops 6:
  //   8000-4000 >= 3600, kept; last = T0+8000). On disk: 3, 6, 7; listed: 7.
  TempDir dir("saver");
  const double t0 = 100000.0;
  double now = t0;
  CheckpointManager saver(Opts{.max_to_keep = 1, .keep_checkpoint_every_n_hours = 1.0},
                          [&] { return now; });
  Model m;
  const std::string save_path = (dir.path / "model.ckpt").string();
  const double at[] = {600, 1200, 4000, 4300, 5000, 8000, 8100};
  for (int s = 1; s <= 7; ++s) {
    now = t0 + at[s - 1];
    saver.save(m.vars(), save_path, s);
  }
  CHECK(files_in(dir.path) == ckpt_files({3, 6, 7}));
  CHECK(read_text(dir.path / "checkpoint") ==
        "model_checkpoint_path: \"model.ckpt-7\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-7\"\n"
        "all_model_checkpoint_timestamps: 108100.0\n"
        "last_preserved_timestamp: 108000.0\n");
  CheckpointManager again(Opts{.max_to_keep = 1, .keep_checkpoint_every_n_hours = 1.0},
                          [&] { return now; });
  again.recover_last_checkpoints(dir.path);
  CHECK(again.last_preserved_timestamp() == t0 + 8000.0);
}

TEST_CASE("save/restore round trip is bit for bit for every dtype, scalars and empty tensors") {
  TempDir dir("saver");
  std::vector<float> f = {0.0f,
                          -0.0f,
                          std::numeric_limits<float>::denorm_min(),
                          std::bit_cast<float>(0x7fc12345u),
                          std::numeric_limits<float>::infinity(),
                          -3.5f};
  std::vector<double> d = {std::bit_cast<double>(0x7ff8000000000123ull), -1e-300, 2.0};
  std::vector<std::int32_t> i32 = {std::numeric_limits<std::int32_t>::min(), -1, 7};
  std::vector<std::int64_t> i64 = {std::numeric_limits<std::int64_t>::max()};
  std::vector<float> empty;
  std::int64_t step = 42;
  const std::vector<TestVar> vars = {
      test_var("f", {2, 3}, f),         test_var("d", {3}, d),
      test_var("i32", {3, 1}, i32),     test_var("i64", {}, i64),
      test_var("empty", {0, 4}, empty), test_var("global_step", step)};
  Saver saver;
  const std::string prefix = saver.save(vars, (dir.path / "model.ckpt").string(), 42);

  const hookfuse::io::CheckpointReader reader(prefix);
  const auto shapes = reader.get_variable_to_shape_map();
  CHECK(shapes.at("f") == hookfuse::io::TensorShape{2, 3});
  CHECK(shapes.at("d") == hookfuse::io::TensorShape{3});
  CHECK(shapes.at("i64") == hookfuse::io::TensorShape{});
  CHECK(shapes.at("empty") == hookfuse::io::TensorShape{0, 4});
  CHECK(reader.get_variable_to_dtype_map().at("global_step") == hookfuse::io::DataType::DT_INT64);

  std::vector<float> f2(6, 9.0f);
  std::vector<double> d2(3, 9.0);
  std::vector<std::int32_t> i32b(3, 9);
  std::vector<std::int64_t> i64b(1, 9);
  std::vector<float> empty2;
  std::int64_t step2 = 0;
  const std::vector<TestVar> into = {
      test_var("f", {2, 3}, f2),         test_var("d", {3}, d2),
      test_var("i32", {3, 1}, i32b),     test_var("i64", {}, i64b),
      test_var("empty", {0, 4}, empty2), test_var("global_step", step2)};
  saver.restore(into, prefix);
  CHECK(std::memcmp(f.data(), f2.data(), 6 * sizeof(float)) == 0);
  CHECK(std::memcmp(d.data(), d2.data(), 3 * sizeof(double)) == 0);
  CHECK(i32 == i32b);
  CHECK(i64 == i64b);
  CHECK(step2 == 42);
}

TEST_CASE("restore errors name the variable, both dtypes or shapes and the file, nothing written") {
  TempDir dir("saver");
  Saver saver;
  Model m;
  m.set(5);
  const std::string prefix = saver.save(m.vars(), (dir.path / "model.ckpt").string(), 5);
  const std::string index = (dir.path / "model.ckpt-5.index").string();

  SECTION("a variable missing from the checkpoint") {
    std::vector<float> w(6, 1.0f), extra(2, 1.0f);
    std::int64_t step = -1;
    const std::vector<TestVar> vars = {test_var("dense/kernel", {2, 3}, w),
                                       test_var("dense/extra", {2}, extra),
                                       test_var("global_step", step)};
    const std::string msg =
        error_of<hookfuse::io::NotFoundError>([&] { saver.restore(vars, prefix); });
    CHECK_THAT(msg, Catch::Contains("'dense/extra' (DT_FLOAT [2])") &&
                        Catch::Contains("not in the checkpoint") && Catch::Contains(index));
    CHECK(w == std::vector<float>(6, 1.0f));
    CHECK(step == -1);
  }
  SECTION("a shape mismatch: the [1, 3] row versus the stored [3]") {
    std::vector<float> w(6, 1.0f), b(3, 1.0f);
    std::int64_t step = -1;
    const std::vector<TestVar> vars = {test_var("dense/kernel", {2, 3}, w),
                                       test_var("dense/bias", {1, 3}, b),
                                       test_var("global_step", step)};
    const std::string msg = error_of<hookfuse::ValueError>([&] { saver.restore(vars, prefix); });
    CHECK_THAT(msg, Catch::Contains("'dense/bias' (DT_FLOAT [1,3])") &&
                        Catch::Contains("'dense/bias' (DT_FLOAT [3])") && Catch::Contains(index));
    CHECK(w == std::vector<float>(6, 1.0f));
    CHECK(step == -1);
  }
  SECTION("a dtype mismatch") {
    std::vector<double> w(6, 1.0);
    const std::vector<TestVar> vars = {test_var("dense/kernel", {2, 3}, w)};
    const std::string msg = error_of<hookfuse::ValueError>([&] { saver.restore(vars, prefix); });
    CHECK_THAT(msg, Catch::Contains("'dense/kernel' (DT_DOUBLE [2,3])") &&
                        Catch::Contains("(DT_FLOAT [2,3])"));
    CHECK(w == std::vector<double>(6, 1.0));
  }
  SECTION("no checkpoint under the prefix: TensorFlow's ValueError") {
    const auto vars = m.vars();
    const std::string missing = (dir.path / "model.ckpt-6").string();
    CHECK(error_of<hookfuse::ValueError>([&] {
            saver.restore(vars, missing);
          }).starts_with("The passed save_path is not a valid checkpoint: " + missing + ";"));
  }
}

TEST_CASE("a corrupt tensor is a DataLossError and no variable is written") {
  TempDir dir("saver");
  Saver saver;
  Model m;
  m.set(5);
  const std::string prefix = saver.save(m.vars(), (dir.path / "model.ckpt").string(), 5);
  {
    // The data file holds kernel (24 bytes), bias (12), step (8) in save order: flip a byte of
    // the step, read last in key order (dense/bias, dense/kernel, global_step).
    std::fstream f(dir.path / "model.ckpt-5.data-00000-of-00001",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(36);
    f.put(static_cast<char>(0x55));
  }
  Model into;
  into.set(1);
  CHECK_THROWS_AS(saver.restore(into.vars(), prefix), hookfuse::io::DataLossError);
  Model unchanged;
  unchanged.set(1);
  CHECK(into.w == unchanged.w);
  CHECK(into.b == unchanged.b);
  CHECK(into.step == 1);
}

TEST_CASE("stale temporaries and index-less data files of a killed process go at the next save") {
  TempDir dir("saver");
  for (const char* name : {"model.ckpt-5.index.tempstate0123456789abcdef",
                           "model.ckpt-5.data-00000-of-00001.tempstatefedcba9876543210",
                           "checkpoint.tmp-999999-0", "notes.txt", "other-1.index.tempstate00",
                           "model.ckpt-4.data-00000-of-00001",  // its index is gone: removed
                           "model.ckpt-3.data-00000-of-00001", "model.ckpt-3.index"})
    std::ofstream(dir.path / name) << "x";
  Saver saver;
  Model m;
  saver.save(m.vars(), (dir.path / "model.ckpt").string(), 6);
  std::vector<std::string> expected = ckpt_files({6});
  expected.push_back("notes.txt");
  expected.push_back("other-1.index.tempstate00");         // another basename: not this saver's
  expected.push_back("model.ckpt-3.data-00000-of-00001");  // complete: left alone
  expected.push_back("model.ckpt-3.index");
  std::sort(expected.begin(), expected.end());
  CHECK(files_in(dir.path) == expected);
}

TEST_CASE("save errors: a missing directory, a bad variable list") {
  TempDir dir("saver");
  Saver saver;
  Model m;
  const std::string missing = (dir.path / "nope" / "model.ckpt").string();
  CHECK_THAT(error_of<hookfuse::io::IoError>([&] { saver.save(m.vars(), missing, 1); }),
             Catch::Contains(missing + "-1"));
  std::vector<float> w(6);
  const std::vector<TestVar> twice = {test_var("w", {6}, w), test_var("w", {6}, w)};
  CHECK_THAT(error_of<hookfuse::ValueError>(
                 [&] { saver.save(twice, (dir.path / "model.ckpt").string(), 1); }),
             Catch::Contains("'w' is listed twice"));
  CHECK(files_in(dir.path).empty());
}

TEST_CASE("Saver options: defaults as TensorFlow's, positive hours required") {
  const Saver saver;
  CHECK(saver.max_to_keep() == 5);
  CHECK(saver.keep_checkpoint_every_n_hours() == 10000.0);
  CHECK_THROWS_AS(Saver(Opts{.max_to_keep = 1, .keep_checkpoint_every_n_hours = 0.0}),
                  hookfuse::ValueError);
}

// The crash test's checker (tests/kill/checkpoint_check.hpp) must fail on the damage it looks
// for; here each kind is made by hand.

TEST_CASE("the crash checker accepts a good directory and catches each kind of damage") {
  using hookfuse_test::ToyState;
  TempDir dir("saver");
  Saver saver(Opts{.max_to_keep = 3});
  ToyState m;
  const std::string save_path = (dir.path / "model.ckpt").string();
  for (int s = 1; s <= 3; ++s) {
    m.set(s);
    saver.save(m.vars(), save_path, s);
  }
  auto restore_into = [](Saver& fresh, const fs::path& d) {
    ToyState k;
    auto restored = fresh.restore_latest(k.vars(), d.string());
    return std::make_pair(restored, k.as_expected());
  };
  auto check = [&] {
    return hookfuse_test::check_checkpoint_dir(dir.path, ToyState::expected_at, restore_into);
  };
  SECTION("good") {
    const auto r = check();
    CHECK(r.ok);
    CHECK(r.step == 3);
  }
  SECTION("a flipped byte in the latest data file") {
    std::fstream f(dir.path / "model.ckpt-3.data-00000-of-00001",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put(static_cast<char>(0x7f));
    f.close();
    const auto r = check();
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.message, Catch::Contains("CRC") || Catch::Contains("crc"));
  }
  SECTION("values that are not those of the global step") {
    m.set(5);
    m.global_step = 4;
    saver.save(m.vars(), save_path, 4);
    const auto r = check();
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.message, Catch::Contains("other values"));
  }
  SECTION("the latest index missing") {
    fs::remove(dir.path / "model.ckpt-3.index");
    CHECK_FALSE(check().ok);
  }
  SECTION("an older index without its data file") {
    fs::remove(dir.path / "model.ckpt-2.data-00000-of-00001");
    CHECK_FALSE(check().ok);
  }
}

TEST_CASE("re-saving a prefix with the same values leaves its files alone") {
  TempDir dir("saver");
  Saver saver;
  Model m;
  m.set(3);
  const std::string save_path = (dir.path / "model.ckpt").string();
  saver.save(m.vars(), save_path, 3);
  const fs::path index = dir.path / "model.ckpt-3.index";
  const auto before = fs::last_write_time(index);
  fs::last_write_time(index, before - std::chrono::hours(1));  // a mark a rewrite would lose
  saver.save(m.vars(), save_path, 3);
  CHECK(fs::last_write_time(index) == before - std::chrono::hours(1));
  m.set(4);  // other values: rewritten
  saver.save(m.vars(), save_path, 3);
  CHECK(fs::last_write_time(index) != before - std::chrono::hours(1));
  CHECK(hookfuse::io::CheckpointReader(dir.path / "model.ckpt-3")
            .get_tensor<std::int64_t>("global_step") == std::vector<std::int64_t>{4});
}

TEST_CASE(
    "CheckpointManager: re-saving the newest prefix with other values first points the state at "
    "the one before") {
  // The moment between removing the old index and renaming the new one in cannot be observed
  // from outside; a failure at that point can: model.ckpt-2.index replaced by a directory makes
  // the writer's removal of the old index fail after the saver stepped the state file back.
  TempDir dir("saver");
  double now = 10.0;
  CheckpointManager saver(Opts{}, [&] { return now; });
  Model m;
  const std::string save_path = (dir.path / "model.ckpt").string();
  m.set(1);
  saver.save(m.vars(), save_path, 1);
  now = 11.0;
  m.set(2);
  saver.save(m.vars(), save_path, 2);
  fs::remove(dir.path / "model.ckpt-2.index");
  fs::create_directory(dir.path / "model.ckpt-2.index");
  m.set(3);
  CHECK_THROWS_AS(saver.save(m.vars(), save_path, 2), hookfuse::io::IoError);
  CHECK(read_text(dir.path / "checkpoint") ==
        "model_checkpoint_path: \"model.ckpt-1\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-1\"\n"
        "all_model_checkpoint_timestamps: 10.0\n"
        "last_preserved_timestamp: 10.0\n");
  CHECK(hookfuse::io::latest_checkpoint(dir.path) == dir.path / "model.ckpt-1");
}

// --- io::Saver: tf.compat.v1.train.Saver's rule and state-file form (issue 36) ------------

TEST_CASE("Saver: keep_checkpoint_every_n_hours by TF1's rule, saves every 1200 s (fake clock)") {
  // TF1 (saver.py): _next_checkpoint_time = creation + N*3600; a checkpoint dropped from the
  // max_to_keep window is kept iff its time > _next_checkpoint_time (strictly), and then
  // _next_checkpoint_time += N*3600 (from its old value, not from the checkpoint's time).
  // Creation at T0, N = 1 h, so next = T0+3600. max_to_keep = 2. Step k is saved at T0+1200k.
  //   k=1 @1200, k=2 @2400: nothing dropped.
  //   k=3 @3600:  drops 1 (1200):  1200 > 3600? no  -> deleted.
  //   k=4 @4800:  drops 2 (2400):  2400 > 3600? no  -> deleted.
  //   k=5 @6000:  drops 3 (3600):  3600 > 3600? no (strict) -> deleted.
  //   k=6 @7200:  drops 4 (4800):  4800 > 3600? yes -> kept; next = 3600+3600 = 7200.
  //   k=7 @8400:  drops 5 (6000):  6000 > 7200? no  -> deleted.
  //   k=8 @9600:  drops 6 (7200):  7200 > 7200? no (strict) -> deleted.
  //   k=9 @10800: drops 7 (8400):  8400 > 7200? yes -> kept; next = 7200+3600 = 10800.
  //   k=10 @12000: drops 8 (9600): 9600 > 10800? no -> deleted.
  // On disk: 4, 7, 9, 10; listed: 9, 10; next = T0+10800.
  // tf.train.CheckpointManager's rule on the same saves (kept iff time - 3600 >= last
  // preserved, which starts at T0 and becomes the kept one's time):
  //   drops 1 (1200-3600 < 0), 2 (2400-3600 < 0): deleted; 3 (3600-3600 = 0 >= 0): kept,
  //   last = 3600; 4 (1200 < 3600), 5 (2400 < 3600): deleted; 6 (3600 >= 3600): kept,
  //   last = 7200; 7 (4800 < 7200), 8 (6000 < 7200): deleted. On disk: 3, 6, 9, 10.
  const double t0 = 100000.0;
  double now = t0;
  Model m;
  auto run = [&](auto& saver, const fs::path& d) {
    for (int k = 1; k <= 10; ++k) {
      now = t0 + 1200.0 * k;
      m.set(k);
      saver.save(m.vars(), (d / "model.ckpt").string(), k);
    }
  };
  TempDir dir("saver");
  Saver saver(Opts{.max_to_keep = 2, .keep_checkpoint_every_n_hours = 1.0}, [&] { return now; });
  CHECK(saver.next_checkpoint_time() == t0 + 3600.0);
  run(saver, dir.path);
  CHECK(files_in(dir.path) == ckpt_files({4, 7, 9, 10}));
  CHECK(saver.last_checkpoints() ==
        std::vector<std::string>{(dir.path / "model.ckpt-9").lexically_normal().string(),
                                 (dir.path / "model.ckpt-10").lexically_normal().string()});
  CHECK(saver.next_checkpoint_time() == t0 + 10800.0);

  TempDir other("saver_manager");
  now = t0;
  CheckpointManager manager(Opts{.max_to_keep = 2, .keep_checkpoint_every_n_hours = 1.0},
                            [&] { return now; });
  run(manager, other.path);
  CHECK(files_in(other.path) == ckpt_files({3, 6, 9, 10}));

  // A restarted Saver counts from its own creation (TF1 stores nothing of the rule): created
  // at T0+12000, next = T0+15600. It takes over 9 and 10 with their .index modification times
  // (the state file has no timestamps), real times later than the fake clock, so they count as
  // now = T0+12000. Saves 11 @T0+13200 (drops 9: 12000 > 15600? no -> deleted) and 12
  // @T0+14400 (drops 10: no -> deleted). On disk: 4, 7 (kept before), 11, 12.
  now = t0 + 12000.0;
  Saver again(Opts{.max_to_keep = 2, .keep_checkpoint_every_n_hours = 1.0}, [&] { return now; });
  CHECK(again.next_checkpoint_time() == t0 + 15600.0);
  Model into;
  REQUIRE(again.restore_latest(into.vars(), dir.path.string()));
  CHECK(into.step == 10);
  for (int k = 11; k <= 12; ++k) {
    now = t0 + 1200.0 * k;
    m.set(k);
    again.save(m.vars(), (dir.path / "model.ckpt").string(), k);
  }
  CHECK(files_in(dir.path) == ckpt_files({4, 7, 11, 12}));
  CHECK(again.next_checkpoint_time() == t0 + 15600.0);
}

TEST_CASE("Saver: the state file is TF1's text: absolute paths, no timestamps") {
  // checkpoint_management.py, update_checkpoint_state_internal(save_relative_paths=False) with
  // an absolute save_dir: the paths as given (absolute), no timestamp fields (TF1's Saver.save
  // passes none), so neither all_model_checkpoint_timestamps nor last_preserved_timestamp.
  TempDir dir("saver");
  const std::string d = dir.path.lexically_normal().generic_string();
  double now = 1000.0;
  Model m;
  SECTION("default: absolute") {
    Saver saver(Opts{.max_to_keep = 2}, [&] { return now; });
    for (int s : {1, 2, 3}) saver.save(m.vars(), d + "/model.ckpt", s);
    CHECK(files_in(dir.path) == ckpt_files({2, 3}));
    CHECK(read_text(dir.path / "checkpoint") == "model_checkpoint_path: \"" + d +
                                                    "/model.ckpt-3\"\n"
                                                    "all_model_checkpoint_paths: \"" +
                                                    d +
                                                    "/model.ckpt-2\"\n"
                                                    "all_model_checkpoint_paths: \"" +
                                                    d + "/model.ckpt-3\"\n");
  }
  SECTION("save_relative_paths = true: relative to the directory, still no timestamps") {
    Saver saver(hookfuse::SaverOptions{.max_to_keep = 2, .save_relative_paths = true},
                [&] { return now; });
    CHECK(saver.save_relative_paths());
    for (int s : {1, 2, 3}) saver.save(m.vars(), d + "/model.ckpt", s);
    CHECK(read_text(dir.path / "checkpoint") ==
          "model_checkpoint_path: \"model.ckpt-3\"\n"
          "all_model_checkpoint_paths: \"model.ckpt-2\"\n"
          "all_model_checkpoint_paths: \"model.ckpt-3\"\n");
  }
  SECTION("max_to_keep = 0: only the newest listed, every file kept") {
    Saver saver(Opts{.max_to_keep = 0}, [&] { return now; });
    for (int s : {1, 2}) saver.save(m.vars(), d + "/model.ckpt", s);
    CHECK(files_in(dir.path) == ckpt_files({1, 2}));
    CHECK(read_text(dir.path / "checkpoint") == "model_checkpoint_path: \"" + d +
                                                    "/model.ckpt-2\"\n"
                                                    "all_model_checkpoint_paths: \"" +
                                                    d + "/model.ckpt-2\"\n");
  }
}

TEST_CASE("readers take both forms: Saver over a manager's directory and back, hand-written") {
  TempDir dir("saver");
  const fs::path D = dir.path.lexically_normal();
  const std::string d = D.generic_string();
  const std::string save_path = d + "/model.ckpt";
  double now = 500.0;
  Model m;
  {
    CheckpointManager manager(Opts{}, [&] { return now; });
    m.set(1);
    manager.save(m.vars(), save_path, 1);
    now = 510.0;
    m.set(2);
    manager.save(m.vars(), save_path, 2);
  }
  REQUIRE(read_text(D / "checkpoint").starts_with("model_checkpoint_path: \"model.ckpt-2\"\n"));
  // The Saver takes over the relative list with timestamps and rewrites it in TF1's form.
  now = 600.0;
  Saver saver(Opts{}, [&] { return now; });
  Model into;
  const auto restored = saver.restore_latest(into.vars(), d);
  REQUIRE(restored);
  CHECK(fs::path(*restored) == D / "model.ckpt-2");
  CHECK(into.step == 2);
  CHECK(saver.last_checkpoints() ==
        std::vector<std::string>{(D / "model.ckpt-1").string(), (D / "model.ckpt-2").string()});
  now = 620.0;
  m.set(3);
  saver.save(m.vars(), save_path, 3);
  CHECK(read_text(D / "checkpoint") == "model_checkpoint_path: \"" + d +
                                           "/model.ckpt-3\"\n"
                                           "all_model_checkpoint_paths: \"" +
                                           d +
                                           "/model.ckpt-1\"\n"
                                           "all_model_checkpoint_paths: \"" +
                                           d +
                                           "/model.ckpt-2\"\n"
                                           "all_model_checkpoint_paths: \"" +
                                           d + "/model.ckpt-3\"\n");
  CHECK(hookfuse::io::latest_checkpoint(D) == D / "model.ckpt-3");
  // A manager takes over the absolute list without timestamps: each counts as the .index's
  // modification time, a real time later than the fake clock, so as now = 700; no
  // last_preserved_timestamp in the file, so its creation time, 700.
  now = 700.0;
  CheckpointManager manager(Opts{}, [&] { return now; });
  REQUIRE(manager.restore_latest(into.vars(), d));
  CHECK(into.step == 3);
  now = 710.0;
  m.set(4);
  manager.save(m.vars(), save_path, 4);
  CHECK(read_text(D / "checkpoint") ==
        "model_checkpoint_path: \"model.ckpt-4\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-1\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-2\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-3\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-4\"\n"
        "all_model_checkpoint_timestamps: 700.0\n"
        "all_model_checkpoint_timestamps: 700.0\n"
        "all_model_checkpoint_timestamps: 700.0\n"
        "all_model_checkpoint_timestamps: 710.0\n"
        "last_preserved_timestamp: 700.0\n");
  // Hand-written: one relative and one absolute path, with timestamp lines.
  std::ofstream(D / "checkpoint") << "model_checkpoint_path: \"" << d << "/model.ckpt-4\"\n"
                                  << "all_model_checkpoint_paths: \"model.ckpt-3\"\n"
                                  << "all_model_checkpoint_paths: \"" << d << "/model.ckpt-4\"\n"
                                  << "all_model_checkpoint_timestamps: 650.0\n"
                                  << "all_model_checkpoint_timestamps: 710.0\n";
  Model back;
  const auto r = saver.restore_latest(back.vars(), d);
  REQUIRE(r);
  CHECK(fs::path(*r) == D / "model.ckpt-4");
  CHECK(back.step == 4);
  CHECK(saver.last_checkpoints() ==
        std::vector<std::string>{(D / "model.ckpt-3").string(), (D / "model.ckpt-4").string()});
  back.set(0);
  REQUIRE(manager.restore_latest(back.vars(), d));
  CHECK(back.step == 4);
  CHECK(manager.last_checkpoints() == saver.last_checkpoints());
  CHECK(hookfuse::io::latest_checkpoint(D) == D / "model.ckpt-4");
}
