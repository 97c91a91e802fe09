// expect: check_hook_feed_once\(\) \[with [^]]*Name = hookfuse::fixed_string<2>[{]"x"[}].*hookfuse: two hooks feed the same placeholder in one run
// Two FeedFnHooks whose feed_fns both feed placeholder "x": TensorFlow raises "Same tensor is fed
// by two hooks." at run time; the names are static here, so the session's constructor fails to
// compile naming the placeholder (detail::check_hook_feed_once<"x", 2>). Control:
// tests/compile_ok/two_hooks_feed_one_placeholder.cpp (the second hook feeds "y" instead).
#include "lr_session.hpp"

using namespace hookfuse;

struct FeedX {
  float x = 1.0f;
  auto operator()() { return feed<"x">(&x, 1); }
};
struct FeedXAgain {
  float x = 2.0f;
  auto operator()() { return feed<"x">(&x, 1); }
};

int main() { lr_snippet::train(FeedFnHook(FeedX{}), FeedFnHook(FeedXAgain{})); }
