// expect: (check_hook(\(\) \[with Hook = |<)BadGradientHook[,;].*hookfuse: this hook declares before_apply_gradients, but it cannot be called as before_apply_gradients\(GradientContext<...>&\)|hookfuse: this hook declares before_apply_gradients, but it cannot be called as before_apply_gradients\(GradientContext<...>&\).*check_hook(\(\) \[with Hook = |<)BadGradientHook[,;])
// A hook declaring before_apply_gradients(int): the session would call it with its
// GradientContext, so this is an error naming the hook (check_hook<BadGradientHook>) and the
// event, not a hook that silently never sees the gradients. Control:
// tests/compile_ok/hook_bad_before_apply_gradients_signature.cpp (the same snippet, fixed).
#include "lr_session.hpp"

using namespace hookfuse;

struct BadGradientHook {
  void before_apply_gradients(int) {}
};

int main() { lr_snippet::train(BadGradientHook{}); }
