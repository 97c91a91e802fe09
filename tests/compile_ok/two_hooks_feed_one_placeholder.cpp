// The fixed counterpart of tests/compile_fail/two_hooks_feed_one_placeholder.cpp: must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

struct FeedX {
  float x = 1.0f;
  auto operator()() { return feed<"x">(&x, 1); }
};
// Feeds "y", which no other hook feeds.
struct FeedY {
  float y = 2.0f;
  auto operator()() { return feed<"y">(&y, 1); }
};

int main() { lr_snippet::train(FeedFnHook(FeedX{}), FeedFnHook(FeedY{})); }
