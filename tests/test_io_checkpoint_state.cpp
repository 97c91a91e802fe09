// TensorFlow's `checkpoint` state file (hookfuse/io/checkpoint_state.hpp). Expected texts are
// written out by hand from TensorFlow's format: checkpoint_state.proto printed by Python's
// text_format.MessageToString (fields in number order, strings C-escaped by
// text_encoding.CEscape, doubles as Python's repr, whose outputs below were taken from
// Python 3: repr(1e16) == '1e+16', repr(1.5e-05) == '1.5e-05', repr(123456789.123456789) ==
// '123456789.12345679'), and the fixture from a TF1 tf.train.Saver.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <hookfuse/io/checkpoint_state.hpp>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using hookfuse::io::CheckpointState;
using hookfuse::io::DataLossError;
using hookfuse::io::format_checkpoint_state;
using hookfuse::io::get_checkpoint_state;
using hookfuse::io::IoError;
using hookfuse::io::latest_checkpoint;
using hookfuse::io::NotFoundError;
using hookfuse::io::parse_checkpoint_state;
using hookfuse::io::update_checkpoint_state;
using hookfuse_test::error_of;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void touch(const fs::path& p, const std::string& text = "") {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

}  // namespace

TEST_CASE("the TF1 Saver fixture parses") {
#ifndef HOOKFUSE_FIXTURES_DIR
  HOOKFUSE_SKIP("HOOKFUSE_FIXTURES_DIR not defined");
#else
  const fs::path dir = fs::path(HOOKFUSE_FIXTURES_DIR) / "tf" / "ckpt_tf1_saver_houseprices";
  if (!fs::exists(dir / "checkpoint"))
    HOOKFUSE_SKIP("fixture " << (dir / "checkpoint").string() << " not found");
  const std::optional<CheckpointState> state = get_checkpoint_state(dir);
  REQUIRE(state);
  CHECK(state->model_checkpoint_path == (dir / "model.ckpt").string());
  CHECK(state->all_model_checkpoint_paths ==
        std::vector<std::string>{(dir / "model.ckpt").string()});
  CHECK(state->all_model_checkpoint_timestamps.empty());
  CHECK(state->last_preserved_timestamp == 0.0);
  // model.ckpt.index exists beside it, so it is the latest checkpoint.
  CHECK(latest_checkpoint(dir) == dir / "model.ckpt");
  // The raw text, as written by TensorFlow, comes back unchanged from our printer.
  const std::string text = slurp(dir / "checkpoint");
  CHECK(format_checkpoint_state(parse_checkpoint_state(text, "checkpoint")) == text);
#endif
}

TEST_CASE("update_checkpoint_state writes TensorFlow's text, relative paths first to last") {
  hookfuse_test::TempDir tmp("ckptstate");
  const fs::path dir = tmp.path / "model_dir";
  fs::create_directory(dir);
  const std::vector<fs::path> all = {dir / "model.ckpt-100", dir / "model.ckpt-50",
                                     dir / "model.ckpt-120"};
  const std::vector<double> times = {1700000000.5, 1700000100.25, 1700000200.0};
  update_checkpoint_state(dir, dir / "model.ckpt-120", all, times, 1699999999.0);
  // Insertion order, not sorted by step; relative to the directory; timestamps as Python's repr.
  CHECK(slurp(dir / "checkpoint") ==
        "model_checkpoint_path: \"model.ckpt-120\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-100\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-50\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-120\"\n"
        "all_model_checkpoint_timestamps: 1700000000.5\n"
        "all_model_checkpoint_timestamps: 1700000100.25\n"
        "all_model_checkpoint_timestamps: 1700000200.0\n"
        "last_preserved_timestamp: 1699999999.0\n");
  const auto state = get_checkpoint_state(dir);
  REQUIRE(state);
  CHECK(state->model_checkpoint_path == (dir / "model.ckpt-120").string());
  CHECK(state->all_model_checkpoint_paths ==
        std::vector<std::string>{(dir / "model.ckpt-100").string(),
                                 (dir / "model.ckpt-50").string(),
                                 (dir / "model.ckpt-120").string()});
  CHECK(state->all_model_checkpoint_timestamps == times);
  CHECK(state->last_preserved_timestamp == 1699999999.0);
}

