// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"session\.run<names\.\.\.>\(\) fetches `lossy`, which is not a tensor of the model; did you mean `loss`\? Tensors of the model: x, W, b, y, loss, global_step\.|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_run_fetch<)
// The caller fetches a name the model does not have (as sess.run(["lossy"]) would raise): an
// error naming the name, suggesting "loss" and listing the model's tensors.
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
