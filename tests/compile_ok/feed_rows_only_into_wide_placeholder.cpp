// tests/compile_ok/feed_rows_only_into_wide_placeholder.cpp: the compiling twin of
// tests/compile_fail/feed_rows_only_into_wide_placeholder.cpp: the 784-column placeholder gets
// its columns (a ShapeError at run time for this 400-wide buffer); the one-column labels keep
// the pointer-and-rows form, on the session and on the graph.
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
  session.run(feed<"x">(xs.data(), 4, 400), feed<"labels">(ys.data(), 4));
  session.graph().feed<"labels">(ys.data(), 4);
  return 0;
}
