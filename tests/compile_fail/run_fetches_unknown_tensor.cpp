// expect: check_run_fetch\(\) \[with .*Name = hookfuse::fixed_string<6>[{]"lossy"[}].*hookfuse: session.run<names...>\(\) fetches a tensor name that the model does not have
// The caller fetches a name the model does not have (as sess.run(["lossy"]) would raise): an
// error naming the name (detail::check_run_fetch).
// Control: tests/compile_ok/run_fetches_unknown_tensor.cpp (the name spelt right).
#include "lr_session.hpp"

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
  auto values = session.run<"lossy">();
  return values ? 0 : 1;
}