TEST_CASE("update_checkpoint_state appends the model path and keeps outside paths absolute") {
  hookfuse_test::TempDir tmp("ckptstate");
  const fs::path dir = tmp.path / "d";
  fs::create_directory(dir);
  // TF1 style: only the two path fields (no timestamps, last_preserved_timestamp 0 omitted).
  update_checkpoint_state(dir, dir / "model.ckpt");
  CHECK(slurp(dir / "checkpoint") ==
        "model_checkpoint_path: \"model.ckpt\"\n"
        "all_model_checkpoint_paths: \"model.ckpt\"\n");
  const fs::path outside = tmp.path / "elsewhere" / "model.ckpt-7";
  const std::vector<fs::path> all = {dir / "sub" / "model.ckpt-3", outside};
  update_checkpoint_state(dir, dir / "model.ckpt-9", all);
  CHECK(slurp(dir / "checkpoint") ==
        "model_checkpoint_path: \"model.ckpt-9\"\n"
        "all_model_checkpoint_paths: \"sub/model.ckpt-3\"\n"
        "all_model_checkpoint_paths: \"" +
            outside.string() +
            "\"\n"
            "all_model_checkpoint_paths: \"model.ckpt-9\"\n");
  // An absolute path in the file is returned as is, not joined.
  const auto state = get_checkpoint_state(dir);
  REQUIRE(state);
  CHECK(state->all_model_checkpoint_paths.at(1) == outside.string());
}

TEST_CASE("update_checkpoint_state with save_relative_paths = false keeps absolute paths") {
  // TF1's Saver (update_checkpoint_state_internal, save_relative_paths=False, absolute
  // save_dir): the paths as given, here absolute and lexically normal; a relative path is still
  // stored relative to the directory.
  hookfuse_test::TempDir tmp("ckptstate");
  const fs::path dir = tmp.path.lexically_normal() / "d";
  fs::create_directory(dir);
  const std::string d = dir.generic_string();
  const std::vector<fs::path> all = {dir / "model.ckpt-1", dir / "." / "model.ckpt-2"};
  update_checkpoint_state(dir, dir / "model.ckpt-2", all, {}, 0.0, "checkpoint", false);
  CHECK(slurp(dir / "checkpoint") == "model_checkpoint_path: \"" + d +
                                         "/model.ckpt-2\"\n"
                                         "all_model_checkpoint_paths: \"" +
                                         d +
                                         "/model.ckpt-1\"\n"
                                         "all_model_checkpoint_paths: \"" +
                                         d + "/model.ckpt-2\"\n");
  const auto state = get_checkpoint_state(dir);
  REQUIRE(state);
  CHECK(state->model_checkpoint_path == d + "/model.ckpt-2");
  CHECK(state->all_model_checkpoint_paths ==
        std::vector<std::string>{d + "/model.ckpt-1", d + "/model.ckpt-2"});
  CHECK(state->all_model_checkpoint_timestamps.empty());
}

TEST_CASE("update_checkpoint_state rejects mismatched timestamps and the state file as prefix") {
  hookfuse_test::TempDir tmp("ckptstate");
  const std::vector<fs::path> all = {tmp.path / "a", tmp.path / "b"};
  const std::vector<double> one = {1.0};
  CHECK(error_of<hookfuse::ValueError>([&] {
          update_checkpoint_state(tmp.path, tmp.path / "b", all, one);
        }).find("(got 2 paths and 1 timestamps)") != std::string::npos);
  CHECK(error_of<hookfuse::RuntimeError>([&] {
          update_checkpoint_state(tmp.path, tmp.path / "checkpoint");
        }).find("conflicts with path used for checkpoint state") != std::string::npos);
  CHECK(!fs::exists(tmp.path / "checkpoint"));
}

