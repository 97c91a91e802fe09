// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"hook `InputGradientHook` fetches `gradients/x`, but the loss has no gradient for `x` |implicit instantiation of undefined template 'hookfuse::compile_error<.*check_fetch<InputGradientHook,)
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
