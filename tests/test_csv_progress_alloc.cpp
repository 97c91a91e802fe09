// tests/test_csv_progress_alloc.cpp: steps with CSVLoggerHook and ProgressBarHook allocate
// nothing, on the runs where they do nothing and on the runs where they write (once the file's
// stdio buffer and the bar's line exist).
//
// Its own executable: it defines the allocation counter (tests/alloc_counter.hpp).
// clang-format off: alloc_counter.hpp must precede every Eigen header.
#define HOOKFUSE_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"
// clang-format on

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <hookfuse/hookfuse.hpp>
#include <iterator>
#include <ostream>
#include <streambuf>
#include <string>

#include "lr_model.hpp"
#include "temp_dir.hpp"

using namespace hookfuse;

namespace {

/// Run k (from 1) feeds x = k / 4 and y = k (one row).
using CountingInput = hookfuse_test::QuarterInput;

/// A stream buffer that counts characters and keeps none (no allocation when written to).
struct CountingBuf : std::streambuf {
  std::size_t chars = 0;
  std::size_t newlines = 0;
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) {
      ++chars;
      if (c == '\n') ++newlines;
    }
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) overflow(s[i]);
    return n;
  }
};

}  // namespace

TEST_CASE("CSVLoggerHook and ProgressBarHook steps allocate nothing, firing or not",
          "[alloc][csv][progress]") {
  hookfuse_test::TempDir dir("csv_alloc");
  hookfuse_test::LrModel m;
  FakeClock clock;
  CountingBuf buf;
  std::ostream stream(&buf);
  CSVLoggerHook<"loss", "accuracy"> csv(dir.path / "train.csv", {.every_n_iter = 4});
  BasicProgressBarHook<ClockRef<FakeClock>, "loss", "accuracy"> bar(
      {.total = 1000, .stream = &stream, .is_tty = true, .interval = 1.0}, {&clock});
  MonitoredTrainingSession session(m.train_op(), CountingInput{},
                                   hooks(std::ref(csv), std::ref(bar)), m.accuracy());
  // Warm-up: the first rows (stdio's buffer, the header) and the first bar line.
  for (int i = 0; i < 8; ++i) session.run();
  std::size_t news = 0, eigen_mallocs = 0;
  {
    hookfuse_test::NoAllocScope scope;
    for (int i = 0; i < 40; ++i) {
      clock.advance(0.25);  // the bar redraws every 4th run, the CSV writes every 4th
      session.run();
    }
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }
  CHECK(news == 0);
  CHECK(eigen_mallocs == 0);
  CHECK(buf.chars > 0);
  std::ifstream in(dir.path / "train.csv", std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  CHECK(lines == 1 + 48 / 4);  // header + runs 1, 5, ..., 45
}
