// tests/compile_ok/feed_float_into_double.cpp: the compiling twin of
// tests/compile_fail/feed_float_into_double.cpp: the data has the placeholder's scalar type.
#include <hookfuse/hookfuse.hpp>
#include <vector>

using namespace hookfuse;

int main() {
  Placeholder<"x", double, 3> x;
  Variable<"w", double, 3, 1> w;
  auto g = bind(4, named<"loss">(reduce_mean(matmul(x, w))));
  std::vector<double> data(4 * 3, 1.0);
  g.feed<"x">(data.data(), 4, 3);
  return static_cast<int>(g.forward());
}
