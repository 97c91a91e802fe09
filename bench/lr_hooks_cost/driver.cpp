// bench/lr_hooks_cost/driver.cpp: a tiny fixed-size regression (x [8, 4], W [4, 1], SGD) trained
// for N steps with one of the schedule / Keras-style hooks, for bench/lr_hooks_cost.sh to count
// instructions per step under callgrind.
//
//   driver <variant> <steps>
//
// The model is small on purpose (a few hundred instructions per step), so a hook's cost shows.
#include <cstdio>
#include <cstdlib>
#include <hookfuse/hookfuse.hpp>
#include <string_view>

namespace hf = hookfuse;

namespace {

struct FixedInput {
  float x[8 * 4];
  float y[8];
  FixedInput() {
    for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i % 7) / 7.0f;
    for (int i = 0; i < 8; ++i) y[i] = static_cast<float>(i) / 8.0f;
  }
  bool next() { return true; }
  hf::Index batch_size() const { return 8; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(x, 8, 4);
    g.template feed<"y">(y, 8);
  }
};

template <class... H>
int train(int steps, H... h) {
  hf::Placeholder<"x", float, 4, 8> x;
  hf::Placeholder<"y", float, 1, 8> y;
  hf::Variable<"W", float, 4, 1> W;
  hf::Variable<"b", float, 1, 1> b;
  hf::GlobalStep gs;
  auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b));
  hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.01).minimize(loss, gs),
                                 FixedInput{}, hf::hooks(h...));
  for (int i = 0; i < steps; ++i) s.run();
  std::printf("%g\n", static_cast<double>(W.value(0, 0)));  // keeps the work observable
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: driver <variant> <steps>\n");
    return 2;
  }
  const std::string_view v = argv[1];
  const int n = std::atoi(argv[2]);
  using hf::NullLogger;
  if (v == "none") return train(n);
  if (v == "scheduler_cosine_warmup")
    return train(
        n, hf::LearningRateSchedulerHook(hf::linear_warmup(hf::cosine_decay(0.01, 1000000), 100)));
  if (v == "scheduler_piecewise")
    return train(n, hf::LearningRateSchedulerHook(
                        hf::piecewise_constant({100000, 200000}, {0.01, 0.001, 0.0001})));
  if (v == "plateau_not_firing")
    return train(n, hf::ReduceLROnPlateauHook<"loss", NullLogger>({.every_n_iter = 1000000}));
  // Checks every step; patience so large that it never reduces (a reduction is rare and logs).
  if (v == "plateau_every_step")
    return train(n, hf::ReduceLROnPlateauHook<"loss", NullLogger>({.patience = 1000000000}));
  if (v == "terminate_on_non_finite")
    return train(n, hf::TerminateOnNonFiniteHook<"loss", NullLogger>());
  if (v == "timer_stop")
    return train(n, hf::TimerStopHook<hf::SteadyClock, NullLogger>({.seconds = 1e9}));
  if (v == "timer_stop_every_100")
    return train(
        n, hf::TimerStopHook<hf::SteadyClock, NullLogger>({.seconds = 1e9, .every_n_iter = 100}));
  std::fprintf(stderr, "driver: unknown variant %s\n", argv[1]);
  return 2;
}
