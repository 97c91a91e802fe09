// bench/threads.cpp: the Fashion-MNIST step (bench/step.cpp's BM_hookfuse_step, four hooks) on
// hookfuse's intra-op thread pool: 1 and 2 threads at batch 32 and 128, set with
// hookfuse::set_intra_op_parallelism_threads (the pool's threads are started before the timed
// loop, and the step allocates nothing); and the step with Adam at batch 32, whose update is
// split too.
//   ./build/bench/threads --benchmark_min_time=1 --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <chrono>
#include <hookfuse/hookfuse.hpp>

#include "mlp.hpp"
#include "peak.hpp"

namespace hf = hookfuse;
using namespace hookfuse_bench;

namespace {

template <class Optimizer>
void step_on_threads(benchmark::State& state, Optimizer optimizer) {
  const auto batch = static_cast<hf::Index>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  measured_peak_flops();  // measured on one thread, before the step's threads start
  hf::set_intra_op_parallelism_threads(threads);
  with_hookfuse_session_using(RandomBatch(batch), optimizer, [&](auto& session) {
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) session.run();
    report_flops(state, mlp_step_flops(batch), start);
  });
  hf::set_intra_op_parallelism_threads(1);
  state.counters["threads"] = threads;
}

/// SGD: the update fused into the weight-gradient products.
void BM_hookfuse_step_threads(benchmark::State& state) {
  step_on_threads(state, hf::GradientDescentOptimizer(0.01));
}

/// Adam: its elementwise update of the 784 x 256 kernel split too.
void BM_hookfuse_step_threads_adam(benchmark::State& state) {
  step_on_threads(state, hf::AdamOptimizer(0.001));
}

}  // namespace

BENCHMARK(BM_fma_peak)->Iterations(1);
BENCHMARK(BM_hookfuse_step_threads)
    ->ArgNames({"batch", "threads"})
    ->Args({32, 1})->Args({32, 2})->Args({128, 1})->Args({128, 2})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_hookfuse_step_threads_adam)
    ->ArgNames({"batch", "threads"})
    ->Args({32, 1})->Args({32, 2})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

BENCHMARK_MAIN();
