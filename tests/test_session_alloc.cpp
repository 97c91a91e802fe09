// tests/test_session_alloc.cpp: a training step with the built-in hooks allocates nothing.
//
// A Fashion-MNIST-shaped classifier (784 -> 256 relu -> 10, sparse softmax cross-entropy, float,
// batch 32) trains on random data held in a preallocated input, in a MonitoredTrainingSession
// with StopAtStepHook, NanTensorHook, StepCounterHook and LoggingTensorHook<"loss", "accuracy">.
// After the first run(), 20 more run() calls must not allocate at all, while both periodic hooks
// fire (checked through a logger that counts lines without allocating), on one thread and on 2
// intra-op threads.
//
// Both kinds of heap allocation are counted (tests/alloc_counter.hpp): calls of the global
// operator new, which this file replaces (HOOKFUSE_DEFINE_ALLOC_COUNTER; every tests/test_*.cpp is
// its own executable, so this is the only definition in its program), and Eigen's own mallocs,
// forbidden and counted inside a NoAllocScope.

// clang-format off: alloc_counter.hpp must precede every Eigen header.
#define HOOKFUSE_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"
#include "alloc_fixtures.hpp"
// clang-format on

#include <cmath>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <hookfuse/hookfuse.hpp>
#ifndef HOOKFUSE_CORE_ONLY
#include <hookfuse/hooks/profiler_hook.hpp>  // nlohmann-json: not in core-only builds
#endif
#include <random>
#include <string_view>
#include <utility>
#include <vector>

using namespace hookfuse;

namespace {

constexpr int kFeatures = 784;
constexpr int kHidden = 256;
constexpr int kClasses = 10;
constexpr Index kBatch = 32;
constexpr Index kExamples = 4 * kBatch;

/// Counts lines per severity and keeps the last one in a fixed buffer: never allocates.
struct CountingLogger {
  struct State {
    int info = 0;
    int warning = 0;
    int error = 0;
    char last[256] = {};
  };
  State* state;
  void log(Severity s, std::string_view line) const {
    if (s == Severity::info)
      ++state->info;
    else if (s == Severity::warning)
      ++state->warning;
    else
      ++state->error;
    const std::size_t n =
        line.size() < sizeof state->last - 1 ? line.size() : sizeof state->last - 1;
    std::memcpy(state->last, line.data(), n);
    state->last[n] = '\0';
  }
};

/// Batches of 32 of the examples, forever (tests/alloc_fixtures.hpp).
using PreallocatedInput = hookfuse_test::PreallocatedInput<kBatch, kExamples, kFeatures>;

}  // namespace

