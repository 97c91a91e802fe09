// The fixed counterpart of tests/compile_fail/hook_and_caller_feed_one_placeholder.cpp: must
// compile (the hook feeds "x", the caller only "y").
#include <hookfuse/hookfuse.hpp>

using namespace hookfuse;

struct FeedX {
  float x = 1.0f;
  auto operator()() { return feed<"x">(&x, 1); }
};

int main() {
  Placeholder<"x", float, 1> x;
  Placeholder<"y", float, 1> y;
  Variable<"W", float, 1, 1> W;
  GlobalStep gs;
  auto loss = named<"loss">(mean_squared_error(y, matmul(x, W)));
  MonitoredTrainingSession session(GradientDescentOptimizer(0.01).minimize(loss, gs),
                                   caller_feeds(1), hooks(FeedFnHook(FeedX{})));
  float ys = 2.0f;
  session.run(feed<"y">(&ys, 1));
}
