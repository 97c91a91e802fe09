// expect: check_no_train_fetch\(\) \[with Hook = GradientWatcher; .*Name = hookfuse::fixed_string<12>[{]"gradients/W"[}].*hookfuse: session.run\(no_train\) computes no gradient
// A hook that may request a gradient ("gradients/W") in a session whose caller runs
// session.run(no_train), which has no backward pass: an error naming the hook and the name
// (detail::check_no_train_fetch). Control: tests/compile_ok/no_train_hook_fetches_gradient.cpp
// (the same session trains).
#include "lr_session.hpp"

using namespace hookfuse;

struct GradientWatcher {
  SessionRunArgs<"gradients/W"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"gradients/W">&) {}
};

int main() {
  lr_snippet::LrModel m;
  MonitoredTrainingSession session(GradientDescentOptimizer(0.01).minimize(m.loss(), m.gs),
                                   lr_snippet::LrInput{}, hooks(GradientWatcher{}));
  return session.run(no_train) ? 0 : 1;
}