TEST_CASE("Session: after the first run, run() with the built-in hooks allocates nothing",
          "[session][alloc]") {
  // On one thread, and on 2 intra-op threads (the pool started before the first run).
  const int threads = GENERATE(1, 2);
  INFO("intra-op threads: " << threads);
  struct ThreadsScope {
    explicit ThreadsScope(int n) { set_intra_op_parallelism_threads(n); }
    ~ThreadsScope() { set_intra_op_parallelism_threads(1); }
  } threads_scope(threads);
  const auto& [features, labels] =
      hookfuse_test::RandomExamples(42, kExamples, kFeatures, kClasses);

  Placeholder<"x", float, kFeatures> x;
  Placeholder<"labels", std::int32_t, 1> y;
  // Runtime sizes: a fixed 784 x 256 kernel would be an Eigen object too big for the stack.
  nn::Dense<"dense", float> hidden(kFeatures, kHidden, nn::glorot_uniform{1});
  nn::Dense<"logits", float> out(kHidden, kClasses, nn::glorot_uniform{2});
  auto logits = named<"logits">(out(relu(hidden(x))));
  auto loss = named<"loss">(sparse_softmax_cross_entropy(y, logits));
  auto acc = named<"accuracy">(accuracy(y, logits));
  GlobalStep gs;
  auto train_op = GradientDescentOptimizer(0.01).minimize(loss, gs);

  FakeClock clock;
  CountingLogger::State log;
  using Fake = ClockRef<FakeClock>;
  MonitoredTrainingSession session(
      train_op, PreallocatedInput{&features, &labels},
      hooks(StopAtStepHook({.num_steps = 1000}), NanTensorHook<"loss", CountingLogger>({}, {&log}),
            StepCounterHook<Fake, CountingLogger>({.every_n_steps = 5}, Fake{&clock}, {&log}),
            BasicLoggingTensorHook<LoggingPolicies<Fake, CountingLogger>, "loss", "accuracy">(
                {.every_n_iter = 3}, {}, Fake{&clock}, {&log})),
      acc);

  session.run();  // warm-up: anything lazily set up happens here
  clock.advance(0.5);
  REQUIRE(log.info == 1);  // LoggingTensorHook's first line

  std::size_t news = 0;
  std::size_t eigen_mallocs = 0;
  {
    hookfuse_test::NoAllocScope scope;  // no Catch2 assertions inside: they allocate
    for (int i = 0; i < 20; ++i) {
      session.run();
      clock.advance(0.5);
    }
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }

  CHECK(news == 0);
  CHECK(eigen_mallocs == 0);
  // Both periodic hooks fired inside the measured region: LoggingTensorHook at runs 4, 7, ...,
  // 19 (6 lines), StepCounterHook at global steps 6, 11, 16, 21 (4 lines).
  CHECK(log.info == 1 + 6 + 4);
  CHECK(log.warning == 0);
  CHECK(log.error == 0);
  CHECK(std::string_view(log.last).rfind("global_step/sec: ", 0) == 0);  // step 21 logs last
  CHECK_FALSE(session.should_stop());
  CHECK(session.global_step() == 21);
}

TEST_CASE("Session: runs that do not train, between training runs, allocate nothing",
          "[session][alloc][no_train]") {
  const auto& [features, labels] =
      hookfuse_test::RandomExamples(43, kExamples, kFeatures, kClasses);

  Placeholder<"x", float, kFeatures> x;
  Placeholder<"labels", std::int32_t, 1> y;
  nn::Dense<"dense", float> hidden(kFeatures, kHidden, nn::glorot_uniform{1});
  nn::Dense<"logits", float> out(kHidden, kClasses, nn::glorot_uniform{2});
  auto logits = named<"logits">(out(relu(hidden(x))));
  auto loss = named<"loss">(sparse_softmax_cross_entropy(y, logits));
  auto acc = named<"accuracy">(accuracy(y, logits));
  GlobalStep gs;

  FakeClock clock;
  CountingLogger::State log;
  using Fake = ClockRef<FakeClock>;
  MonitoredTrainingSession session(
      GradientDescentOptimizer(0.01).minimize(loss, gs), PreallocatedInput{&features, &labels},
      hooks(StopAtStepHook({.num_steps = 1000}), NanTensorHook<"loss", CountingLogger>({}, {&log}),
            StepCounterHook<Fake, CountingLogger>({.every_n_steps = 5}, Fake{&clock}, {&log}),
            BasicLoggingTensorHook<LoggingPolicies<Fake, CountingLogger>, "loss", "accuracy">(
                {.every_n_iter = 3}, {}, Fake{&clock}, {&log})),
      acc);

  session.run();  // warm-up
  clock.advance(0.5);
  session.run<"loss", "accuracy">(no_train);  // the first of its kind outside the scope too
  clock.advance(0.5);
  REQUIRE(log.info == 1);

  std::size_t news = 0;
  std::size_t eigen_mallocs = 0;
  double fetched = 0.0;
  {
    hookfuse_test::NoAllocScope scope;  // no Catch2 assertions inside: they allocate
    for (int i = 0; i < 20; ++i) {
      if (i % 2 == 0) {
        session.run();
      } else {
        const auto v = session.run<"loss", "accuracy">(no_train);
        fetched += v->get<"accuracy">().item();
      }
      clock.advance(0.5);
    }
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }

  CHECK(news == 0);
  CHECK(eigen_mallocs == 0);
  CHECK(fetched >= 0.0);  // the caller's fetches: 10 accuracies, each in [0, 1]
  CHECK(fetched <= 10.0);
  // 22 runs, 11 of them training (global step 11). LoggingTensorHook counts every run: lines at
  // iterations 0, 3, ..., 21 (1 before the scope, 7 inside). StepCounterHook: baseline at step 1,
  // reports at 6 and 11; each training run after a run that does not train has the same stale
  // step: the stalled-step warning, at most 5 per session.
  CHECK(log.info == 1 + 7 + 2);
  CHECK(log.warning == 5);
  CHECK(log.error == 0);
  CHECK(session.global_step() == 11);
}

