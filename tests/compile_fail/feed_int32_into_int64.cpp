// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"feed of placeholder `labels`: the data is int32 \(int\), the placeholder is int64 \((long int|long long int)\); convert the data|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_feed_scalar<.*long, int>)
// int32 labels fed to an int64 placeholder, here by the caller of a session
// (session.run(feed<"labels">(...))): a compile error naming the placeholder "labels", its
// scalar (int64) and the data's (int32) in its first line. Control:
// tests/compile_ok/feed_int32_into_int64.cpp (the labels are int64).
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
  std::vector<std::int32_t> ys(4, 1);
  session.run(feed<"x">(xs, 4), feed<"labels">(ys, 4));
  return 0;
}
