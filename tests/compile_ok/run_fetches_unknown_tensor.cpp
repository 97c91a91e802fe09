// The fixed counterpart of tests/compile_fail/run_fetches_unknown_tensor.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 1> x;
  Placeholder<"y", float, 1> y;
  Variable<"W", float, 1, 1> W;
  Variable<"b", float, 1, 1> b;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(y, matmul(x, W) + b));
  MonitoredTrainingSession session(GradientDescentOptimizer(0.01).minimize(loss, gs),
                                   lr_snippet::LrInput{}, hooks());
  auto values = session.run<"loss">();
  return values ? 0 : 1;
}
