// tests/compile_fail/lr_session.hpp: the linear-regression sessions (training, and evaluation
// for the snippets about it) every compile-fail snippet (and its compile_ok twin) runs its hooks
// in, so each snippet shows only the hook under test.
#pragma once

#include <hookfuse/hookfuse.hpp>

namespace lr_snippet {

using namespace hookfuse;

struct LrInput {
  float x = 1.0f;
  float y = 2.0f;
  bool next() { return true; }
  Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

/// y = W x + b: the tensors "x", "y", "W", "b", "loss" and "global_step".
struct LrModel {
  Placeholder<"x", float, 1> x;
  Placeholder<"y", float, 1> y;
  Variable<"W", float, 1, 1> W;
  Variable<"b", float, 1, 1> b;
  GlobalStep gs;
  auto loss() { return named<"loss">(mean_squared_error(y, matmul(x, W) + b)); }
};

/// Trains the model with `hs`; the session also has the fetch-only tensor `Metric` (the mean
/// of x).
template <fixed_string Metric = "metric", class... Hooks>
void train(Hooks... hs) {
  LrModel m;
  auto train_op = GradientDescentOptimizer(0.01).minimize(m.loss(), m.gs);
  MonitoredTrainingSession session(train_op, LrInput{}, hooks(hs...),
                                   named<Metric>(reduce_mean(m.x)));
  while (!session.should_stop()) session.run();
}

/// Evaluates the model's loss with `hs` in an evaluation session (MonitoredSession: forward
/// only, no before_apply_gradients).
template <class... Hooks>
void evaluate(Hooks... hs) {
  LrModel m;
  MonitoredSession session(m.gs, LrInput{}, hooks(hs...), m.loss());
  while (!session.should_stop()) session.run();
}

}  // namespace lr_snippet
