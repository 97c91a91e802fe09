// bench/compile/layers_n.cpp: a translation unit with a MonitoredTrainingSession (the example's
// four hooks) over a model of HOOKFUSE_BENCH_LAYERS dense layers (default 8, at least 2): 16
// inputs -> (HOOKFUSE_BENCH_LAYERS - 1) ReLU layers of 16 units -> 10 logits, sparse softmax
// cross-entropy, SGD. bench/compile_time.sh measures its compile time for 2, 8, 16 and 32 layers.
// Layer I is named "dense_<I>" (two digits). Not a CMake target; it links and runs:
//   c++ -std=c++20 -O3 -DNDEBUG -Iinclude -isystem /usr/include/eigen3
//       -DHOOKFUSE_BENCH_LAYERS=32 bench/compile/layers_n.cpp -o layers_32 && ./layers_32
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <hookfuse/hookfuse.hpp>
#include <utility>

#ifndef HOOKFUSE_BENCH_LAYERS
#define HOOKFUSE_BENCH_LAYERS 8
#endif

namespace hf = hookfuse;

namespace {

constexpr std::size_t kLayers = HOOKFUSE_BENCH_LAYERS;
static_assert(kLayers >= 2 && kLayers <= 99, "HOOKFUSE_BENCH_LAYERS: 2..99");
constexpr hf::Index kBatch = 32, kIn = 16, kWidth = 16, kOut = 10;

float pixels[kBatch * kIn];
std::int32_t classes[kBatch];

struct StaticBatch {
  bool next() { return true; }
  hf::Index batch_size() const { return kBatch; }
  template <class Graph>
  void feed(Graph& graph) {
    graph.template feed<"x">(pixels, kBatch, kIn);
    graph.template feed<"labels">(classes, kBatch, 1);
  }
};

/// "dense_07" for I = 7.
template <std::size_t I>
constexpr hf::fixed_string<9> layer_name = [] {
  hf::fixed_string<9> name("dense_00");
  name.data[6] = static_cast<char>('0' + I / 10);
  name.data[7] = static_cast<char>('0' + I % 10);
  return name;
}();

/// Layers I..kLayers-1; apply() stacks them on an input expression, ReLU on all but the last.
template <std::size_t I>
struct Stack {
  hf::nn::Dense<layer_name<I>, float> layer{I == 0 ? kIn : kWidth,
                                            I + 1 == kLayers ? kOut : kWidth};
  Stack<I + 1> rest;
  template <class X>
  auto apply(X&& x) {
    return rest.apply(hf::relu(layer(std::forward<X>(x))));
  }
};
template <>
struct Stack<kLayers - 1> {
  hf::nn::Dense<layer_name<kLayers - 1>, float> layer{kWidth, kOut};
  template <class X>
  auto apply(X&& x) {
    return layer(std::forward<X>(x));
  }
};

}  // namespace

int main() {
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> labels;
  static Stack<0> layers;
  auto logits = hf::named<"logits">(layers.apply(x));
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
  std::printf("layers: %zu, global_step: %lld\n", kLayers,
              static_cast<long long>(global_step.value));
  return 0;
}
