// The fixed counterpart of tests/compile_fail/hook_bad_begin_signature.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

struct BadBeginHook {
  void begin() {}
};

int main() { lr_snippet::train(BadBeginHook{}); }
