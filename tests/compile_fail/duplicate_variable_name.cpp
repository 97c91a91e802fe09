// expect: check_unique_name\(\) \[with .*Name = hookfuse::fixed_string<2>[{]"w"[}].*hookfuse: two different tensors in one model have the same name
// Two Variables named "w" of different shapes in one model: an error naming the name, like
// TensorFlow's "Variable w already exists, disallowed." (detail::check_unique_name).
// Control: tests/compile_ok/duplicate_variable_name.cpp (the second variable renamed).
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 2> x;
  Variable<"w", float, 2, 3> w1;
  Variable<"w", float, 3, 3> w2;
  auto loss = named<"loss">(reduce_sum(matmul(matmul(x, w1), w2)));
  auto graph = bind(4, loss);
  (void)graph;
}
