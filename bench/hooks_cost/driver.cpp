// bench/hooks_cost/driver.cpp: the session of bench/hooks.cpp (bench/hooks_model.hpp) with N
// hooks that never fire after the first run, fused (saying when they are idle, or called every
// run) or behind the virtual interface, run for a given number of steps; bench/hooks_cost.sh
// counts its instructions per step under callgrind.
//
//   driver fused|fused_called|virtual <hooks: 0, 1, 5, 10 or 20> <steps> [firing: 0 or 1]
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "../hooks_model.hpp"

using namespace hookfuse_bench;

namespace {

template <class Hooks>
int train(Hooks hooks, int steps) {
  TinyRegression model;
  hf::MonitoredTrainingSession session(model.train_op(), FixedBatch{}, std::move(hooks));
  for (int i = 0; i < steps; ++i) session.run();
  std::printf("%g\n", static_cast<double>(model.W.value(0, 0)));  // keeps the work observable
  return 0;
}

// HOOKS_COST_KIND (0: fused, 1: fused_called, 2: virtual; bench/hooks_cost.sh builds one binary
// per kind) compiles one family only: how much code a translation unit holds changes what GCC
// inlines (its inline-unit-growth budget), so one binary with every family would not measure
// what a program with one session measures. Without it, every family (a usable manual build).
template <std::size_t N>
int run(std::string_view kind, int steps, std::int64_t every_n_iter) {
#if !defined(HOOKS_COST_KIND) || HOOKS_COST_KIND == 0
  if (kind == "fused")
    return train(make_fused_hooks<true>(every_n_iter, std::make_index_sequence<N>{}), steps);
#endif
#if !defined(HOOKS_COST_KIND) || HOOKS_COST_KIND == 1
  if (kind == "fused_called")
    return train(make_fused_hooks<false>(every_n_iter, std::make_index_sequence<N>{}), steps);
#endif
#if !defined(HOOKS_COST_KIND) || HOOKS_COST_KIND == 2
  if (kind == "virtual")
    return train(hf::hooks(VirtualHookAdapter(
                     make_virtual_hooks(every_n_iter, std::make_index_sequence<N>{}))),
                 steps);
#endif
  std::fprintf(stderr, "driver: this binary was built for another kind than %.*s\n",
               static_cast<int>(kind.size()), kind.data());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: driver fused|fused_called|virtual <hooks> <steps> [firing]\n");
    return 2;
  }
  const std::string_view kind = argv[1];
  if (kind != "fused" && kind != "fused_called" && kind != "virtual") {
    std::fprintf(stderr, "driver: unknown kind %s (fused, fused_called or virtual)\n", argv[1]);
    return 2;
  }
  const int n = std::atoi(argv[2]);
  const int steps = std::atoi(argv[3]);
  const std::int64_t every = (argc == 5 && std::atoi(argv[4]) != 0) ? kEveryRun : kNever;
  switch (n) {
    case 0: return run<0>(kind, steps, every);
    case 1: return run<1>(kind, steps, every);
    case 5: return run<5>(kind, steps, every);
    case 10: return run<10>(kind, steps, every);
    case 20: return run<20>(kind, steps, every);
    default: std::fprintf(stderr, "driver: hooks must be 0, 1, 5, 10 or 20, got %s\n", argv[2]);
  }
  return 2;
}
