// tests/compile_ok/graph_feed_rows_only_into_wide_placeholder.cpp: the compiling twin of
// tests/compile_fail/graph_feed_rows_only_into_wide_placeholder.cpp: the columns are given.
#include <hookfuse/hookfuse.hpp>
#include <vector>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 784> x;
  Variable<"W", float, 784, 1> W;
  auto g = bind(4, named<"loss">(reduce_mean(matmul(x, W))));
  std::vector<float> data(4 * 784, 1.0f);
  g.feed<"x">(data.data(), 4, 784);
  return static_cast<int>(g.forward());
}
