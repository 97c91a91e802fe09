// The fixed counterpart of tests/compile_fail/gradient_variables_unknown.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

struct ClipsV {
  using gradient_variables = GradientVariables<"W">;
  void before_apply_gradients(auto&) {}
};

int main() { lr_snippet::train(ClipsV{}); }
