// expect: hookfuse: this variable's gradient is never stored \(its update is fused into the backward pass\)
// A hook reading "gradients/W" from the session in end() while no hook requests that gradient in
// before_run: W's update is fused, its gradient never stored, so the fetch does not compile.
// Control: tests/compile_ok/end_fetches_fused_gradient.cpp (the hook also requests it per run).
#include "lr_session.hpp"

using namespace hookfuse;

struct LastGradientHook {
  double last = 0;
  template <class Session>
  void end(Session& session) {
    last = fetch<"gradients/W">(session).item();
  }
};

int main() { lr_snippet::train(LastGradientHook{}); }
