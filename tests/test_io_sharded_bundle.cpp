// Sharded tensor bundles ("P.data-0000K-of-0000N"), read from a two-shard checkpoint that
// tests/scripts/make_sharded_bundle.py writes from the file format alone (Python standard
// library, no hookfuse code): the expected values below are the ones that generator stores
// (its TENSORS table), never values written by hookfuse's BundleWriter. The generator runs
// with the python3 found at configure time (HOOKFUSE_PYTHON3); without it the tests report
// themselves skipped.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <hookfuse/io/bundle_merge.hpp>
#include <hookfuse/io/init_from_checkpoint.hpp>
#include <hookfuse/io/saver.hpp>
#include <hookfuse/io/tensor_bundle.hpp>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "bundle_test_util.hpp"
#include "checkpoint_test_vars.hpp"
#include "error_of.hpp"
#include "skip.hpp"

#ifndef HOOKFUSE_PYTHON3
#define HOOKFUSE_PYTHON3 ""
#endif
#ifndef HOOKFUSE_SHARD_GENERATOR
#define HOOKFUSE_SHARD_GENERATOR ""
#endif

namespace io = hookfuse::io;
namespace fs = std::filesystem;
using hookfuse_test::error_of;
using hookfuse_test::read_bytes;
using hookfuse_test::TempDir;
using hookfuse_test::test_var;
using hookfuse_test::TestVar;
using hookfuse_test::write_bytes;

namespace {

/// Runs the generator: "<dir>/model.ckpt-0" with two shards, `args` appended to its command.
fs::path generate(const TempDir& dir, const std::string& args = "") {
  const std::string python = HOOKFUSE_PYTHON3;
  const std::string generator = HOOKFUSE_SHARD_GENERATOR;
  std::error_code ec;
  if (python.empty() || !fs::exists(python, ec))
    HOOKFUSE_SKIP("no python3 (configure time: '"
                  << python << "') to run tests/scripts/make_sharded_bundle.py");
  if (generator.empty() || !fs::exists(generator, ec))
    HOOKFUSE_SKIP("generator '" << generator << "' not found");
  const fs::path prefix = dir / "model.ckpt-0";
  const std::string cmd = "'" + python + "' '" + generator + "' '" + prefix.string() + "' " + args;
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  return prefix;
}

fs::path shard_file(const fs::path& prefix, std::int32_t k) {
  return io::data_filename(prefix, k, 2);
}

}  // namespace

TEST_CASE("a two-shard bundle from an independent writer reads each tensor from its shard") {
  TempDir dir;
  const fs::path prefix = generate(dir);
  CHECK(dir.files() == std::vector<std::string>{"model.ckpt-0.data-00000-of-00002",
                                                "model.ckpt-0.data-00001-of-00002",
                                                "model.ckpt-0.index"});
  const io::CheckpointReader r(prefix);
  const io::BundleReader& b = r.bundle();
  STATIC_REQUIRE(
      std::is_nothrow_move_constructible_v<io::BundleReader>);  // shards behind a pointer
  CHECK(b.num_shards() == 2);
  CHECK(b.data_path(1) == fs::absolute(shard_file(prefix, 1)));
  CHECK(b.entry("dense/bias").shard_id == 0);
  CHECK(b.entry("global_step").shard_id == 0);
  CHECK(b.entry("dense/kernel").shard_id == 1);
  CHECK(b.entry("scale").shard_id == 1);
  CHECK(b.entry("dense/kernel").offset == 0);  // offsets count from the start of each shard

  // The generator's TENSORS table.
  CHECK(r.get_tensor<float>("dense/bias") == std::vector<float>{0.25f, -1.5f, 3.0f});
  CHECK(r.get_tensor<std::int64_t>("global_step") == std::vector<std::int64_t>{1234});
  CHECK(r.get_tensor<float>("dense/kernel") ==
        std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.5f});
  CHECK(r.get_tensor<double>("scale") == std::vector<double>{0.125});
  CHECK(r.get_tensor<std::int32_t>("steps_per_shard") == std::vector<std::int32_t>{7, -8});
  CHECK(r.get_variable_to_shape_map().at("dense/kernel") == io::TensorShape{2, 3});

  const auto vars = io::list_variables(prefix);
  REQUIRE(vars.size() == 5);
  CHECK(vars[0] == std::pair<std::string, io::TensorShape>{"dense/bias", io::TensorShape{3}});
  CHECK(vars[4].first == "steps_per_shard");
}