#ifndef HOOKFUSE_CORE_ONLY
TEST_CASE("Session: steps a ProfilerHook does not trace allocate nothing", "[session][alloc]") {
  // The same classifier; two ProfilerHooks, one by steps and one by seconds, neither of which
  // fires in the measured runs (the first run of a session is never traced, TF's cadence; the
  // next step trigger is global step 1000, the next time trigger 3600 s after the first run).
  // Their output_dir is "" (the current directory): nothing is created, nothing written.
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

  FakeClock clock;
  CountingLogger::State log;
  using Fake = ClockRef<FakeClock>;
  MonitoredTrainingSession session(
      train_op, PreallocatedInput{&features, &labels},
      hooks(StopAtStepHook({.num_steps = 1000}),
            ProfilerHook<Fake, CountingLogger>({.save_steps = 1000}, Fake{&clock}, {&log}),
            ProfilerHook<Fake, CountingLogger>({.save_secs = 3600.0}, Fake{&clock}, {&log})));
  static_assert(decltype(session)::step_phases::timed);

  session.run();  // warm-up, and the profilers' first run (never traced)
  std::size_t news = 0;
  std::size_t eigen_mallocs = 0;
  {
    hookfuse_test::NoAllocScope scope;  // no Catch2 assertions inside: they allocate
    for (int i = 0; i < 20; ++i) {
      session.run();
      clock.advance(0.5);
    }
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }
  CHECK(news == 0);
  CHECK(eigen_mallocs == 0);
  CHECK(log.info == 0);  // no "Saving timeline" line: nothing was traced
  CHECK(session.global_step() == 21);
}
#endif

namespace {
/// The classifier above trained by `optimizer` with no hooks: 20 runs after the first allocate
/// nothing (the slots were created when the session bound the graph). Returns {news, mallocs}.
template <class Opt>
std::pair<std::size_t, std::size_t> optimizer_step_allocations(const Opt& optimizer,
                                                               int threads) {
  struct ThreadsScope {
    explicit ThreadsScope(int n) { set_intra_op_parallelism_threads(n); }
    ~ThreadsScope() { set_intra_op_parallelism_threads(1); }
  } threads_scope(threads);
  const auto& [features, labels] =
      hookfuse_test::RandomExamples(5, kExamples, kFeatures, kClasses);
  Placeholder<"x", float, kFeatures> x;
  Placeholder<"labels", std::int32_t, 1> y;
  nn::Dense<"dense", float> hidden(kFeatures, kHidden, nn::glorot_uniform{1});
  nn::Dense<"logits", float> out(kHidden, kClasses, nn::glorot_uniform{2});
  auto logits = named<"logits">(out(relu(hidden(x))));
  auto loss = named<"loss">(sparse_softmax_cross_entropy(y, logits));
  GlobalStep gs;
  MonitoredTrainingSession session(optimizer.minimize(loss, gs),
                                   PreallocatedInput{&features, &labels}, hooks());
  session.run();
  std::pair<std::size_t, std::size_t> counts;
  {
    hookfuse_test::NoAllocScope scope;  // no Catch2 assertions inside: they allocate
    for (int i = 0; i < 20; ++i) session.run();
    counts = {scope.news(), scope.eigen_mallocs()};
  }
  return counts;
}
}  // namespace

