// bench/optimizer_cost/driver.cpp: the BM_hookfuse_step_optimizer session of bench/step.cpp (the
// Fashion-MNIST MLP with the example's four hooks, bench/mlp.hpp) trained for a given number of
// steps with SGD, Momentum or Adam; bench/optimizer_cost.sh counts its instructions per step
// under callgrind.
//
//   driver sgd|momentum|adam <batch> <steps>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "../mlp.hpp"

namespace hf = hookfuse;
using namespace hookfuse_bench;

namespace {

template <class Optimizer>
int train(Optimizer optimizer, hf::Index batch, int steps) {
  float w = 0.0f;
  with_hookfuse_session_using(RandomBatch(batch), optimizer, [&](auto& session) {
    for (int i = 0; i < steps; ++i) session.run();
    w = static_cast<float>(session.template fetch<"loss">().item());
  });
  std::printf("%g\n", static_cast<double>(w));  // keeps the work observable
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: driver sgd|momentum|adam <batch> <steps>\n");
    return 2;
  }
  const std::string_view name = argv[1];
  const hf::Index batch = std::atoi(argv[2]);
  const int steps = std::atoi(argv[3]);
  if (batch < 1) {
    std::fprintf(stderr, "driver: batch must be >= 1, got %s\n", argv[2]);
    return 2;
  }
  // The learning rates and defaults of bench/step.cpp.
  if (name == "sgd") return train(hf::GradientDescentOptimizer(0.01), batch, steps);
  if (name == "momentum") return train(hf::MomentumOptimizer(0.01, 0.9), batch, steps);
  if (name == "adam") return train(hf::AdamOptimizer(0.001), batch, steps);
  std::fprintf(stderr, "driver: unknown optimizer %s (sgd, momentum or adam)\n", argv[1]);
  return 2;
}
