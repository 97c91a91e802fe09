// The fixed counterpart of tests/compile_fail/gradient_hook_in_evaluation_session.cpp: the
// gradient hook goes in the training session; the evaluation session gets the hooks that
// receive its events (before_run, after_run, end). Must compile.
#include "../compile_fail/lr_session.hpp"

using namespace hookfuse;

int main() {
  lr_snippet::train(GradientClipByNormHook(1.0));
  lr_snippet::evaluate(FinalOpsHook<"loss">());
}
