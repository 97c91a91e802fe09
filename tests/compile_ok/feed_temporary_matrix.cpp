// tests/compile_ok/feed_temporary_matrix.cpp: the compiling twin of
// tests/compile_fail/feed_temporary_matrix.cpp: a named matrix, a named Eigen::Ref, a named and
// a temporary Eigen::Map, on the session's feeds and on Graph::feed.
#include <hookfuse/hookfuse.hpp>
#include <vector>

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
  const Rows xs = Rows::Ones(3, 2);
  Eigen::VectorXf ys(3);
  ys << 1.0f, 2.0f, 3.0f;
  session.run(feed<"x">(xs), feed<"y">(ys));
  const Eigen::Ref<const Rows> xr(xs);
  const Eigen::Map<const Rows> xm(xs.data(), 3, 2);
  session.run(feed<"x">(xr), feed<"y">(ys));
  session.run(feed<"x">(xm), feed<"y">(Eigen::Map<const Eigen::VectorXf>(ys.data(), 3)));
  session.graph().feed<"x">(xm);
  session.graph().feed<"y">(Eigen::Map<const Eigen::VectorXf>(ys.data(), 3));
  return 0;
}
