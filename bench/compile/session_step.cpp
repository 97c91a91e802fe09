// bench/compile/session_step.cpp: compile-time benchmark (a) of bench/compile_time.sh: the
// Fashion-MNIST model (784 -> 256 ReLU -> 10, sparse softmax cross-entropy, an accuracy metric),
// a MonitoredTrainingSession with the example's four hooks (StopAtStepHook, StepCounterHook every
// 100 steps, NanTensorHook on "loss", LoggingTensorHook on "loss" and "accuracy" every 100 runs)
// and one run(). No command line, no data loading, no SessionOptions (no checkpoint directory):
// the input is one static batch of 32 zero pixels. Its hand-written twin is hand_step.cpp.
// Not a CMake target; bench/compile_time.sh compiles it (-c). It also links and runs:
//   c++ -std=c++20 -O3 -DNDEBUG -Iinclude -isystem /usr/include/eigen3
//       bench/compile/session_step.cpp -o session_step && ./session_step
#include <cstdint>
#include <cstdio>

#ifdef HOOKFUSE_BENCH_LEAN_INCLUDES
// (a'): only the headers this file uses, not the umbrella (which also brings the io layer:
// Saver, summaries, LevelDB, protozero, <filesystem>).
#include <hookfuse/autodiff.hpp>
#include <hookfuse/hooks/logging_tensor_hook.hpp>
#include <hookfuse/hooks/nan_tensor_hook.hpp>
#include <hookfuse/hooks/step_counter_hook.hpp>
#include <hookfuse/hooks/stop_at_step_hook.hpp>
#include <hookfuse/nn/dense.hpp>
#include <hookfuse/optim/gradient_descent.hpp>
#include <hookfuse/session/monitored_session.hpp>
#else
#include <hookfuse/hookfuse.hpp>
#endif

namespace hf = hookfuse;

namespace {

constexpr hf::Index kBatch = 32, kIn = 784;

float pixels[kBatch * kIn];     // [32, 784], zero
std::int32_t classes[kBatch];   // [32], class 0

/// One static batch, fed every step (the input protocol of MonitoredTrainingSession).
struct StaticBatch {
  bool next() { return true; }
  hf::Index batch_size() const { return kBatch; }
  template <class Graph>
  void feed(Graph& graph) {
    graph.template feed<"x">(pixels, kBatch, kIn);
    graph.template feed<"labels">(classes, kBatch, 1);
  }
};

}  // namespace

int main() {
  hf::Placeholder<"x", float, 784> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
  hf::nn::Dense<"dense", float> hidden(784, 256, hf::nn::glorot_uniform{7});
  hf::nn::Dense<"logits", float> output(256, 10, hf::nn::glorot_uniform{8});
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  auto accuracy = hf::named<"accuracy">(hf::accuracy(labels, logits));
  hf::GlobalStep global_step;
  auto train_op = hf::GradientDescentOptimizer(0.1).minimize(loss, global_step);

  hf::MonitoredTrainingSession session(
      train_op, StaticBatch{},
      hf::hooks(hf::StopAtStepHook({.last_step = 1000}),
                hf::StepCounterHook<>({.every_n_steps = 100}), hf::NanTensorHook<"loss">(),
                hf::LoggingTensorHook<"loss", "accuracy">({.every_n_iter = 100})),
      accuracy);
  session.run();
  std::printf("global_step: %lld\n", static_cast<long long>(global_step.value));
  return 0;
}
