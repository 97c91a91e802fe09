// tests/compile_fail/lr_session.hpp: the linear-regression session every compile-fail snippet
// (and its compile_ok twin) runs its hooks in, so each snippet shows only the hook under test.
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

/// Trains y = W x + b with `hs`. The model's tensors: "x", "y", "W", "b", "loss", "global_step"
/// and the fetch-only tensor `Metric` (the mean of x).
template <fixed_string Metric = "metric", class... Hooks>
void train(Hooks... hs) {
  Placeholder<"x", float, 1> x;
  Placeholder<"y", float, 1> y;
  Variable<"W", float, 1, 1> W;
  Variable<"b", float, 1, 1> b;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(y, matmul(x, W) + b));
  auto train_op = GradientDescentOptimizer(0.01).minimize(loss, gs);
  MonitoredTrainingSession session(train_op, LrInput{}, hooks(hs...),
                                   named<Metric>(reduce_mean(x)));
  while (!session.should_stop()) session.run();
}

}  // namespace lr_snippet
