// tests/test_lr_hooks_alloc.cpp: steps with LearningRateSchedulerHook, ReduceLROnPlateauHook,
// TerminateOnNonFiniteHook, TimerStopHook and EarlyStoppingHook allocate nothing, also on the
// steps where they change the learning rate, copy or restore the best weights, and log.
//
// Its own executable: it defines the allocation counter (tests/alloc_counter.hpp).
// clang-format off: alloc_counter.hpp must precede every Eigen header.
#define HOOKFUSE_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"
#include "alloc_fixtures.hpp"
// clang-format on

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <random>
#include <string_view>
#include <vector>

using namespace hookfuse;

namespace {

constexpr Index kBatch = 16;
constexpr Index kExamples = 4 * kBatch;
constexpr int kFeatures = 20;

using CountingLogger = hookfuse_test::LineCountingLogger;

using PreallocatedInput = hookfuse_test::PreallocatedInput<kBatch, kExamples, kFeatures>;

/// The model of both cases: a 20-16-5 MLP on fixed random data.
struct Mlp {
  hookfuse_test::RandomExamples data{3, kExamples, kFeatures, 5};
  Placeholder<"x", float, kFeatures> x;
  Placeholder<"labels", std::int32_t, 1> y;
  nn::Dense<"dense", float> hidden{kFeatures, 16, nn::glorot_uniform{1}};
  nn::Dense<"logits", float> out{16, 5, nn::glorot_uniform{2}};
  GlobalStep gs;
  auto loss() {
    auto logits = named<"logits">(out(relu(hidden(x))));
    return named<"loss">(sparse_softmax_cross_entropy(y, logits));
  }
};

}  // namespace

TEST_CASE("EarlyStoppingHook: copying and restoring the best weights allocates nothing",
          "[alloc][early_stopping]") {
  // min_delta 10: only the first check (the warm-up run) improves; patience 3 stops at the
  // fourth check (wait 3), the third measured run, which restores the weights and logs twice.
  Mlp m;
  int lines = 0;
  MonitoredTrainingSession session(
      AdamOptimizer(0.01).minimize(m.loss(), m.gs), PreallocatedInput{&m.data.features, &m.data.labels},
      hooks(EarlyStoppingHook<"loss", CountingLogger>(
          {.min_delta = 10.0, .patience = 3, .restore_best_weights = true},
          CountingLogger{&lines})));
  session.run();  // warm-up: check 0, the first copy
  std::size_t news = 0, eigen_mallocs = 0;
  int runs = 0;
  {
    hookfuse_test::NoAllocScope scope;
    while (!session.should_stop() && runs < 10) {
      session.run();
      ++runs;
    }
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }
  CHECK(news == 0);
  CHECK(eigen_mallocs == 0);
  CHECK(runs == 3);
  CHECK(lines == 2);
}

TEST_CASE("Steps with the schedule and Keras-style hooks allocate nothing",
          "[alloc][lr_schedule]") {
  const auto& [features, labels] =
      hookfuse_test::RandomExamples(3, kExamples, kFeatures, 5);

  Placeholder<"x", float, kFeatures> x;
  Placeholder<"labels", std::int32_t, 1> y;
  nn::Dense<"dense", float> hidden(kFeatures, 16, nn::glorot_uniform{1});
  nn::Dense<"logits", float> out(16, 5, nn::glorot_uniform{2});
  auto logits = named<"logits">(out(relu(hidden(x))));
  auto loss = named<"loss">(sparse_softmax_cross_entropy(y, logits));
  auto acc = named<"accuracy">(accuracy(y, logits));
  GlobalStep gs;

  FakeClock clock;
  int lines = 0;
  using Fake = ClockRef<FakeClock>;
  // The plateau hook checks "accuracy" every 2 runs; min_delta 10 never counts as an improvement
  // after the first check, so with patience 1 every later check reduces the rate and logs.
  MonitoredTrainingSession session(
      AdamOptimizer(0.01).minimize(loss, gs), PreallocatedInput{&features, &labels},
      hooks(LearningRateSchedulerHook(linear_warmup(cosine_decay(0.01, 100), 5), {.verbose = true},
                                      CountingLogger{&lines}),
            ReduceLROnPlateauHook<"accuracy", CountingLogger>(
                {.factor = 0.5, .patience = 1, .min_delta = 10.0, .every_n_iter = 2},
                CountingLogger{&lines}),
            TerminateOnNonFiniteHook<"loss", CountingLogger>({}, CountingLogger{&lines}),
            TimerStopHook<Fake, CountingLogger>({.seconds = 1e6}, Fake{&clock},
                                                CountingLogger{&lines})),
      acc);

  session.run();  // warm-up
  const int lines_before = lines;
  std::size_t news = 0, eigen_mallocs = 0;
  {
    hookfuse_test::NoAllocScope scope;  // no Catch2 assertions inside: they allocate
    for (int i = 0; i < 20; ++i) {
      session.run();
      clock.advance(1.0);
    }
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }
  CHECK(news == 0);
  CHECK(eigen_mallocs == 0);
  // Inside the measured runs: the scheduler logged each rate change (runs 2..21 all change it:
  // the warm-up, then the cosine), the plateau hook reduced at runs 4, 6, ..., 20 (9 lines; its
  // first check at run 2 set the best value).
  CHECK(lines - lines_before == 20 + 9);
  CHECK_FALSE(session.should_stop());
}
