// The fixed counterpart of tests/compile_fail/reads_gradients_in_evaluation_session.cpp: the
// hook that reads gradients goes in a training session. Must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

struct GradientReader {
  static constexpr bool reads_gradients = true;
  template <class Session>
  void end(Session&) {}
};

int main() { lr_snippet::train(GradientReader{}); }
