// tests/test_summary_alloc.cpp: a SummarySaverHook (and a StepCounterHook writing
// "global_step/sec") costs no allocation on the steps where it does not fire.
//
// The Fashion-MNIST-shaped classifier of test_session_alloc.cpp (784 -> 256 relu -> 10, batch
// 32) with SummarySaverHook(save_steps = 10) writing a scalar loss, an accuracy outside the
// loss's graph and a histogram of the logits kernel, plus StepCounterHook(every_n_steps = 10)
// into the same directory. Writing an event allocates (protobuf-like structs, the histogram):
// the firing steps are left out of the measured region, which covers global steps 2..10 (TF's
// cadence: the hook writes at steps 1, 11, 21, ...; the step counter reports at 11, 21, ...).
// Both kinds of heap allocation are counted, as in test_session_alloc.cpp.

// clang-format off: alloc_counter.hpp must precede every Eigen header.
#define HOOKFUSE_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"
#include "alloc_fixtures.hpp"
// clang-format on

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/hooks/summary_saver_hook.hpp>
#include <hookfuse/io/event_reader.hpp>
#include <hookfuse/io/summary_writer_cache.hpp>
#include <random>
#include <vector>

#include "io_test_support.hpp"

using namespace hookfuse;

namespace {

constexpr int kFeatures = 784;
constexpr int kHidden = 256;
constexpr int kClasses = 10;
constexpr Index kBatch = 32;
constexpr Index kExamples = 4 * kBatch;

using PreallocatedInput = hookfuse_test::PreallocatedInput<kBatch, kExamples, kFeatures>;

using QuietLogger = hookfuse_test::LineCountingLogger;

}  // namespace

TEST_CASE("SummarySaverHook and StepCounterHook with a writer allocate nothing between firings",
          "[summary][alloc]") {
  const auto& [features, labels] =
      hookfuse_test::RandomExamples(7, kExamples, kFeatures, kClasses);

  Placeholder<"x", float, kFeatures> x;
  Placeholder<"labels", std::int32_t, 1> y;
  nn::Dense<"dense", float> hidden(kFeatures, kHidden, nn::glorot_uniform{1});
  nn::Dense<"logits", float> out(kHidden, kClasses, nn::glorot_uniform{2});
  auto logits = named<"logits">(out(relu(hidden(x))));
  auto loss = named<"loss">(sparse_softmax_cross_entropy(y, logits));
  auto acc = summary::scalar<"accuracy">(accuracy(y, logits));
  GlobalStep gs;
  auto train_op = GradientDescentOptimizer(0.01).minimize(loss, gs);

  hookfuse_test::ScratchDir dir;
  FakeClock clock;
  int log_lines = 0;
  using Fake = ClockRef<FakeClock>;
  MonitoredTrainingSession session(
      train_op, PreallocatedInput{&features, &labels},
      hooks(SummarySaverHook({.save_steps = 10, .output_dir = dir.path()},
                             summary::merge(summary::scalar<"loss">(loss), acc,
                                            summary::histogram<"logits/kernel">(out.kernel))),
            StepCounterHook<Fake, QuietLogger>({.every_n_steps = 10, .output_dir = dir.path()},
                                               Fake{&clock}, QuietLogger{&log_lines})),
      acc);

  session.run();  // global step 1: the summaries and START are written, the step counter's base
  clock.advance(0.5);

  std::size_t news = 0;
  std::size_t eigen_mallocs = 0;
  {
    hookfuse_test::NoAllocScope scope;  // no Catch2 assertions inside: they allocate
    for (int i = 0; i < 9; ++i) {       // global steps 2 .. 10: no hook fires
      session.run();
      clock.advance(0.5);
    }
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }
  CHECK(news == 0);
  CHECK(eigen_mallocs == 0);
  CHECK(session.global_step() == 10);

  session.run();  // global step 11: both fire (allocating is fine here)
  session.close();
  CHECK(log_lines == 1);
  const auto files = io::event_files(dir.path());
  REQUIRE(files.size() == 1);
  std::vector<std::int64_t> loss_steps, rate_steps;
  for (const auto& e : io::read_events(files.front())) {
    for (const auto& v : e.summary.value) {
      if (v.tag == "loss") loss_steps.push_back(e.step);
      if (v.tag == "global_step/sec") rate_steps.push_back(e.step);
    }
  }
  CHECK(loss_steps == std::vector<std::int64_t>{1, 11});
  CHECK(rate_steps == std::vector<std::int64_t>{11});
  io::SummaryWriterCache::clear();
}

TEST_CASE("The session's default summary hooks allocate nothing between firings",
          "[summary][alloc]") {
  // The same model, its summaries given to a session made with SessionOptions{.summary_dir}:
  // the StepCounterHook and SummarySaverHook the session installs (every 10 steps here).
  const auto& [features, labels] =
      hookfuse_test::RandomExamples(7, kExamples, kFeatures, kClasses);

  Placeholder<"x", float, kFeatures> x;
  Placeholder<"labels", std::int32_t, 1> y;
  nn::Dense<"dense", float> hidden(kFeatures, kHidden, nn::glorot_uniform{1});
  nn::Dense<"logits", float> out(kHidden, kClasses, nn::glorot_uniform{2});
  auto logits = named<"logits">(out(relu(hidden(x))));
  auto loss = named<"loss">(sparse_softmax_cross_entropy(y, logits));
  GlobalStep gs;
  auto train_op = GradientDescentOptimizer(0.01).minimize(loss, gs);

  hookfuse_test::ScratchDir dir;
  FakeClock clock;
  int log_lines = 0;
  using Fake = ClockRef<FakeClock>;
  MonitoredTrainingSession session(
      train_op, PreallocatedInput{&features, &labels},
      SessionOptions<io::Saver, Fake, QuietLogger>{.summary_dir = dir.path().string(),
                                                   .save_summaries_steps = 10,
                                                   .log_step_count_steps = 10,
                                                   .clock = Fake{&clock},
                                                   .logger = QuietLogger{&log_lines}},
      hooks(), summary::scalar<"loss">(loss), summary::scalar<"accuracy">(accuracy(y, logits)),
      summary::histogram<"logits/kernel">(out.kernel));
  REQUIRE(session.hook<0>().has_value());
  REQUIRE(session.hook<1>().has_value());

  session.run();  // global step 1: the summaries and START are written, the step counter's base
  clock.advance(0.5);
  std::size_t news = 0;
  std::size_t eigen_mallocs = 0;
  {
    hookfuse_test::NoAllocScope scope;  // no Catch2 assertions inside: they allocate
    for (int i = 0; i < 9; ++i) {       // global steps 2 .. 10: no hook fires
      session.run();
      clock.advance(0.5);
    }
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }
  CHECK(news == 0);
  CHECK(eigen_mallocs == 0);
  session.run();  // global step 11: both fire
  session.close();
  CHECK(log_lines == 1);  // "global_step/sec: 2" at step 11
  const auto files = io::event_files(dir.path());
  REQUIRE(files.size() == 1);
  std::vector<std::int64_t> kernel_steps, rate_steps;
  for (const auto& e : io::read_events(files.front())) {
    for (const auto& v : e.summary.value) {
      if (v.tag == "logits/kernel") kernel_steps.push_back(e.step);
      if (v.tag == "global_step/sec") rate_steps.push_back(e.step);
    }
  }
  CHECK(kernel_steps == std::vector<std::int64_t>{1, 11});
  CHECK(rate_steps == std::vector<std::int64_t>{11});
  io::SummaryWriterCache::clear();
}
