// tests/test_csv_logger_hook.cpp: CSVLoggerHook and io::CsvWriter against Keras' CSVLogger and
// Python's csv module (csv.excel dialect, repr() of floats). Real files in a temporary
// directory; every expected file content is written out by hand below.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <hookfuse/detail/python_float.hpp>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/hooks/csv_logger_hook.hpp>
#include <hookfuse/io/csv_writer.hpp>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "lr_model.hpp"
#include "temp_dir.hpp"

using namespace hookfuse;

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::filesystem::path& p, std::string_view text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

std::string repr(double v) {
  char buf[detail::python_float_capacity];
  char* out = buf;
  detail::append_python_float(out, buf + sizeof buf, v);
  return std::string(buf, static_cast<std::size_t>(out - buf));
}

/// Run k (from 1) feeds x = k / 4 and y = k: with W = b = 0 (learning rate 0) the loss
/// mean((0 - y)^2) is k^2 and "accuracy" (mean(x), tests/lr_model.hpp) is k / 4, all exact in
/// float32.
using CountingInput = hookfuse_test::QuarterInput;

/// A [1, 1] float32 tensor holding `*v`.
TensorValue scalar(const float* v) { return {v, 1, 1, 1, 1, DType::float32}; }

}  // namespace

// =============================================================================================
// Python's repr() of a float (what csv.writer writes for a Python float)
// =============================================================================================

