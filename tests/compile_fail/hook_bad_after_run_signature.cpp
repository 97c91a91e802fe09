// expect: (check_hook(\(\) \[with Hook = |<)BadAfterRunHook[,;].*hookfuse: this hook declares after_run, but it cannot be called as after_run\(SessionRunContext&, const SessionRunValues<names...>&\)|hookfuse: this hook declares after_run, but it cannot be called as after_run\(SessionRunContext&, const SessionRunValues<names...>&\).*check_hook(\(\) \[with Hook = |<)BadAfterRunHook[,;])
// A hook declaring after_run(int): the protocol would call after_run(context, values), so this is
// an error naming the hook (check_hook<BadAfterRunHook>) and after_run, not a hook that silently
// never sees the event. Control: tests/compile_ok/hook_bad_after_run_signature.cpp (the same
// snippet, fixed).
#include "lr_session.hpp"

using namespace hookfuse;

struct BadAfterRunHook {
  void after_run(int) {}
};

int main() { lr_snippet::train(BadAfterRunHook{}); }