TEST_CASE("io::Saver restores and init_from_checkpoint warm-starts from a two-shard bundle") {
  TempDir dir;
  const fs::path prefix = generate(dir);
  std::vector<float> kernel(6, 0.0f), bias(3, 0.0f);
  std::vector<double> scale(1, 0.0);
  std::int64_t step = 0;
  const std::vector<TestVar> vars = {test_var("dense/kernel", {2, 3}, kernel),
                                     test_var("dense/bias", {3}, bias),
                                     test_var("scale", {}, scale), test_var("global_step", step)};
  const io::Saver saver;
  saver.restore(vars, prefix.string());
  CHECK(kernel == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.5f});
  CHECK(bias == std::vector<float>{0.25f, -1.5f, 3.0f});
  CHECK(scale == std::vector<double>{0.125});
  CHECK(step == 1234);

  std::vector<float> w(6, 0.0f), b(3, 0.0f);
  const std::vector<TestVar> warm = {test_var("head/kernel", {2, 3}, w),
                                     test_var("head/bias", {3}, b)};
  const auto result = io::init_from_checkpoint(prefix, {{"dense/", "head/"}}, warm);
  CHECK(w == kernel);
  CHECK(b == bias);
  CHECK(result.variables.size() == 2);
}

TEST_CASE("a deleted shard opens, and reading a tensor in it names the missing file") {
  TempDir dir;
  const fs::path prefix = generate(dir);
  const fs::path deleted = fs::absolute(shard_file(prefix, 1));
  REQUIRE(fs::remove(deleted));

  const io::CheckpointReader r(prefix);  // opening reads the index only, as TensorFlow's
  CHECK(r.keys().size() == 5);
  CHECK(io::list_variables(prefix).size() == 5);
  CHECK(r.get_tensor<float>("dense/bias") == std::vector<float>{0.25f, -1.5f, 3.0f});
  CHECK(r.get_tensor<std::int64_t>("global_step") == std::vector<std::int64_t>{1234});

  const std::string msg =
      error_of<io::NotFoundError>([&] { (void)r.get_tensor<float>("dense/kernel"); });
  CHECK_THAT(msg, Catch::Contains(deleted.string()) && Catch::Contains("shard 1 of 2") &&
                      Catch::Contains("tensor 'dense/kernel'"));
  CHECK_THAT(error_of<io::NotFoundError>([&] { (void)r.bundle().lookup_bytes("scale"); }),
             Catch::Contains(deleted.string()));
  // Still readable after the failed open of the other shard.
  CHECK(r.get_tensor<float>("dense/bias") == std::vector<float>{0.25f, -1.5f, 3.0f});

  // Saver.restore reads the shards of the variables it restores, as TensorFlow's restore op:
  // the shard-0 variables restore; one variable in the deleted shard fails the whole restore,
  // naming the file, and writes no variable.
  std::vector<float> bias(3, 0.0f), kernel(6, 0.0f);
  io::Saver().restore(std::vector<TestVar>{test_var("dense/bias", {3}, bias)}, prefix.string());
  CHECK(bias == std::vector<float>{0.25f, -1.5f, 3.0f});
  std::fill(bias.begin(), bias.end(), 9.0f);
  const std::vector<TestVar> both = {test_var("dense/bias", {3}, bias),
                                     test_var("dense/kernel", {2, 3}, kernel)};
  CHECK_THAT(error_of<io::NotFoundError>([&] { io::Saver().restore(both, prefix.string()); }),
             Catch::Contains(deleted.string()));
  CHECK(bias == std::vector<float>(3, 9.0f));
  CHECK(kernel == std::vector<float>(6, 0.0f));
}

