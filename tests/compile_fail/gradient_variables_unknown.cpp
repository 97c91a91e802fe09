// expect: (check_gradient_variable(\(\) \[with Hook = |<)ClipsV[,;].*hookfuse: a gradient hook's gradient_variables names a tensor that is not a Variable|hookfuse: a gradient hook's gradient_variables names a tensor that is not a Variable.*check_gradient_variable(\(\) \[with Hook = |<)ClipsV[,;])
// A gradient hook declaring that it touches "V", which the model does not have (its variables
// are "W" and "b"): an error naming the hook and the name, not a hook that silently sees no
// gradient. Control: tests/compile_ok/gradient_variables_unknown.cpp (the same hook on "W").
#include "lr_session.hpp"

using namespace hookfuse;

struct ClipsV {
  using gradient_variables = GradientVariables<"V">;
  void before_apply_gradients(auto&) {}
};

int main() { lr_snippet::train(ClipsV{}); }
