// expect: (check_fetch(\(\) \[with Hook = InputGradientHook; [^;]*"gradients/x"|<InputGradientHook, {{103, 114, 97, 100, 105, 101, 110, 116, 115, 47, 120, 0}}).*hookfuse: a hook fetches a tensor name that the model does not have, or 'gradients/<name>'|hookfuse: a hook fetches a tensor name that the model does not have, or 'gradients/<name>'.*check_fetch(\(\) \[with Hook = InputGradientHook; [^;]*"gradients/x"|<InputGradientHook, {{103, 114, 97, 100, 105, 101, 110, 116, 115, 47, 120, 0}}))
// A hook requesting "gradients/x", the gradient with respect to a placeholder: the loss has no
// gradient there (inputs do not require one), so the session names the hook and the fetch.
// Control: tests/compile_ok/hook_fetches_gradient_of_input.cpp ("gradients/W").
#include "lr_session.hpp"

using namespace hookfuse;

struct InputGradientHook {
  SessionRunArgs<"gradients/x"> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<"gradients/x">&) {}
};

int main() { lr_snippet::train(InputGradientHook{}); }
