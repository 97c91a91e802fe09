// examples/linear_regression: fits y = W x + b to four points with SGD and three hooks.
//
// The TensorFlow 1.x program it mirrors:
//   W = tf.Variable(0.); b = tf.Variable(0.)
//   loss = tf.losses.mean_squared_error(y, W * x + b)
//   train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step)
//   with tf.train.MonitoredTrainingSession(hooks=[StopAtStepHook(last_step=1000),
//                                                 NanTensorHook(loss), StepCounterHook()]) as s:
//     while not s.should_stop(): s.run(train_op)
#include <CLI/CLI.hpp>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <hookfuse/hookfuse.hpp>
#include <string>

#include "../cli_checks.hpp"

namespace hf = hookfuse;

// The four (x, y) pairs in order, one per batch, repeated forever (numpy_input_fn with
// batch_size=1, num_epochs=None, shuffle=False). Anything with next(), batch_size() and
// feed(graph) can be a session's input.
struct PointsInput {
  std::array<float, 4> xs{1, 2, 3, 4};
  std::array<float, 4> ys{2, 4, 6, 8};
  std::size_t current = 0;
  std::size_t taken = 0;

  bool next() {
    current = taken++ % xs.size();
    return true;
  }
  hf::Index batch_size() const { return 1; }
  template <class Graph>
  void feed(Graph& graph) {
    graph.template feed<"x">(&xs[current], 1, 1);  // one row of one column
    graph.template feed<"y">(&ys[current], 1, 1);
  }
};

int main(int argc, char** argv) try {
  CLI::App app{"Linear regression y = W x + b with hookfuse"};
  std::int64_t steps = 1000;
  double learning_rate = 0.01;
  app.add_option("--steps", steps, "training steps")
      ->check(example_cli::integer_in(std::int64_t{1}, std::int64_t{1000000000}));
  app.add_option("--learning_rate", learning_rate, "SGD learning rate")
      ->check(example_cli::finite_in(0.0, 10.0));
  if (const auto status = example_cli::parse(app, argc, argv, "linear_regression")) return *status;

  hf::Placeholder<"x", float, 1> x;  // [batch, 1]
  hf::Placeholder<"y", float, 1> y;  // [batch, 1]
  hf::Variable<"W", float, 1, 1> W;  // starts at 0
  hf::Variable<"b", float, 1, 1> b;  // starts at 0
  auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b));

  hf::GlobalStep global_step;
  auto train_op = hf::GradientDescentOptimizer(learning_rate).minimize(loss, global_step);

  hf::MonitoredTrainingSession session(
      train_op, PointsInput{},
      hf::hooks(hf::StopAtStepHook({.last_step = steps}), hf::NanTensorHook<"loss">(),
                hf::StepCounterHook<>({.every_n_steps = 100})));
  while (!session.should_stop()) session.run();
  session.close();

  std::printf("global_step: %lld\n", static_cast<long long>(global_step.value));
  std::printf("W: %.6f\nb: %.6f\n", static_cast<double>(W.value(0, 0)),
              static_cast<double>(b.value(0, 0)));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "linear_regression: %s\n", e.what());
  return 1;
}
