// tests/compile_ok/feed_int32_labels_into_float.cpp: the compiling twin of
// tests/compile_fail/feed_int32_labels_into_float.cpp: the labels are float.
#include <hookfuse/hookfuse.hpp>
#include <cstdint>
#include <vector>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 2> x;
  Placeholder<"labels", float, 1> labels;
  Variable<"w", float, 2, 1> w;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(labels, matmul(x, w)));
  MonitoredTrainingSession session(GradientDescentOptimizer(0.1).minimize(loss, gs),
                                   caller_feeds(4), hooks());
  std::vector<float> xs(4 * 2, 1.0f);
  std::vector<float> ys(4, 1);
  session.run(feed<"x">(xs, 4), feed<"labels">(ys, 4));
  return 0;
}
