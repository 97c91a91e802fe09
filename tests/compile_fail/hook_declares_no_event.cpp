// expect: (check_hook(\(\) \[with Hook = |<)MisspeltHook[,;].*hookfuse: this hook declares none of the protocol methods|hookfuse: this hook declares none of the protocol methods.*check_hook(\(\) \[with Hook = |<)MisspeltHook[,;])
// A class whose every protocol name is misspelt would receive no event: an error naming the
// class (check_hook<MisspeltHook>), not a hook that silently does nothing.
// Control: tests/compile_ok/hook_declares_no_event.cpp (the names spelt right).
#include "lr_session.hpp"

using namespace hookfuse;

struct MisspeltHook {
  int runs = 0;
  void begn() {}
  SessionRunArgs<> befor_run(SessionRunContext&) { return {}; }
  void afterrun(SessionRunContext&, const SessionRunValues<>&) { ++runs; }
  template <class S>
  void End(S&) {}
};

int main() { lr_snippet::train(MisspeltHook{}); }
