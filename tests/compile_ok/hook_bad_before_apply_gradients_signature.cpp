// The fixed counterpart of tests/compile_fail/hook_bad_before_apply_gradients_signature.cpp:
// must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

struct BadGradientHook {
  template <class Graph>
  void before_apply_gradients(GradientContext<Graph>&) {}
};

int main() { lr_snippet::train(BadGradientHook{}); }