TEST_CASE("a deleted first shard is named too, and the second shard still reads") {
  TempDir dir;
  const fs::path prefix = generate(dir);
  const fs::path deleted = fs::absolute(shard_file(prefix, 0));
  REQUIRE(fs::remove(deleted));
  const io::BundleReader r(prefix);
  CHECK(r.lookup<double>("scale") == std::vector<double>{0.125});
  CHECK_THAT(error_of<io::NotFoundError>([&] { (void)r.lookup<float>("dense/bias"); }),
             Catch::Contains(deleted.string()) && Catch::Contains("shard 0 of 2"));
  CHECK(io::detail::missing_checkpoint_file(fs::absolute(prefix)) == deleted);
}

TEST_CASE("a truncated shard is an error naming that shard when its tensor is read") {
  TempDir dir;
  const fs::path prefix = generate(dir);
  const fs::path shard1 = shard_file(prefix, 1);
  auto bytes = read_bytes(shard1);
  bytes.resize(10);  // dense/kernel is bytes [0, 24)
  write_bytes(shard1, bytes);
  const io::BundleReader r(prefix);
  CHECK(r.lookup<float>("dense/bias") == std::vector<float>{0.25f, -1.5f, 3.0f});
  CHECK_THAT(error_of<io::DataLossError>([&] { (void)r.lookup<float>("dense/kernel"); }),
             Catch::Contains(fs::absolute(shard1).string()) &&
                 Catch::Contains("tensor 'dense/kernel'") &&
                 Catch::Contains("data file has 10 bytes"));
}

TEST_CASE("a flipped byte in the second shard is a CRC error naming that shard") {
  TempDir dir;
  const fs::path prefix = generate(dir);
  const fs::path shard1 = shard_file(prefix, 1);
  auto bytes = read_bytes(shard1);
  bytes.at(25) ^= 0x01;  // inside scale (bytes 24..31)
  write_bytes(shard1, bytes);
  const io::BundleReader r(prefix);
  CHECK_THAT(error_of<io::DataLossError>([&] { (void)r.lookup<double>("scale"); }),
             Catch::Contains(fs::absolute(shard1).string()) && Catch::Contains("tensor 'scale'") &&
                 Catch::Contains("CRC32C mismatch"));
  CHECK(r.lookup<float>("dense/kernel") == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.5f});
}

TEST_CASE("a header with num_shards 0 is refused naming the field") {
  TempDir dir;
  const fs::path prefix = generate(dir, "--header-num-shards 0");
  CHECK_THAT(error_of<io::DataLossError>([&] { io::BundleReader r(prefix); }),
             Catch::Contains(fs::absolute(io::meta_filename(prefix)).string()) &&
                 Catch::Contains("BundleHeaderProto.num_shards (field 1) is 0, expected >= 1"));
}

TEST_CASE("an entry whose shard_id is out of range is refused naming the field") {
  TempDir dir;
  SECTION("shard_id 2 of 2 shards") {
    const fs::path prefix = generate(dir, "--shard-id scale=2");
    CHECK_THAT(error_of<io::DataLossError>([&] { io::BundleReader r(prefix); }),
               Catch::Contains(fs::absolute(io::meta_filename(prefix)).string()) &&
                   Catch::Contains("tensor 'scale'") &&
                   Catch::Contains("BundleEntryProto.shard_id (field 3) is 2, expected 0 to 1 "
                                   "(the header's num_shards is 2)"));
  }
  SECTION("shard_id -1") {
    const fs::path prefix = generate(dir, "--shard-id dense/bias=-1");
    CHECK_THAT(error_of<io::DataLossError>([&] { io::BundleReader r(prefix); }),
               Catch::Contains("tensor 'dense/bias'") &&
                   Catch::Contains("shard_id (field 3) is -1, expected 0 to 1"));
  }
  SECTION("a header saying one shard, an entry in shard 1") {
    const fs::path prefix = generate(dir, "--header-num-shards 1 --shard-id dense/kernel=1");
    CHECK_THAT(error_of<io::DataLossError>([&] { io::BundleReader r(prefix); }),
               Catch::Contains("tensor 'dense/kernel'") &&
                   Catch::Contains("shard_id (field 3) is 1, expected 0 (the header's "
                                   "num_shards is 1)"));
  }
}

// ---- writing: io::Saver with sharded = true ------------------------------------------------

