// expect: check_unique_name\(\) \[with .*Name = hookfuse::fixed_string<2>[{]"h"[}].*hookfuse: two different tensors in one model have the same name
// Two named expressions "h" of different types in one model (x W and relu(x W)): an error
// naming the name (detail::check_unique_name).
// Control: tests/compile_ok/duplicate_tensor_name.cpp (the second expression renamed).
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 2> x;
  Variable<"w", float, 2, 1> w;
  auto loss = named<"loss">(reduce_sum(named<"h">(matmul(x, w))));
  auto metric = named<"metric">(reduce_mean(named<"h">(relu(matmul(x, w)))));
  auto graph = bind(4, loss, metric);
  (void)graph;
}
