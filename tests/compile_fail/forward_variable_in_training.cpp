// expect: reaches a ForwardVariable, which has no gradient matrix
// A ForwardVariable (what an Estimator's EVAL and PREDICT models hold) has no gradient matrix:
// a graph that runs backward over it does not compile, and the message says what to use.
// Control: tests/compile_ok/forward_variable_in_training.cpp (a Variable).
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

int main() {
  hf::ForwardVariable<"w", float, 1, 1> w;
  hf::Placeholder<"x", float, 1> x;
  auto graph = hf::bind(4, hf::reduce_mean(hf::matmul(x, w)));
  graph.backward();
}
