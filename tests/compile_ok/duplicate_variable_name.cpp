// The fixed counterpart of tests/compile_fail/duplicate_variable_name.cpp: must compile.
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 2> x;
  Variable<"w", float, 2, 3> w1;
  Variable<"w2", float, 3, 3> w2;
  auto loss = named<"loss">(reduce_sum(matmul(matmul(x, w1), w2)));
  auto graph = bind(4, loss);
  (void)graph;
}
