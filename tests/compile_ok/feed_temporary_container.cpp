// tests/compile_ok/feed_temporary_container.cpp: the compiling twin of
// tests/compile_fail/feed_temporary_container.cpp: named containers (const or not), and a
// temporary std::span, which only views a named vector.
#include <hookfuse/hookfuse.hpp>
#include <span>
#include <vector>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 1> x;
  Placeholder<"y", float, 1> y;
  Variable<"W", float, 1, 1> W;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(y, matmul(x, W)));
  MonitoredTrainingSession session(GradientDescentOptimizer(0.1).minimize(loss, gs),
                                   caller_feeds(4), hooks());
  std::vector<float> xs{1.0f, 2.0f};
  const std::vector<float> ys{2.0f, 4.0f};
  session.run(feed<"x">(xs, 2), feed<"y">(ys, 2));
  session.run(feed<"x">(std::span<const float>(xs), 2), feed<"y">(ys, 2));
  return 0;
}