TEST_CASE("strings are C-escaped and doubles printed as Python's repr") {
  CheckpointState s;
  s.model_checkpoint_path = std::string("a\"b'c\\d\ne\tf\rg\x01h\xc3\xa9", 17);
  s.all_model_checkpoint_paths = {s.model_checkpoint_path};
  s.all_model_checkpoint_timestamps = {
      1e16, 1e15, 1.5e-05, 0.0001, 123456789.123456789, 0.1, 5e-324, 1.7976931348623157e308,
      -2.5, 0.0};
  s.last_preserved_timestamp = 1e22;
  const std::string text = format_checkpoint_state(s);
  CHECK(text ==
        "model_checkpoint_path: \"a\\\"b\\'c\\\\d\\ne\\tf\\rg\\001h\\303\\251\"\n"
        "all_model_checkpoint_paths: \"a\\\"b\\'c\\\\d\\ne\\tf\\rg\\001h\\303\\251\"\n"
        "all_model_checkpoint_timestamps: 1e+16\n"
        "all_model_checkpoint_timestamps: 1000000000000000.0\n"
        "all_model_checkpoint_timestamps: 1.5e-05\n"
        "all_model_checkpoint_timestamps: 0.0001\n"
        "all_model_checkpoint_timestamps: 123456789.12345679\n"
        "all_model_checkpoint_timestamps: 0.1\n"
        "all_model_checkpoint_timestamps: 5e-324\n"
        "all_model_checkpoint_timestamps: 1.7976931348623157e+308\n"
        "all_model_checkpoint_timestamps: -2.5\n"
        "all_model_checkpoint_timestamps: 0.0\n"
        "last_preserved_timestamp: 1e+22\n");
  CHECK(parse_checkpoint_state(text, "t") == s);  // and back, bit for bit
}

TEST_CASE("the parser takes what text_format.Merge takes") {
  const CheckpointState s = parse_checkpoint_state(
      "# written by hand\n"
      "all_model_checkpoint_paths: 'x' \"y\"  ,\n"
      "all_model_checkpoint_paths: [\"p\\x41\\101\", 'q']\n"
      "model_checkpoint_path:\"first\"; model_checkpoint_path: \"q\"\n"
      "all_model_checkpoint_timestamps: [7, .5, -2e3, 1.5f, inf, -Infinity]\n"
      "all_model_checkpoint_timestamps: []\n"
      "last_preserved_timestamp: nan\n",
      "t");
  CHECK(s.model_checkpoint_path == "q");  // a singular field given twice keeps the last value
  CHECK(s.all_model_checkpoint_paths == std::vector<std::string>{"xy", "pAA", "q"});
  REQUIRE(s.all_model_checkpoint_timestamps.size() == 6);
  CHECK(s.all_model_checkpoint_timestamps[0] == 7.0);
  CHECK(s.all_model_checkpoint_timestamps[1] == 0.5);
  CHECK(s.all_model_checkpoint_timestamps[2] == -2000.0);
  CHECK(s.all_model_checkpoint_timestamps[3] == 1.5);
  CHECK(s.all_model_checkpoint_timestamps[4] == HUGE_VAL);
  CHECK(s.all_model_checkpoint_timestamps[5] == -HUGE_VAL);
  CHECK(std::isnan(s.last_preserved_timestamp));
  CHECK(parse_checkpoint_state("", "t") == CheckpointState{});
}

