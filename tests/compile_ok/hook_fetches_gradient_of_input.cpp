// The fixed counterpart of tests/compile_fail/hook_fetches_gradient_of_input.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

// Requests the gradient with respect to the variable "W", which the loss has.
struct InputGradientHook {
  SessionRunArgs<"gradients/W"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"gradients/W">&) {}
};

int main() { lr_snippet::train(InputGradientHook{}); }