namespace {

struct ShardedOptions {  // the fields io::Saver reads from the session's SaverOptions
  int max_to_keep = 5;
  double keep_checkpoint_every_n_hours = 10000.0;
  bool sharded = true;
  int num_shards = 2;
};

}  // namespace

TEST_CASE("Saver with sharded = true writes one index and a data file per shard, round-robin") {
  TempDir dir;
  std::vector<float> w = {1.0f, 2.0f, 3.0f, 4.0f}, b = {0.5f, -0.5f};
  std::int64_t step = 7;
  const std::vector<TestVar> vars = {test_var("dense/kernel", {2, 2}, w),
                                     test_var("dense/bias", {2}, b), test_var("global_step", step)};
  io::Saver saver(ShardedOptions{});
  const std::string prefix = saver.save(vars, (dir / "model.ckpt").string(), 7);
  CHECK(dir.files() == std::vector<std::string>{"checkpoint", "model.ckpt-7.data-00000-of-00002",
                                                "model.ckpt-7.data-00001-of-00002",
                                                "model.ckpt-7.index"});
  const io::BundleReader r(prefix);
  CHECK(r.num_shards() == 2);
  // Variable i in shard i mod 2: kernel and global_step in shard 0, bias in shard 1.
  CHECK(r.entry("dense/kernel").shard_id == 0);
  CHECK(r.entry("global_step").shard_id == 0);
  CHECK(r.entry("dense/bias").shard_id == 1);
  CHECK(r.entry("dense/bias").offset == 0);
  CHECK(fs::file_size(shard_file(dir / "model.ckpt-7", 1)) == 8);
  CHECK(r.lookup<float>("dense/kernel") == w);
  CHECK(io::load_checkpoint(dir.path()).get_tensor<float>("dense/bias") == b);

  std::vector<float> w2(4, 0.0f), b2(2, 0.0f);
  std::int64_t step2 = 0;
  const std::vector<TestVar> into = {test_var("dense/kernel", {2, 2}, w2),
                                     test_var("dense/bias", {2}, b2),
                                     test_var("global_step", step2)};
  io::Saver fresh(ShardedOptions{});
  CHECK(fresh.restore_latest(into, dir.path().string()) == prefix);
  CHECK(w2 == w);
  CHECK(b2 == b);
  CHECK(step2 == 7);
}

TEST_CASE("a sharded save keeps at most one shard per variable and refuses num_shards 0") {
  TempDir dir;
  std::vector<float> v = {1.0f};
  const std::vector<TestVar> vars = {test_var("v", {1}, v)};
  io::Saver saver(ShardedOptions{.num_shards = 4});
  const std::string prefix = saver.save(vars, (dir / "model.ckpt").string(), 1);
  CHECK(io::BundleReader(prefix).num_shards() == 1);
  CHECK(fs::exists(dir / "model.ckpt-1.data-00000-of-00001"));
  CHECK_THAT(error_of<hookfuse::ValueError>([] { io::Saver s(ShardedOptions{.num_shards = 0}); }),
             Catch::Contains("num_shards must be >= 1") && Catch::Contains("got 0"));
}