TEST_CASE("bad state text is a DataLossError naming the file, line, column and field") {
  auto err = [](const std::string& text) {
    return error_of<DataLossError>([&] { (void)parse_checkpoint_state(text, "dir/checkpoint"); });
  };
  CHECK(err("model_checkpoint_path: \"a\"\nglobal_step: 5\n") ==
        "dir/checkpoint:2:1: Message type \"tensorflow.CheckpointState\" has no field named "
        "\"global_step\"");
  CHECK(err("model_checkpoint_path: \"never closed\n") ==
        "dir/checkpoint:1:24: field \"model_checkpoint_path\": unterminated string");
  CHECK(err("model_checkpoint_path: \"ends at EOF\\") ==
        "dir/checkpoint:1:24: field \"model_checkpoint_path\": unterminated string");
  CHECK(err("all_model_checkpoint_timestamps: 12abc\n") ==
        "dir/checkpoint:1:34: field \"all_model_checkpoint_timestamps\": expected a number, "
        "found \"12abc\\n\"");
  CHECK(err("last_preserved_timestamp: ") ==
        "dir/checkpoint:1:27: field \"last_preserved_timestamp\": expected a number, found the "
        "end of the file");
  CHECK(err("model_checkpoint_path \"a\"") ==
        "dir/checkpoint:1:23: field \"model_checkpoint_path\": expected ':', found \"\\\"a\\\"\"");
  CHECK(err("model_checkpoint_path: [\"a\"]") ==
        "dir/checkpoint:1:24: field \"model_checkpoint_path\" is not repeated; a list [...] is "
        "not allowed");
  CHECK(err("all_model_checkpoint_paths: [\"a\" 5]") ==
        "dir/checkpoint:1:34: field \"all_model_checkpoint_paths\": expected ',' or ']', found "
        "\"5]\"");
  CHECK(err("model_checkpoint_path: 5") ==
        "dir/checkpoint:1:24: field \"model_checkpoint_path\": expected a quoted string, found "
        "\"5\"");
  CHECK(err("model_checkpoint_path: \"\\q\"") ==
        "dir/checkpoint:1:25: field \"model_checkpoint_path\": invalid escape \\q");
  CHECK(err("model_checkpoint_path: \"\\777\"") ==
        "dir/checkpoint:1:25: field \"model_checkpoint_path\": octal escape above \\377");
  CHECK(err("42: \"x\"") == "dir/checkpoint:1:1: expected a field name, found \"42: \\\"x\\\"\"");
  // A huge line without a closing quote: the scanner stops at the end of the input.
  CHECK(err("model_checkpoint_path: \"" + std::string(1 << 20, 'a')) ==
        "dir/checkpoint:1:24: field \"model_checkpoint_path\": unterminated string");
}

TEST_CASE("get_checkpoint_state: none without a file, errors for bad ones") {
  hookfuse_test::TempDir tmp("ckptstate");
  CHECK(!get_checkpoint_state(tmp.path));
  CHECK(!latest_checkpoint(tmp.path));
  touch(tmp.path / "checkpoint", "all_model_checkpoint_paths: \"x\"\n");
  CHECK(error_of<DataLossError>([&] { (void)get_checkpoint_state(tmp.path); }) ==
        "Invalid checkpoint state loaded from " + tmp.path.string() + ": " +
            (tmp.path / "checkpoint").string() + " has no model_checkpoint_path");
  touch(tmp.path / "checkpoint", "model_checkpoint_path: \"x\"\nbogus: 1\n");
  CHECK(error_of<DataLossError>([&] {
          (void)latest_checkpoint(tmp.path);
        }).starts_with((tmp.path / "checkpoint").string() + ":2:1: "));
  touch(tmp.path / "checkpoint");
  fs::resize_file(tmp.path / "checkpoint", (16u << 20) + 1);  // one byte past the cap
  CHECK(error_of<DataLossError>([&] { (void)get_checkpoint_state(tmp.path); }) ==
        (tmp.path / "checkpoint").string() +
            ": larger than 16777216 bytes, not a checkpoint state file");
  fs::remove(tmp.path / "checkpoint");
  fs::create_directory(tmp.path / "checkpoint");
  CHECK(error_of<IoError>([&] {
          (void)get_checkpoint_state(tmp.path);
        }).find("not a regular file") != std::string::npos);
}

