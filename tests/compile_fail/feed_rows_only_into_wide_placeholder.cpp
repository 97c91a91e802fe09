// expect: check_rows_only_feed\(\) \[with [^;]*PlaceholderName = hookfuse::fixed_string<2>{"x"}; int PlaceholderCols = 784\].*hookfuse: feed<"name">\(data, rows\) gives no column count
// A pointer and a row count, with no column count, fed to Placeholder<"x", float, 784> by the
// caller of a session (session.run(feed<"x">(data, rows))): the placeholder's width would be
// trusted and a short buffer (here 4 x 400 values) read past its end. A compile error naming
// the placeholder, its 784 columns and what to write instead. Control:
// tests/compile_ok/feed_rows_only_into_wide_placeholder.cpp (the columns given).
#include <hookfuse/hookfuse.hpp>
#include <cstdint>
#include <vector>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 784> x;
  Placeholder<"labels", std::int32_t, 1> labels;
  Variable<"W", float, 784, 10> W;
  GlobalStep gs;
  auto loss = named<"loss">(sparse_softmax_cross_entropy(labels, matmul(x, W)));
  MonitoredTrainingSession session(GradientDescentOptimizer(0.1).minimize(loss, gs),
                                   caller_feeds(4), hooks());
  std::vector<float> xs(4 * 400, 0.5f);
  std::vector<std::int32_t> ys(4, 1);
  session.run(feed<"x">(xs.data(), 4), feed<"labels">(ys.data(), 4));
  return 0;
}
