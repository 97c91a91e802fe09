// expect: (check_fetch(\(\) \[with Hook = hookfuse::BasicLoggingTensorHook<hookfuse::LoggingPolicies<>, hookfuse::fixed_string<4>{"acc"}>; [^;]*"acc"|<hookfuse::BasicLoggingTensorHook<hookfuse::LoggingPolicies<>, {{97, 99, 99, 0}}>, {{97, 99, 99, 0}}).*hookfuse: a hook fetches a tensor name that the model does not have|hookfuse: a hook fetches a tensor name that the model does not have.*check_fetch(\(\) \[with Hook = hookfuse::BasicLoggingTensorHook<hookfuse::LoggingPolicies<>, hookfuse::fixed_string<4>{"acc"}>; [^;]*"acc"|<hookfuse::BasicLoggingTensorHook<hookfuse::LoggingPolicies<>, {{97, 99, 99, 0}}>, {{97, 99, 99, 0}}))
// LoggingTensorHook<"acc"> on a model whose only named tensor is "loss": the session names the hook
// type and "acc" with hookfuse's message. Control: tests/compile_ok/logging_hook_unknown_tensor.cpp
// (the same snippet, fixed).
#include <hookfuse/hookfuse.hpp>

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

int main() {
  Placeholder<"x", float, 1> x;
  Placeholder<"y", float, 1> y;
  Variable<"W", float, 1, 1> W;
  Variable<"b", float, 1, 1> b;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(y, matmul(x, W) + b));
  auto train_op = GradientDescentOptimizer(0.01).minimize(loss, gs);
  MonitoredTrainingSession session(train_op, LrInput{},
                                   hooks(LoggingTensorHook<"acc">({.every_n_iter = 10})));
  while (!session.should_stop()) session.run();
}
