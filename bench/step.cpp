// bench/step.cpp: one Fashion-MNIST training step (784 -> 256 ReLU -> 10, softmax cross-entropy,
// SGD, float32) at batch 1, 32 and 128: hookfuse's fused step with the example's four hooks
// against the same step written by hand with Eigen (gradients in buffers, and with the update
// fused into the weight-gradient products). Every benchmark reports GFLOP/s and the fraction of
// the FMA peak measured by BM_fma_peak in the same binary.
#include <benchmark/benchmark.h>

#include <hookfuse/hookfuse.hpp>
#include <chrono>

#include "mlp.hpp"
#include "peak.hpp"

namespace hf = hookfuse;
using namespace hookfuse_bench;

namespace {

void BM_hookfuse_step(benchmark::State& state) {
  const auto batch = static_cast<hf::Index>(state.range(0));
  with_hookfuse_session(RandomBatch(batch), 0.01, [&](auto& session) {
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) session.run();
    report_flops(state, mlp_step_flops(batch), start);
  });
}

// The hookfuse step with a given optimizer (TensorFlow 1.x's defaults otherwise): sgd is
// BM_hookfuse_step's step through the same code, so that the three rows of one run compare
// optimizers alone. SGD and Momentum (without Nesterov) fold the update into the backward pass;
// Adam stores every gradient and updates its two slots and the variable after it.
template <class Optimizer>
void BM_hookfuse_step_optimizer(benchmark::State& state, Optimizer optimizer) {
  const auto batch = static_cast<hf::Index>(state.range(0));
  with_hookfuse_session_using(RandomBatch(batch), optimizer, [&](auto& session) {
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) session.run();
    report_flops(state, mlp_step_flops(batch), start);
  });
}

// The same step written by hand with Eigen. Fused = false: gradients in buffers, then the update,
// as a user would write it. Fused = true: w -= lr * x^T * d, the gradient never stored.
template <bool Fused>
void BM_handwritten_eigen_step(benchmark::State& state) {
  const auto batch = static_cast<hf::Index>(state.range(0));
  const RandomBatch data(batch);
  HandwrittenMlp mlp(batch, 0.01f);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(mlp.template step<Fused>(data.x, data.y));
  benchmark::DoNotOptimize(mlp.w1().data());
  report_flops(state, mlp_step_flops(batch), start);
}

// The optimizer update alone: GradientDescentOptimizer::apply on the model's four variables
// (203,530 floats) from stored gradients, as the unfused path does after every backward pass.
// Two FLOPs and 12 bytes (read value and gradient, write value) per parameter.
void BM_sgd_update(benchmark::State& state) {
  hf::Variable<"dense/kernel", float, hf::Dynamic, hf::Dynamic> w1(kIn, kHidden);
  hf::Variable<"dense/bias", float, 1, hf::Dynamic> b1(1, kHidden);
  hf::Variable<"logits/kernel", float, hf::Dynamic, hf::Dynamic> w2(kHidden, kOut);
  hf::Variable<"logits/bias", float, 1, hf::Dynamic> b2(1, kOut);
  const InitialWeights init;
  w1.value = init.w1;
  w2.value = init.w2;
  w1.grad.setConstant(1e-3f);
  b1.grad.setConstant(1e-3f);
  w2.grad.setConstant(1e-3f);
  b2.grad.setConstant(1e-3f);
  const hf::GradientDescentOptimizer sgd(0.01);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    sgd.apply(w1);
    sgd.apply(b1);
    sgd.apply(w2);
    sgd.apply(b2);
    benchmark::ClobberMemory();
  }
  constexpr double params = double(kIn) * kHidden + kHidden + double(kHidden) * kOut + kOut;
  report_flops(state, 2 * params, start);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(12 * params));
}

}  // namespace

BENCHMARK(BM_fma_peak)->Iterations(1);
BENCHMARK_TEMPLATE(BM_handwritten_eigen_step, false)
    ->Name("BM_handwritten_eigen_step")->Arg(1)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_handwritten_eigen_step, true)
    ->Name("BM_handwritten_eigen_fused_update_step")->Arg(1)->Arg(32)->Arg(128)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_hookfuse_step)->Arg(1)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_hookfuse_step_optimizer, sgd, hf::GradientDescentOptimizer(0.01))
    ->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_hookfuse_step_optimizer, momentum, hf::MomentumOptimizer(0.01, 0.9))
    ->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_hookfuse_step_optimizer, adam, hf::AdamOptimizer(0.001))
    ->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_sgd_update)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
