// bench/summary.cpp: what TensorBoard summaries cost (issue 10).
//
// The batch-32 training step with the example's four hooks, alone and with one more hook:
//  - SummarySaverHook on summary::scalar<"loss">(loss) and summary::scalar<"accuracy">(accuracy)
//    that does not fire in the timed steps (save_steps = 2^40), and the same firing every step
//    (save_steps = 1: accuracy is computed, both scalars fetched, one event written per step);
//  - StepCounterHook with output_dir that does not fire (every_n_steps = 2^40).
// And the event alone: io::Summary of two scalars, SummaryWriter::add_summary (TF's defaults:
// buffered, written out once more than 10 events are pending) and the same with flush() after
// every event (one write(2) each; event files are never fsync'd).
//
// Run alternately: --benchmark_enable_random_interleaving=true --benchmark_repetitions=N.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <hookfuse/io/summary_proto.hpp>
#include <hookfuse/io/summary_writer.hpp>

#include "hook_session.hpp"

namespace hf = hookfuse;
using namespace hookfuse_bench;

namespace {

template <Extra E>
void BM_step(benchmark::State& state) {
  const ScratchDir dir("/tmp");
  with_extra_hook_session<E>(RandomBatch(32), dir.path().string(), [&](auto& session) {
    session.run();  // the session's first run: SummarySaverHook writes START and its summaries
    for (auto _ : state) session.run();
  });
  state.SetLabel(extra_name(E));
}

// One event of two scalars, as a firing SummarySaverHook makes and writes it. Argument 1:
// flush() after each event.
void BM_summary_event(benchmark::State& state) {
  const ScratchDir dir("/tmp");
  const bool flush = state.range(0) != 0;
  auto writer = hf::io::create_file_writer(dir.path());
  std::int64_t step = 0;
  float loss = 2.3f;
  for (auto _ : state) {
    hf::io::Summary s;
    s.value.reserve(2);
    s.value.push_back(hf::io::scalar_value("loss", loss, writer->options().scalar_form));
    s.value.push_back(hf::io::scalar_value("accuracy", 0.5, writer->options().scalar_form));
    writer->add_summary(s, ++step);
    if (flush) writer->flush();
    loss *= 0.999f;
  }
  writer->close();
  state.SetLabel(flush ? "flush every event" : "TF defaults (max_queue 10)");
}

}  // namespace

BENCHMARK_TEMPLATE(BM_step, Extra::none)
    ->Name("BM_step_b32/four_hooks")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_step, Extra::summary_saver)
    ->Name("BM_step_b32/plus_summary_saver_not_firing")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_step, Extra::summary_saver_every_step)
    ->Name("BM_step_b32/plus_summary_saver_every_step")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_step, Extra::step_counter_output_dir)
    ->Name("BM_step_b32/plus_step_counter_output_dir_not_firing")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_summary_event)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

BENCHMARK_MAIN();
