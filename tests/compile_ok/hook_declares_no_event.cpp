// The fixed counterpart of tests/compile_fail/hook_declares_no_event.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

struct MisspeltHook {
  int runs = 0;
  void begin() {}
  SessionRunArgs<> before_run(SessionRunContext&) { return {}; }
  void after_run(SessionRunContext&, const SessionRunValues<>&) { ++runs; }
  template <class S>
  void end(S&) {}
};

int main() { lr_snippet::train(MisspeltHook{}); }
