// The fixed counterpart of tests/compile_fail/hook_bad_after_run_signature.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

struct BadAfterRunHook {
  void after_run(SessionRunContext&, const SessionRunValues<>&) {}
};

int main() { lr_snippet::train(BadAfterRunHook{}); }
