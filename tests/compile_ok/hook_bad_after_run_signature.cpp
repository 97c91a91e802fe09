// The fixed counterpart of tests/compile_fail/hook_bad_after_run_signature.cpp: must compile.
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

struct BadAfterRunHook {
  void after_run(SessionRunContext&, const SessionRunValues<>&) {}
};

int main() {
  Placeholder<"x", float, 1> x;
  Placeholder<"y", float, 1> y;
  Variable<"W", float, 1, 1> W;
  Variable<"b", float, 1, 1> b;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(y, matmul(x, W) + b));
  auto train_op = GradientDescentOptimizer(0.01).minimize(loss, gs);
  MonitoredTrainingSession session(train_op, LrInput{}, hooks(BadAfterRunHook{}));
  while (!session.should_stop()) session.run();
}
