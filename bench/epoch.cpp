// bench/epoch.cpp: one Fashion-MNIST training epoch (60,000 images at batch 32, SGD 0.1, batch
// order NumpyInputFn seed 7, from hookfuse_bench::InitialWeights): hookfuse's
// MonitoredTrainingSession with the example's four hooks against the hand-written Eigen step,
// then the test accuracy of the trained weights. One iteration is one epoch; every benchmark
// reports "s/epoch", GFLOP/s, the fraction of the FMA peak and "test_accuracy". The data
// directory is $HOOKFUSE_FASHION_MNIST_DIR or Debian's dataset-fashion-mnist folder (see
// fashion_mnist.hpp); without the data the benchmarks report an error naming the paths tried.
#include <benchmark/benchmark.h>

#include <chrono>
#include <hookfuse/hookfuse.hpp>

#include "fashion_mnist.hpp"
#include "mlp.hpp"
#include "peak.hpp"

namespace hf = hookfuse;
using namespace hookfuse_bench;

namespace {

void BM_hookfuse_epoch(benchmark::State& state) {
  const FashionMnist* data = fashion_mnist_or_skip(state);
  if (data == nullptr) return;
  const InitialWeights init;
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
  hf::nn::Dense<"dense", float> hidden(kIn, kHidden, hf::nn::zeros{});
  hf::nn::Dense<"logits", float> output(kHidden, kOut, hf::nn::zeros{});
  hidden.kernel.value = init.w1;
  hidden.bias.value = init.b1;
  output.kernel.value = init.w2;
  output.bias.value = init.b2;
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  auto accuracy = hf::named<"accuracy">(hf::accuracy(labels, logits));
  hf::GlobalStep global_step;
  auto train_op = hf::GradientDescentOptimizer(kEpochLearningRate).minimize(loss, global_step);
  auto input = epoch_input(*data);
  const std::int64_t last_step = epoch_steps(*data);

  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    // As examples/fashion_mnist: the session and its hooks are part of the epoch's time.
    hf::MonitoredTrainingSession session(
        train_op, hf::feeds<"x", "labels">(input),
        hf::hooks(hf::StopAtStepHook({.last_step = last_step}),
                  hf::StepCounterHook<hf::SteadyClock, hf::NullLogger>({.every_n_steps = 100}),
                  hf::NanTensorHook<"loss", hf::NullLogger>(),
                  hf::BasicLoggingTensorHook<hf::LoggingPolicies<hf::SteadyClock, hf::NullLogger>,
                                             "loss", "accuracy">({.every_n_iter = 100})),
        accuracy);
    while (!session.should_stop()) session.run();
  }
  report_epoch(state, *data, start);
  state.counters["test_accuracy"] = test_accuracy(
      *data, {hidden.kernel.value, output.kernel.value, hidden.bias.value, output.bias.value});
}

// The hand-written Eigen step (gradients in buffers). Each batch is copied from the input
// function into a RowMatrix, since HandwrittenMlp::step takes one (32 x 784 floats, about 1% of
// a step).
void BM_handwritten_eigen_epoch(benchmark::State& state) {
  const FashionMnist* data = fashion_mnist_or_skip(state);
  if (data == nullptr) return;
  HandwrittenMlp mlp(kEpochBatch, kEpochLearningRate);
  auto input = epoch_input(*data);
  RowMatrix x(kEpochBatch, kIn);
  LabelVector y(kEpochBatch);

  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    while (input.next()) {
      x = input.features();
      y = input.labels();
      benchmark::DoNotOptimize(mlp.step<false>(x, y));
    }
  }
  report_epoch(state, *data, start);
  state.counters["test_accuracy"] = test_accuracy(*data, {mlp.w1(), mlp.w2(), mlp.b1(), mlp.b2()});
}

}  // namespace

BENCHMARK(BM_fma_peak)->Iterations(1);
BENCHMARK(BM_handwritten_eigen_epoch)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_hookfuse_epoch)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
