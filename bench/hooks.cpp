// bench/hooks.cpp: the per-step cost of hooks: 0, 1, 5, 10, 20 hooks, non-firing and firing,
// fused by MonitoredTrainingSession against the same hooks behind a virtual interface.
//
// Run: cmake --build build --target bench_hooks && ./build/bench/hooks
//      (measured for bench/README.md with --benchmark_repetitions=5 --benchmark_min_time=0.5)
//
// The model is a fixed-size linear regression (x [4, 2] times W [2, 2] plus b [1, 2], mean
// squared error against y [4, 2], SGD) on one batch fed every step, so a step without hooks takes
// a few tens of nanoseconds and the hooks are what changes between rows.
//
// Every hook does what a LoggingTensorHook on "loss" does, minus the formatting: the library's
// SecondOrStepTimer decides, by run count, whether this run triggers; before_run asks for "loss"
// only then (otherwise the "return None" of TensorFlow), and after_run accumulates the loss when
// it triggered. Argument firing:1 triggers every run (every_n_iter = 1); firing:0 never does
// after the first run, which is taken before timing starts (every_n_iter = 2^40). The timer's
// clock is a FakeClock, so a trigger does not read the system clock (a steady_clock read per
// firing hook would add the same clock cost to both families and hide the dispatch cost).
//
// Families:
//   fused/hooks:N    N hooks of N distinct types FusedLossHook<0> ... FusedLossHook<N-1>, each
//                    its own instance, passed to hookfuse::hooks(...): one compile-time tuple.
//                    They say when they are idle (SkipsIdleRuns, as LoggingTensorHook does):
//                    a non-firing run calls none of them.
//   fused_called/hooks:N  the same without idle_runs() / skip_runs(): the session calls every
//                    hook every run (what a session with any hook that cannot say when it
//                    is idle does).
//   virtual/hooks:N  the same hooks as VirtualLossHook<I>, classes derived from an abstract
//                    VirtualHook, held in a std::vector<std::unique_ptr<VirtualHook>> and driven
//                    by one hookfuse hook, VirtualHookAdapter, as a user would bolt a TensorFlow-
//                    style dynamic hook list onto the session. The adapter requests "loss" only
//                    in runs where some virtual hook asked for it. virtual/hooks:0 is the adapter
//                    with an empty list.
// Counters, checks that a benchmark measures what its name says: fires_per_step, hook triggers per
// timed step (N when firing, 0 when not); mean_loss, the mean of the losses the hooks saw (finite
// and positive: the model neither diverges nor decays into denormals).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "hooks_model.hpp"

using namespace hookfuse_bench;

namespace {

// --- the benchmarks ----------------------------------------------------------------------------

std::int64_t every_n_iter_of(const benchmark::State& state) {
  return state.range(0) != 0 ? kEveryRun : kNever;
}

/// Triggers and accumulated losses over all hooks of a session.
struct Totals {
  std::int64_t fired = 0;
  double loss_sum = 0.0;
  void add(const LossWatcher& w) {
    fired += w.fired();
    loss_sum += w.loss_sum();
  }
};

template <class Hooks>
Totals totals(const Hooks& hooks) {
  Totals t;
  boost::hana::for_each(hooks, [&t](const auto& h) { t.add(h.watcher()); });
  return t;
}

template <std::size_t... I>
Totals totals(const VirtualHookAdapter& adapter, std::index_sequence<I...>) {
  Totals t;
  (t.add(static_cast<const VirtualLossHook<I>&>(*adapter.hooks()[I]).watcher()), ...);
  return t;
}

/// Times session.run(). The first run, where every timer triggers, happens before timing.
template <class Session, class CountTotals>
void time_steps(benchmark::State& state, Session& session, TinyRegression& model,
                CountTotals count) {
  session.run();
  const Totals before = count();
  for (auto _ : state) session.run();
  const Totals after = count();
  benchmark::DoNotOptimize(after.loss_sum);
  benchmark::DoNotOptimize(model.W.value.data());
  const auto fired = static_cast<double>(after.fired - before.fired);
  state.counters["fires_per_step"] = fired / static_cast<double>(state.iterations());
  if (fired > 0) state.counters["mean_loss"] = (after.loss_sum - before.loss_sum) / fired;
}

template <std::size_t N, bool Idle>
void BM_fused(benchmark::State& state) {
  TinyRegression model;
  hf::MonitoredTrainingSession session(
      model.train_op(), FixedBatch{},
      make_fused_hooks<Idle>(every_n_iter_of(state), std::make_index_sequence<N>{}));
  time_steps(state, session, model, [&session] { return totals(session.hooks()); });
}

template <std::size_t N>
void BM_virtual(benchmark::State& state) {
  TinyRegression model;
  hf::MonitoredTrainingSession session(
      model.train_op(), FixedBatch{},
      hf::hooks(VirtualHookAdapter(
          make_virtual_hooks(every_n_iter_of(state), std::make_index_sequence<N>{}))));
  time_steps(state, session, model, [&session] {
    return totals(boost::hana::at_c<0>(session.hooks()), std::make_index_sequence<N>{});
  });
}

template <std::size_t N>
void register_count() {
  const std::string hooks = "/hooks:" + std::to_string(N);
  benchmark::RegisterBenchmark(("fused" + hooks).c_str(), BM_fused<N, true>)
      ->ArgName("firing")
      ->Arg(0)
      ->Arg(1);
  benchmark::RegisterBenchmark(("fused_called" + hooks).c_str(), BM_fused<N, false>)
      ->ArgName("firing")
      ->Arg(0)
      ->Arg(1);
  benchmark::RegisterBenchmark(("virtual" + hooks).c_str(), BM_virtual<N>)
      ->ArgName("firing")
      ->Arg(0)
      ->Arg(1);
}

template <std::size_t... Counts>
bool register_counts(std::index_sequence<Counts...>) {
  (register_count<Counts>(), ...);
  return true;
}

[[maybe_unused]] const bool registered = register_counts(std::index_sequence<0, 1, 5, 10, 20>{});

}  // namespace

BENCHMARK_MAIN();