TEST_CASE("a sharded save killed before its merge leaves the previous checkpoint current") {
  TempDir dir;
  std::vector<float> v = {1.0f, 2.0f}, u = {3.0f};
  const std::vector<TestVar> vars = {test_var("v", {2}, v), test_var("u", {1}, u)};
  {
    io::Saver saver(ShardedOptions{});
    saver.save(vars, (dir / "model.ckpt").string(), 1);
  }
  const std::string state = hookfuse_test::read_text(dir / "checkpoint");
  // What a kill during the save of step 2 leaves: its shards written under "model.ckpt-2_temp/"
  // and one data file already renamed, but no "model.ckpt-2.index".
  fs::create_directory(dir / "model.ckpt-2_temp");
  {
    io::BundleWriter part(dir / "model.ckpt-2_temp" / "part-00000-of-00002");
    part.add("v", {2}, std::vector<float>{9.0f, 9.0f});
    part.finish();
    io::BundleWriter part1(dir / "model.ckpt-2_temp" / "part-00001-of-00002");
    part1.add("u", {1}, std::vector<float>{9.0f});
    part1.finish();
  }
  fs::rename(dir / "model.ckpt-2_temp" / "part-00000-of-00002.data-00000-of-00001",
             dir / "model.ckpt-2.data-00000-of-00002");

  CHECK(io::latest_checkpoint(dir.path()) == fs::path(dir / "model.ckpt-1"));
  std::fill(v.begin(), v.end(), 0.0f);
  io::Saver restarted(ShardedOptions{});
  CHECK(restarted.restore_latest(vars, dir.path().string()) == (dir / "model.ckpt-1").string());
  CHECK(v == std::vector<float>{1.0f, 2.0f});
  CHECK(hookfuse_test::read_text(dir / "checkpoint") == state);
  // The next save removes the orphans and saves step 2 whole.
  v = {5.0f, 6.0f};
  restarted.save(vars, (dir / "model.ckpt").string(), 2);
  CHECK(dir.files() ==
        std::vector<std::string>{"checkpoint", "model.ckpt-1.data-00000-of-00002",
                                 "model.ckpt-1.data-00001-of-00002", "model.ckpt-1.index",
                                 "model.ckpt-2.data-00000-of-00002",
                                 "model.ckpt-2.data-00001-of-00002", "model.ckpt-2.index"});
  CHECK(io::BundleReader(dir / "model.ckpt-2").lookup<float>("v") == v);
}

TEST_CASE("merge_bundles renumbers the shards and refuses a key in two inputs") {
  TempDir dir;
  const auto a = dir / "a";
  const auto b = dir / "b";
  {
    io::BundleWriter wa(a);
    wa.add("x", {}, std::vector<float>{1.0f});
    wa.finish();
    io::BundleWriter wb(b);
    wb.add("y", {}, std::vector<double>{2.0});
    wb.add("x", {}, std::vector<float>{3.0f});
    wb.finish();
  }
  const std::vector<fs::path> parts = {a, b};
  CHECK_THAT(error_of<hookfuse::ValueError>([&] { io::merge_bundles(parts, dir / "m"); }),
             Catch::Contains("Duplicate tensor keyed by x"));
  CHECK_FALSE(fs::exists(dir / "m.index"));
  {
    io::BundleWriter wb(b);
    wb.add("y", {}, std::vector<double>{2.0});
    wb.finish();
  }
  io::merge_bundles(parts, dir / "m");
  CHECK(dir.files() ==
        std::vector<std::string>{"m.data-00000-of-00002", "m.data-00001-of-00002", "m.index"});
  const io::BundleReader m(dir / "m");
  CHECK(m.entry("y").shard_id == 1);
  CHECK(m.lookup<float>("x") == std::vector<float>{1.0f});
  CHECK(m.lookup<double>("y") == std::vector<double>{2.0});
}

TEST_CASE("list_data_files finds a prefix's data files of every shard count, nothing else") {
  TempDir dir;
  for (const char* name :
       {"m.data-00000-of-00001", "m.data-00000-of-00002", "m.data-00001-of-00002",
        "m.data-00001-of-00002.tmp", "mm.data-00000-of-00001", "m.data-0000x-of-00002",
        "m.data-00000-of-0002", "m.data-00000_of-00002", "m.index"})
    write_bytes(dir / name, {1});
  std::vector<std::tuple<std::string, std::int32_t, std::int32_t>> found;
  for (const auto& f : io::detail::list_data_files(dir / "m"))
    found.emplace_back(f.path.filename().string(), f.shard_id, f.num_shards);
  std::sort(found.begin(), found.end());
  using Row = std::tuple<std::string, std::int32_t, std::int32_t>;
  CHECK(found == std::vector<Row>{Row{"m.data-00000-of-00001", 0, 1},
                                  Row{"m.data-00000-of-00002", 0, 2},
                                  Row{"m.data-00001-of-00002", 1, 2}});
  CHECK(io::detail::list_data_files(dir / "absent").empty());
  CHECK(io::detail::shard_of_shards(3, 12) == "00003-of-00012");
  CHECK(io::data_filename(dir / "m", 1, 2) == dir / "m.data-00001-of-00002");
}
