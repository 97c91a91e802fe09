// bench/compile/graph_stages.cpp: where the compile time of (a) (session_step.cpp) goes, stage by
// stage, without a session: the Fashion-MNIST model (784 -> 256 ReLU -> 10) bound to a graph and
// run by hand. Compile it with -DHOOKFUSE_BENCH_STAGE=N (bench/README.md, "Compile time"):
//   1: the headers only (autodiff, Dense, GradientDescentOptimizer) and an empty main;
//   2: + the model and bind() (the tape, the graph's buffers, the initializers);
//   3: + feeds and forward();
//   4: + backward();
//   5: + the SGD update (apply_unfused).
// session_step.cpp adds the MonitoredTrainingSession and its four hooks to stage 5. Not a CMake
// target and not part of compile_time.sh: compile it by hand as that script does (-c).
#include <cstdint>
#include <cstdio>

#include <hookfuse/autodiff.hpp>
#include <hookfuse/nn/dense.hpp>
#include <hookfuse/optim/gradient_descent.hpp>

#ifndef HOOKFUSE_BENCH_STAGE
#define HOOKFUSE_BENCH_STAGE 5
#endif

namespace hf = hookfuse;

namespace {
constexpr hf::Index kBatch = 32, kIn = 784;
float pixels[kBatch * kIn];    // [32, 784], zero
std::int32_t classes[kBatch];  // [32], class 0
}  // namespace

int main() {
#if HOOKFUSE_BENCH_STAGE >= 2
  hf::Placeholder<"x", float, 784> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
  hf::nn::Dense<"dense", float> hidden(784, 256, hf::nn::glorot_uniform{7});
  hf::nn::Dense<"logits", float> output(256, 10, hf::nn::glorot_uniform{8});
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  auto accuracy = hf::named<"accuracy">(hf::accuracy(labels, logits));
  auto graph = hf::bind(kBatch, loss, accuracy);
  float value = 0;
#if HOOKFUSE_BENCH_STAGE >= 3
  graph.feed<"x">(pixels, kBatch, kIn);
  graph.feed<"labels">(classes, kBatch, 1);
  value = graph.forward();
#endif
#if HOOKFUSE_BENCH_STAGE >= 4
  graph.backward();
#endif
#if HOOKFUSE_BENCH_STAGE >= 5
  graph.apply_unfused<hf::detail::FuseNone>(hf::GradientDescentOptimizer(0.1));
#endif
  std::printf("%g\n", static_cast<double>(value));
#else
  std::printf("headers only\n");
#endif
  return 0;
}
