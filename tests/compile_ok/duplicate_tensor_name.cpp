// The fixed counterpart of tests/compile_fail/duplicate_tensor_name.cpp: must compile.
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 2> x;
  Variable<"w", float, 2, 1> w;
  auto loss = named<"loss">(reduce_sum(named<"h">(matmul(x, w))));
  auto metric = named<"metric">(reduce_mean(named<"relu_h">(relu(matmul(x, w)))));
  auto graph = bind(4, loss, metric);
  (void)graph;
}
