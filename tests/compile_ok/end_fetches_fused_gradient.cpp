// The fixed counterpart of tests/compile_fail/end_fetches_fused_gradient.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

// Requesting the gradient in before_run keeps it stored, so end() may read it too.
struct LastGradientHook {
  double last = 0;
  SessionRunArgs<"gradients/W"> before_run(SessionRunContext&) { return {}; }
  template <class Session>
  void end(Session& session) {
    last = fetch<"gradients/W">(session).item();
  }
};

int main() { lr_snippet::train(LastGradientHook{}); }
