// tests/compile_ok/multiply_shapes_differ.cpp: the compiling twin of
// tests/compile_fail/multiply_shapes_differ.cpp: the factor is a number (`scale`).
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 3> x;
  const float s = 0.5f;
  auto g = bind(4, named<"loss">(reduce_mean(x * s)));
  (void)g;
  return 0;
}
