// expect: check_rows_only_feed\(\) \[with [^;]*PlaceholderName = hookfuse::fixed_string<2>{"x"}; int PlaceholderCols = 784\].*hookfuse: feed<"name">\(data, rows\) gives no column count
// Graph::feed<"x">(data, rows) into Placeholder<"x", float, 784>: the width cannot be checked,
// so it does not compile (see feed_rows_only_into_wide_placeholder.cpp for the session's feed).
// Control: tests/compile_ok/graph_feed_rows_only_into_wide_placeholder.cpp.
#include <hookfuse/hookfuse.hpp>
#include <vector>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 784> x;
  Variable<"W", float, 784, 1> W;
  auto g = bind(4, named<"loss">(reduce_mean(matmul(x, W))));
  std::vector<float> data(4 * 400, 1.0f);
  g.feed<"x">(data.data(), 4);
  return static_cast<int>(g.forward());
}
