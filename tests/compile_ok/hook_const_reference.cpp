// tests/compile_ok/hook_const_reference.cpp: the compiling twin of
// tests/compile_fail/hook_const_reference.cpp: the hook passed as std::ref(h).
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

struct CountingHook {
  int runs = 0;
  void after_run(SessionRunContext&, const SessionRunValues<>&) { ++runs; }
};

int main() {
  CountingHook h;
  lr_snippet::train(std::ref(h));
  return h.runs;
}
