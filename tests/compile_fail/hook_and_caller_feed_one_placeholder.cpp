// expect: check_caller_feed_not_hooked\(\) \[with [^]]*Name = hookfuse::fixed_string<2>[{]"x"[}].*hookfuse: session.run\(feed<...>\(...\)\) feeds a placeholder that a hook's before_run also feeds
// The caller's run(feed<"x">(...)) and a FeedFnHook both feed placeholder "x": TensorFlow raises
// "Same tensor is fed by a SessionRunHook and user."; here a compile error naming the
// placeholder (detail::check_caller_feed_not_hooked<"x", true>). Control:
// tests/compile_ok/hook_and_caller_feed_one_placeholder.cpp (the caller feeds only "y").
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
  float xs = 1.0f, ys = 2.0f;
  session.run(feed<"x">(&xs, 1), feed<"y">(&ys, 1));
}
