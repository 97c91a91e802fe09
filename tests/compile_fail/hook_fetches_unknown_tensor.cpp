// expect: (check_fetch(\(\) \[with Hook = TypoFetchHook; [^;]*"lossx"|<TypoFetchHook, {{108, 111, 115, 115, 120, 0}}).*hookfuse: a hook fetches a tensor name that the model does not have|hookfuse: a hook fetches a tensor name that the model does not have.*check_fetch(\(\) \[with Hook = TypoFetchHook; [^;]*"lossx"|<TypoFetchHook, {{108, 111, 115, 115, 120, 0}}))
// A hook whose before_run requests "lossx" from a model that has "loss": the session names the hook
// and the tensor (check_fetch<TypoFetchHook, "lossx">) with hookfuse's message. Control:
// tests/compile_ok/hook_fetches_unknown_tensor.cpp (the same snippet, fixed).
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

// Requests "lossx"; the model's tensor is "loss".
struct TypoFetchHook {
  SessionRunArgs<"lossx"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"lossx">&) {}
};

int main() {
  Placeholder<"x", float, 1> x;
  Placeholder<"y", float, 1> y;
  Variable<"W", float, 1, 1> W;
  Variable<"b", float, 1, 1> b;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(y, matmul(x, W) + b));
  auto train_op = GradientDescentOptimizer(0.01).minimize(loss, gs);
  MonitoredTrainingSession session(train_op, LrInput{}, hooks(TypoFetchHook{}));
  while (!session.should_stop()) session.run();
}
