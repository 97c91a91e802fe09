// bench/compile/hooks_n.cpp: a translation unit with a MonitoredTrainingSession of
// HOOKFUSE_BENCH_HOOKS hooks (default 10), whose compile time bench/compile_time.sh measures for
// 1, 10 and 30 hooks. Not a CMake target.
//
// Compile and run by hand, with the flags the project uses for examples and benchmarks:
//   c++ -std=c++20 -O3 -DNDEBUG -march=native -Iinclude -isystem /usr/include/eigen3
//       -DHOOKFUSE_BENCH_HOOKS=30 bench/compile/hooks_n.cpp -o hooks_30 && ./hooks_30
//
// The model is small so that the hooks are what the compiler spends its time on: softmax
// regression, 2 features -> 3 classes (logits = x W + b, sparse softmax cross-entropy, an
// accuracy metric outside the loss's graph). -DHOOKFUSE_BENCH_MLP trains the Fashion-MNIST
// example's 784 -> 256 ReLU -> 10 network instead, where Eigen's products dominate the compile
// time. The input is one random batch of 32, fed every step.
//
// Hook I is its own type, PeriodicHook<I>, with every event of the protocol. It requests one of
// three fetch lists depending on I % 3 ("loss"; "loss" and "accuracy"; "global_step") and
// triggers every 10 + I runs on the library's timer, as a LoggingTensorHook or StepCounterHook
// would. The program trains 50 steps and prints how often the hooks fired; the compile-time
// benchmark only compiles it (-c).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <hookfuse/hookfuse.hpp>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#ifndef HOOKFUSE_BENCH_HOOKS
#define HOOKFUSE_BENCH_HOOKS 10
#endif

namespace hf = hookfuse;

namespace {

constexpr std::size_t kHooks = HOOKFUSE_BENCH_HOOKS;
#ifdef HOOKFUSE_BENCH_MLP
constexpr int kIn = 784, kHidden = 256, kOut = 10;
#else
constexpr int kIn = 2, kOut = 3;
#endif
constexpr hf::Index kBatch = 32;

/// One batch of random pixels and labels, fed every step.
struct RandomBatch {
  std::vector<float> x = std::vector<float>(kBatch * kIn);
  std::vector<std::int32_t> y = std::vector<std::int32_t>(kBatch);
  RandomBatch() {
    std::mt19937 rng(7);
    for (float& v : x) v = static_cast<float>(rng() % 256) / 255.f;  // pixels in [0, 1]
    for (std::int32_t& v : y) v = static_cast<std::int32_t>(rng() % kOut);
  }
  bool next() { return true; }
  hf::Index batch_size() const { return kBatch; }
  template <class Graph>
  void feed(Graph& graph) {
    graph.template feed<"x">(x.data(), kBatch, kIn);
    graph.template feed<"labels">(y.data(), kBatch, 1);
  }
};

/// What hook I fetches when it triggers.
template <std::size_t I>
struct FetchesOf {
  using type = hf::SessionRunArgs<"loss">;
};
template <std::size_t I>
requires(I % 3 == 1) struct FetchesOf<I> {
  using type = hf::SessionRunArgs<"loss", "accuracy">;
};
template <std::size_t I>
requires(I % 3 == 2) struct FetchesOf<I> {
  using type = hf::SessionRunArgs<"global_step">;
};

template <class Args>
struct ValuesOf;
template <hf::fixed_string... Names>
struct ValuesOf<hf::SessionRunArgs<Names...>> {
  using type = hf::SessionRunValues<Names...>;
};

/// A periodic hook on the library's timer, with every event of the protocol.
template <std::size_t I>
class PeriodicHook {
  using Args = typename FetchesOf<I>::type;
  using Values = typename ValuesOf<Args>::type;

 public:
  void begin() { timer_.reset(); }
  template <class Session>
  void after_create_session(Session& session) {
    start_step_ = session.global_step();
  }
  Args before_run(hf::SessionRunContext&) {
    trigger_ = timer_.should_trigger_for_step(runs_);
    return {trigger_};
  }
  void after_run(hf::SessionRunContext&, const Values& values) {
    if (trigger_) {
      timer_.update_last_triggered_step(runs_);
      for (const hf::TensorValue& v : values.results) sum_ += v.item();
      ++fired_;
    }
    ++runs_;
  }
  template <class Session>
  void end(Session& session) {
    steps_ = session.global_step() - start_step_;
  }

  std::int64_t fired() const { return fired_; }
  std::int64_t steps() const { return steps_; }
  double sum() const { return sum_; }

 private:
  hf::SecondOrStepTimer<> timer_{std::nullopt, std::int64_t{10 + I}};
  std::int64_t start_step_ = 0, steps_ = 0, runs_ = 0, fired_ = 0;
  double sum_ = 0.0;
  bool trigger_ = false;
};

template <std::size_t... I>
auto make_hooks(std::index_sequence<I...>) {
  return hf::hooks(PeriodicHook<I>{}...);
}

}  // namespace

int main() {
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
#ifdef HOOKFUSE_BENCH_MLP
  hf::nn::Dense<"dense", float> hidden(kIn, kHidden, hf::nn::glorot_uniform{1});
  hf::nn::Dense<"logits", float> output(kHidden, kOut, hf::nn::glorot_uniform{2});
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
#else
  hf::Variable<"W", float, kIn, kOut> W;
  hf::Variable<"b", float, 1, kOut> b;
  hf::nn::glorot_uniform{1}(W.value);
  auto logits = hf::named<"logits">(hf::matmul(x, W) + b);
#endif
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  auto accuracy = hf::named<"accuracy">(hf::accuracy(labels, logits));
  hf::GlobalStep global_step;
  auto train_op = hf::GradientDescentOptimizer(0.1).minimize(loss, global_step);

  hf::MonitoredTrainingSession session(train_op, RandomBatch{},
                                       make_hooks(std::make_index_sequence<kHooks>{}), accuracy);
  for (int step = 0; step < 50; ++step) session.run();
  session.close();

  std::int64_t fired = 0;
  double sum = 0.0;
  boost::hana::for_each(session.hooks(), [&](const auto& h) {
    fired += h.fired();
    sum += h.sum();
  });
  std::printf("hooks: %zu, global_step: %lld, hook triggers: %lld, sum of fetched values: %g\n",
              kHooks, static_cast<long long>(session.global_step()), static_cast<long long>(fired),
              sum);
  return 0;
}
