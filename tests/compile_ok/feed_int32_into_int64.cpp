// tests/compile_ok/feed_int32_into_int64.cpp: the compiling twin of
// tests/compile_fail/feed_int32_into_int64.cpp: the data has the placeholder's scalar type.
#include <hookfuse/hookfuse.hpp>
#include <cstdint>
#include <vector>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 2> x;
  Placeholder<"labels", std::int64_t, 1> labels;
  Variable<"w", float, 2, 1> w;
  GlobalStep gs;
  auto loss = named<"loss">(reduce_mean(matmul(x, w)));
  MonitoredTrainingSession session(GradientDescentOptimizer(0.1).minimize(loss, gs),
                                   caller_feeds(4), hooks(), named<"n">(labels));
  std::vector<float> xs(4 * 2, 1.0f);
  std::vector<std::int64_t> ys(4, 1);
  session.run(feed<"x">(xs, 4), feed<"labels">(ys, 4));
  return 0;
}
