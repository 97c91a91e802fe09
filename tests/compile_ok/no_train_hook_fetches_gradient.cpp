// The fixed counterpart of tests/compile_fail/no_train_hook_fetches_gradient.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

struct GradientWatcher {
  SessionRunArgs<"gradients/W"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"gradients/W">&) {}
};

int main() {
  lr_snippet::LrModel m;
  MonitoredTrainingSession session(GradientDescentOptimizer(0.01).minimize(m.loss(), m.gs),
                                   lr_snippet::LrInput{}, hooks(GradientWatcher{}));
  return session.run() ? 0 : 1;
}
