// tests/compile_fail/eval_session.hpp: the linear-regression model evaluated in a MonitoredSession
// (session/evaluation_session.hpp), for the compile-fail snippets about evaluation sessions and
// their compile_ok twins.
#pragma once

#include <hookfuse/hookfuse.hpp>

namespace eval_snippet {

using namespace hookfuse;

struct LrInput {
  float x = 1.0f;
  float y = 2.0f;
  int left = 3;
  bool next() { return left-- > 0; }
  Index batch_size() const { return 1; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(&x, 1);
    g.template feed<"y">(&y, 1);
  }
};

/// Evaluates y = W x + b with `hs`: the tensors "x", "y", "W", "b", "loss", "global_step".
template <class... Hooks>
void evaluate(Hooks... hs) {
  Placeholder<"x", float, 1> x;
  Placeholder<"y", float, 1> y;
  Variable<"W", float, 1, 1> W;
  Variable<"b", float, 1, 1> b;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(y, matmul(x, W) + b));
  MonitoredSession session(gs, LrInput{}, hooks(hs...), loss);
  while (!session.should_stop()) session.run();
}

}  // namespace eval_snippet
