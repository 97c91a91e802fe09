// expect: ((SessionRunValues<Names>::get\(\) const \[with [^;]*Name = hookfuse::fixed_string<9>{"accuracy"};|SessionRunValues<{{108, 111, 115, 115, 0}}>::get<{{97, 99, 99, 117, 114, 97, 99, 121, 0}}>).*hookfuse: after_run reads a tensor that this hook's before_run did not request|hookfuse: after_run reads a tensor that this hook's before_run did not request.*(SessionRunValues<Names>::get\(\) const \[with [^;]*Name = hookfuse::fixed_string<9>{"accuracy"};|SessionRunValues<{{108, 111, 115, 115, 0}}>::get<{{97, 99, 99, 117, 114, 97, 99, 121, 0}}>))
// after_run reads values.get<"accuracy">() although before_run requested only "loss" (the model
// does have "accuracy"): an error naming "accuracy" with hookfuse's message. Control:
// tests/compile_ok/hook_reads_unrequested_tensor.cpp (the same snippet, fixed).
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

// Requests "loss" but reads "accuracy" (which the model has).
struct UnrequestedReadHook {
  SessionRunArgs<"loss"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"loss">& values) {
    (void)values.get<"accuracy">();
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
  MonitoredTrainingSession session(train_op, LrInput{}, hooks(UnrequestedReadHook{}),
                                   named<"accuracy">(reduce_mean(x)));
  while (!session.should_stop()) session.run();
}
