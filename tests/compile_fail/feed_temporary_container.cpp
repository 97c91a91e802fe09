// expect: use of deleted function .*hookfuse::feed\(C&&, Eigen::Index\) \[with [^;]*Name = (hookfuse::)?fixed_string<2>{"x"}; C = std::vector<float>
// A Feed keeps a pointer to its data: feeding a temporary std::vector would leave it pointing
// into a destroyed buffer, so the overload for temporaries is deleted. Control:
// tests/compile_ok/feed_temporary_container.cpp (named containers, a temporary std::span).
#include <hookfuse/hookfuse.hpp>
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
  const std::vector<float> ys{2.0f, 4.0f};
  session.run(feed<"x">(std::vector<float>{1.0f, 2.0f}, 2), feed<"y">(ys, 2));
  return 0;
}
