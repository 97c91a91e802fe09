// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"feed of placeholder `labels`: the data is int32 \(int\), the placeholder is float32 \(float\); convert the data|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_feed_scalar<.*float, int>)
// int32 labels fed by the caller of a session to a float32 placeholder (as TensorFlow's
// feed_dict would cast them): a compile error whose first line names the placeholder "labels"
// and both dtypes. Control: tests/compile_ok/feed_int32_labels_into_float.cpp (float labels).
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
  std::vector<std::int32_t> ys(4, 1);
  session.run(feed<"x">(xs, 4), feed<"labels">(ys, 4));
  return 0;
}
