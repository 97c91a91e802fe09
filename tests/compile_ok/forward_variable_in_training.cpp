// The compiling twin of tests/compile_fail/forward_variable_in_training.cpp: a Variable.
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

int main() {
  hf::Variable<"w", float, 1, 1> w;
  hf::Placeholder<"x", float, 1> x;
  auto graph = hf::bind(4, hf::reduce_mean(hf::matmul(x, w)));
  graph.backward();
}
