// expect: (check_hook(\(\) \[with Hook = |<)BadBeginHook[,;].*hookfuse: this hook declares begin, but it cannot be called as begin\(\)|hookfuse: this hook declares begin, but it cannot be called as begin\(\).*check_hook(\(\) \[with Hook = |<)BadBeginHook[,;])
// A hook declaring begin(int): an error naming the hook (check_hook<BadBeginHook>) and begin.
// Control: tests/compile_ok/hook_bad_begin_signature.cpp (the same snippet, fixed).
#include "lr_session.hpp"

using namespace hookfuse;

struct BadBeginHook {
  void begin(int) {}
};

int main() { lr_snippet::train(BadBeginHook{}); }