TEST_CASE("append_python_float writes what Python 3's repr(float) writes", "[csv][repr]") {
  // Values and texts from Python 3: repr(float(numpy.float32(0.1))) etc.
  CHECK(repr(static_cast<double>(0.1f)) == "0.10000000149011612");
  CHECK(repr(0.1) == "0.1");
  CHECK(repr(1.0 / 3.0) == "0.3333333333333333");
  CHECK(repr(1.0) == "1.0");      // to_chars alone: "1"
  CHECK(repr(100.0) == "100.0");  // to_chars alone: "100"
  CHECK(repr(0.0) == "0.0");
  CHECK(repr(-0.0) == "-0.0");
  CHECK(repr(-2.5) == "-2.5");
  CHECK(repr(0.0001) == "0.0001");  // to_chars alone: "1e-04" (shorter)
  CHECK(repr(0.00012) == "0.00012");
  CHECK(repr(1e-5) == "1e-05");  // decimal point exponent -4: scientific
  CHECK(repr(1.5e-7) == "1.5e-07");
  CHECK(repr(1e16) == "1e+16");
  CHECK(repr(1234567890123456.0) == "1234567890123456.0");        // 16 digits: still positional
  CHECK(repr(123456789012345680.0) == "1.2345678901234568e+17");  // to_chars: positional
  CHECK(repr(1.5e300) == "1.5e+300");
  CHECK(repr(5e-324) == "5e-324");
  CHECK(repr(-std::numeric_limits<double>::max()) == "-1.7976931348623157e+308");
  CHECK(repr(std::nan("")) == "nan");
  CHECK(repr(-std::nan("")) == "nan");
  CHECK(repr(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(repr(-std::numeric_limits<double>::infinity()) == "-inf");
}

// =============================================================================================
// io::CsvWriter
// =============================================================================================

TEST_CASE("CsvWriter quotes fields as csv.QUOTE_MINIMAL and ends rows with CR LF",
          "[csv][writer]") {
  hookfuse_test::TempDir dir("csv");
  const auto path = dir.path / "q.csv";
  {
    io::CsvWriter w(path);
    CHECK(w.header_needed());
    const std::string_view row1[] = {"a,b", "say \"hi\"", "plain", ""};
    w.write_row(row1);
    CHECK_FALSE(w.header_needed());
    const std::string_view row2[] = {"two\nlines", "x"};
    w.write_row(row2);
  }
  CHECK(read_file(path) == "\"a,b\",\"say \"\"hi\"\"\",plain,\r\n\"two\nlines\",x\r\n");
}

TEST_CASE("CsvWriter: a path that cannot be opened is an IoError naming the path",
          "[csv][writer][errors]") {
  hookfuse_test::TempDir dir("csv");
  const auto path = dir.path / "no_such_dir" / "log.csv";
  try {
    io::CsvWriter w(path);
    FAIL("no error");
  } catch (const io::IoError& e) {
    const std::string what = e.what();
    CHECK(what.find("cannot open CSV file " + path.string() + " for writing: ") == 0);
    CHECK(what.find("No such file or directory") != std::string::npos);
  }
  CHECK_THROWS_AS(CSVLoggerHook<"loss">(path), io::IoError);
  CHECK_THROWS_AS(io::CsvWriter(dir.path / "x.csv", {.separator = '"'}), std::invalid_argument);
  CHECK_THROWS_AS(io::CsvWriter(dir.path / "x.csv", {.line_terminator = ""}),
                  std::invalid_argument);
}

// =============================================================================================
// CSVLoggerHook in a session
// =============================================================================================

TEST_CASE("CSVLoggerHook writes the header and one row per run (every_n_iter = 1)", "[csv][hook]") {
  hookfuse_test::TempDir dir("csv");
  const auto path = dir.path / "train.csv";
  hookfuse_test::LrModel m;
  CSVLoggerHook<"loss", "accuracy"> hook(path);
  {
    MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(std::ref(hook)),
                                     m.accuracy());
    for (int i = 0; i < 3; ++i) session.run();
    // Rows are flushed as they are written: the file is complete while the session runs.
    CHECK(read_file(path) ==
          "step,loss,accuracy\r\n"
          "1,1.0,0.25\r\n"
          "2,4.0,0.5\r\n"
          "3,9.0,0.75\r\n");
  }
}

TEST_CASE("CSVLoggerHook with every_n_iter = 2: runs 1, 3, 5 at global steps 1, 3, 5",
          "[csv][hook][cadence]") {
  hookfuse_test::TempDir dir("csv");
  const auto path = dir.path / "train.csv";
  hookfuse_test::LrModel m;
  CSVLoggerHook<"accuracy", "loss"> hook(path, {.every_n_iter = 2});
  MonitoredTrainingSession session(m.train_op(), CountingInput{}, hooks(std::ref(hook)),
                                   m.accuracy());
  for (int i = 0; i < 6; ++i) session.run();
  // Names keep the order given; run k: accuracy k/4, loss k^2.
  CHECK(read_file(path) ==
        "step,accuracy,loss\r\n"
        "1,0.25,1.0\r\n"
        "3,0.75,9.0\r\n"
        "5,1.25,25.0\r\n");
}

TEST_CASE(
    "CSVLoggerHook: the step column is the global step after the run (restored start, "
    "increment 2)",
    "[csv][hook][cadence]") {
  hookfuse_test::TempDir dir("csv");
  const auto path = dir.path / "train.csv";
  hookfuse_test::LrModel m(/*initial_step=*/10);
  auto op = m.train_op();
  op.global_step_increment = 2;
  CSVLoggerHook<"loss"> hook(path, {.every_n_iter = 2});
  MonitoredTrainingSession session(op, CountingInput{}, hooks(std::ref(hook)));
  for (int i = 0; i < 4; ++i) session.run();
  // Runs 1 and 3 write: global steps 10 + 2 = 12 and 10 + 3 * 2 = 16; loss 1 and 9.
  CHECK(read_file(path) == "step,loss\r\n12,1.0\r\n16,9.0\r\n");
}

// =============================================================================================
// CSVLoggerHook driven by hand: fetches, append mode, separator, errors
// =============================================================================================

TEST_CASE("CSVLoggerHook fetches only in the runs that write a row", "[csv][hook][cadence]") {
  hookfuse_test::TempDir dir("csv");
  CSVLoggerHook<"loss"> hook(dir.path / "a.csv", {.every_n_iter = 3});
  hook.begin();
  std::int64_t gs = 0;
  SessionRunContext ctx(&gs);
  const float loss = 0.5f;
  SessionRunValues<"loss"> values{{scalar(&loss)}};
  std::string active;
  for (int run = 1; run <= 7; ++run) {
    const bool a = hook.before_run(ctx).active;
    active += a ? '1' : '0';
    ++gs;
    hook.after_run(ctx, a ? values : SessionRunValues<"loss">{});
  }
  CHECK(active == "1001001");
  CHECK(read_file(dir.path / "a.csv") == "step,loss\r\n1,0.5\r\n4,0.5\r\n7,0.5\r\n");
  // A new session (begin) writes at its first run again; the header is not repeated.
  hook.begin();
  CHECK(hook.before_run(ctx).active);
}

TEST_CASE("CSVLoggerHook append: no second header in a file that has content (Keras)",
          "[csv][hook][append]") {
  hookfuse_test::TempDir dir("csv");
  const auto path = dir.path / "log.csv";
  std::int64_t gs = 0;
  SessionRunContext ctx(&gs);
  const float v = 0.1f;
  const SessionRunValues<"loss"> values{{scalar(&v)}};
  auto one_row = [&](auto& hook) {
    hook.begin();
    (void)hook.before_run(ctx);
    ++gs;
    hook.after_run(ctx, values);
  };
  SECTION("existing file with content: rows are added, no header") {
    write_file(path, "step,loss\r\n7,2.0\r\n");
    gs = 7;
    CSVLoggerHook<"loss"> hook(path, {.append = true});
    one_row(hook);
    CHECK(read_file(path) == "step,loss\r\n7,2.0\r\n8,0.10000000149011612\r\n");
  }
  SECTION("a missing file gets the header") {
    CSVLoggerHook<"loss"> hook(path, {.append = true});
    one_row(hook);
    CHECK(read_file(path) == "step,loss\r\n1,0.10000000149011612\r\n");
  }
  SECTION("an empty file gets the header") {
    write_file(path, "");
    CSVLoggerHook<"loss"> hook(path, {.append = true});
    one_row(hook);
    CHECK(read_file(path) == "step,loss\r\n1,0.10000000149011612\r\n");
  }
  SECTION("without append the file is truncated and gets the header") {
    write_file(path, "old,content\r\n");
    CSVLoggerHook<"loss"> hook(path);
    one_row(hook);
    CHECK(read_file(path) == "step,loss\r\n1,0.10000000149011612\r\n");
  }
}

TEST_CASE("CSVLoggerHook: separator, non-finite values, integer tensors, shared writer",
          "[csv][hook]") {
  hookfuse_test::TempDir dir("csv");
  std::int64_t gs = 41;
  SessionRunContext ctx(&gs);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float minus_inf = -inf;
  const std::int64_t count = 7;
  const TensorValue int_value{&count, 1, 1, 1, 1, DType::int64};
  const SessionRunValues<"a", "b", "c", "n"> values{
      {scalar(&nan), scalar(&inf), scalar(&minus_inf), int_value}};

  SECTION("separator ';'") {
    CSVLoggerHook<"a", "b", "c", "n"> hook(dir.path / "s.csv", {.separator = ';'});
    hook.begin();
    (void)hook.before_run(ctx);
    ++gs;
    hook.after_run(ctx, values);
    CHECK(read_file(dir.path / "s.csv") == "step;a;b;c;n\r\n42;nan;inf;-inf;7\r\n");
  }
  SECTION("two hooks share one writer: one header") {
    auto writer = std::make_shared<io::CsvWriter>(dir.path / "w.csv");
    CSVLoggerHook<"a", "b", "c", "n"> first(writer);
    CSVLoggerHook<"a", "b", "c", "n"> second(writer);
    first.begin();
    second.begin();
    (void)first.before_run(ctx);
    (void)second.before_run(ctx);
    ++gs;
    first.after_run(ctx, values);
    second.after_run(ctx, values);
    CHECK(read_file(dir.path / "w.csv") ==
          "step,a,b,c,n\r\n42,nan,inf,-inf,7\r\n42,nan,inf,-inf,7\r\n");
  }
}

TEST_CASE("CSVLoggerHook errors: a non-scalar tensor, every_n_iter, a null writer",
          "[csv][hook][errors]") {
  hookfuse_test::TempDir dir("csv");
  CHECK_THROWS_AS(CSVLoggerHook<"loss">(dir.path / "a.csv", {.every_n_iter = 0}),
                  std::invalid_argument);
  CHECK_THROWS_AS(CSVLoggerHook<"loss">(std::shared_ptr<io::CsvWriter>{}), std::invalid_argument);

  CSVLoggerHook<"logits"> hook(dir.path / "b.csv");
  hook.begin();
  std::int64_t gs = 0;
  SessionRunContext ctx(&gs);
  const float logits[2] = {1.0f, 2.0f};
  const SessionRunValues<"logits"> values{{TensorValue{logits, 1, 2, 2, 1, DType::float32}}};
  (void)hook.before_run(ctx);
  try {
    hook.after_run(ctx, values);
    FAIL("no error");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()) ==
          "CSVLoggerHook: tensor 'logits' is [1, 2], expected one element ([1, 1])");
  }
  CHECK(read_file(dir.path / "b.csv").empty());  // no header without a row
}