TEST_CASE("Session: steps of the optimizers with slots allocate nothing", "[session][alloc]") {
  // On one thread, and on 2 intra-op threads, where the 784 x 256 kernel's update is split.
  const int threads = GENERATE(1, 2);
  INFO("intra-op threads: " << threads);
  using P = std::pair<std::size_t, std::size_t>;
  CHECK(optimizer_step_allocations(MomentumOptimizer(0.01, 0.9), threads) == P{0, 0});
  CHECK(optimizer_step_allocations(MomentumOptimizer(0.01, 0.9, true), threads) == P{0, 0});
  CHECK(optimizer_step_allocations(AdamOptimizer(), threads) == P{0, 0});
  CHECK(optimizer_step_allocations(RMSPropOptimizer(0.01, 0.9, 0.5), threads) == P{0, 0});
  CHECK(optimizer_step_allocations(RMSPropOptimizer<true>(0.01, 0.9, 0.5), threads) == P{0, 0});
  CHECK(optimizer_step_allocations(AdagradOptimizer(0.01), threads) == P{0, 0});
}

TEST_CASE("The allocation counters see allocations", "[alloc]") {
  // Guards against counters that are not wired in (which would make the test above vacuous).
  std::size_t news = 0;
  std::size_t eigen_mallocs = 0;
  {
    hookfuse_test::NoAllocScope scope;
    auto* p = new std::vector<int>(100);
    delete p;
    Eigen::MatrixXf m(16, 16);  // Eigen's own aligned malloc, not operator new
    m.setZero();
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }
  CHECK(news >= 1);
  CHECK(eigen_mallocs >= 1);
}

TEST_CASE("Session: FeedFnHook, FinalOpsHook, GlobalStepWaiterHook and an increment of 2 "
          "allocate nothing per step",
          "[session][alloc]") {
  const auto& [features, labels] =
      hookfuse_test::RandomExamples(7, kExamples, kFeatures, kClasses);

  Placeholder<"x", float, kFeatures> x;
  Placeholder<"labels", std::int32_t, 1> y;
  nn::Dense<"dense", float> hidden(kFeatures, kHidden, nn::glorot_uniform{1});
  nn::Dense<"logits", float> out(kHidden, kClasses, nn::glorot_uniform{2});
  auto logits = named<"logits">(out(relu(hidden(x))));
  auto loss = named<"loss">(sparse_softmax_cross_entropy(y, logits));
  auto acc = named<"accuracy">(accuracy(y, logits));
  GlobalStep gs;
  auto train_op = GradientDescentOptimizer(0.01).minimize(loss, gs);
  train_op.global_step_increment = 2;

  // The hook feeds "x" (replacing the input's) from the same preallocated examples, and the
  // waiter's source is already past its step: after the first run it does nothing.
  struct XBatches {
    const std::vector<float>* features;
    Index offset = -kBatch;
    auto operator()() {
      offset = (offset + kBatch) % kExamples;
      return feed<"x">(features->data() + offset * kFeatures, kBatch, kFeatures);
    }
  };
  struct NoSleep {
    void operator()(double) const {}
  };
  auto source = [] { return std::int64_t{100}; };
  CountingLogger::State log;
  MonitoredTrainingSession session(
      train_op, PreallocatedInput{&features, &labels},
      // FinalOpsHook keeps tensors the last run computed ("accuracy" is not: a hook feeds this
      // session, so its feeds last one run and end() would refuse to recompute it).
      hooks(FeedFnHook(XBatches{&features}), FinalOpsHook<"loss", "logits">(),
            GlobalStepWaiterHook<decltype(source), NoSleep, CountingLogger>(
                {.wait_until_step = 50}, source, {}, {&log})),
      acc);
  session.run();  // warm-up
  std::size_t news = 0;
  std::size_t eigen_mallocs = 0;
  {
    hookfuse_test::NoAllocScope scope;
    for (int i = 0; i < 10; ++i) session.run();
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }
  CHECK(news == 0);
  CHECK(eigen_mallocs == 0);
  CHECK(session.global_step() == 22);
  CHECK(log.info == 1);  // the waiter's first line only
  session.close();
  REQUIRE(session.hook<1>().final_ops_values().has_value());
  CHECK(std::isfinite(session.hook<1>().value<"loss">()->item()));
  CHECK(session.hook<1>().value<"logits">()->rows == kBatch);
}
