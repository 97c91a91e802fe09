// tests/compile_ok/graph_compute_misspelt_name.cpp: the compiling twin of
// tests/compile_fail/graph_compute_misspelt_name.cpp: the name spelt right.
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 3> x;
  Variable<"dense/kernel", float, 3, 1> w;
  auto g = bind(4, named<"logits">(matmul(x, w)), named<"loss">(reduce_mean(matmul(x, w))));
  float data[12] = {};
  g.feed<"x">(data, 4, 3);
  return static_cast<int>(g.compute<"logits">()(0, 0));
}
