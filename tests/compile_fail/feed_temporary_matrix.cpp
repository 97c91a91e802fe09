// expect: use of deleted function .*hookfuse::feed\(Derived&&\) \[with [^;]*Name = (hookfuse::)?fixed_string<2>{"x"}; Derived = Eigen::Matrix<float
// A Feed keeps a pointer to its data: feeding a temporary Eigen matrix would leave it pointing
// into a destroyed buffer, so the overload for temporaries is deleted (an Eigen::Map, which
// only views memory, may be temporary). Control: tests/compile_ok/feed_temporary_matrix.cpp.
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 2> x;
  Placeholder<"y", float, 1> y;
  Variable<"W", float, 2, 1> W;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(y, matmul(x, W)));
  MonitoredTrainingSession session(GradientDescentOptimizer(0.1).minimize(loss, gs),
                                   caller_feeds(4), hooks());
  using Rows = Eigen::Matrix<float, Eigen::Dynamic, 2, Eigen::RowMajor>;
  Eigen::VectorXf ys(3);
  ys << 1.0f, 2.0f, 3.0f;
  session.run(feed<"x">(Rows(Rows::Ones(3, 2))), feed<"y">(ys));
  return 0;
}