TEST_CASE("latest_checkpoint names a prefix only when its files exist, and raises otherwise") {
  hookfuse_test::TempDir tmp("ckptstate");
  const fs::path dir = tmp.path;
  update_checkpoint_state(dir, dir / "model.ckpt-5");
  // The state file names a checkpoint without files: TensorFlow returns None (and a caller
  // initialising from scratch starts over); here it is an error naming the missing file.
  CHECK_THAT(error_of<NotFoundError>([&] { (void)latest_checkpoint(dir); }),
             Catch::Contains((dir / "checkpoint").string() + " names " +
                             (dir / "model.ckpt-5").string()) &&
                 Catch::Contains((dir / "model.ckpt-5.index").string() + " is not found") &&
                 Catch::Contains("No other listed checkpoint has all its files"));
  touch(dir / "model.ckpt-5.index");
  CHECK_THAT(error_of<NotFoundError>([&] { (void)latest_checkpoint(dir); }),
             Catch::Contains((dir / "model.ckpt-5.data-00000-of-00001").string()));
  touch(dir / "model.ckpt-5.data-00000-of-00001");
  CHECK(latest_checkpoint(dir) == dir / "model.ckpt-5");
  // A custom state file name, as TensorFlow's latest_filename.
  update_checkpoint_state(dir, dir / "model.ckpt-5", {}, {}, 0.0, "other_state");
  CHECK(latest_checkpoint(dir, "other_state") == dir / "model.ckpt-5");
}

TEST_CASE("a state file that cannot be written leaves the previous one intact") {
  hookfuse_test::TempDir tmp("ckptstate");
  // Missing directory: IoError naming the state file.
  const fs::path missing = tmp.path / "missing";
  CHECK(error_of<IoError>([&] {
          update_checkpoint_state(missing, missing / "model.ckpt-1");
        }).find((missing / "checkpoint").string()) != std::string::npos);
  // The state file's name taken by a directory: rename fails, nothing changes.
  const fs::path dir = tmp.path / "d";
  fs::create_directories(dir / "checkpoint");
  const std::string what =
      error_of<IoError>([&] { update_checkpoint_state(dir, dir / "model.ckpt-1"); });
  CHECK(what.find((dir / "checkpoint").string()) != std::string::npos);
  CHECK(fs::is_directory(dir / "checkpoint"));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  // A good file stays as it was after a failed update (its parent replaced by a regular file
  // is not possible while it exists; use a state file name under a regular file instead).
  update_checkpoint_state(tmp.path, tmp.path / "model.ckpt-1");
  const std::string before = slurp(tmp.path / "checkpoint");
  touch(tmp.path / "plain");
  CHECK_THROWS_AS(update_checkpoint_state(tmp.path / "plain", tmp.path / "plain" / "m"), IoError);
  CHECK(slurp(tmp.path / "checkpoint") == before);
}

TEST_CASE("mutated state texts parse or fail with DataLossError, never out of bounds") {
  const std::string good =
      "model_checkpoint_path: \"model.ckpt-120\"\n"
      "all_model_checkpoint_paths: \"model.ckpt-100\"\n"
      "all_model_checkpoint_paths: 'model.ckpt-\\303\\251\\x41'\n"
      "all_model_checkpoint_timestamps: [1700000000.5, -1e-5]\n"
      "last_preserved_timestamp: 1699999999.0\n";
  std::mt19937 rng(777);
  const char alphabet[] = "\"'\\:[],;#\n 0123456789.eE+-xnaif_z\x01\xff";
  int parsed = 0, rejected = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text = good;
    if (round % 2 == 0) {
      for (int k = 0; k < 1 + round % 4; ++k)
        text[rng() % text.size()] = alphabet[rng() % (sizeof alphabet - 1)];
    } else {
      text.resize(rng() % text.size());
    }
    try {
      (void)parse_checkpoint_state(text, "checkpoint");
      ++parsed;
    } catch (const DataLossError&) {
      ++rejected;
    }
  }
  CHECK(parsed + rejected == 2000);
  CHECK(rejected > 500);
}
