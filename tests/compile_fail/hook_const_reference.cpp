// expect: check_not_cref\(\) \[with Hook = std::reference_wrapper<const CountingHook>\].*hookfuse: hooks\(std::cref\(h\)\)
// hooks(std::cref(h)): the session calls the hook's events, which change it (here a counter),
// so a const reference is a compile error naming the hook and saying what to pass instead,
// not a raw error from inside the session. Control: tests/compile_ok/hook_const_reference.cpp
// (std::ref(h)).
#include "lr_session.hpp"

using namespace hookfuse;

struct CountingHook {
  int runs = 0;
  void after_run(SessionRunContext&, const SessionRunValues<>&) { ++runs; }
};

int main() {
  CountingHook h;
  lr_snippet::train(std::cref(h));
  return h.runs;
}
