// The compiling twin of tests/compile_fail/summary_not_in_model.cpp: the summary of an
// unnamed expression passed to the session as an extra. Compiled, not run.
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/hooks/summary_saver_hook.hpp>

using namespace hookfuse;

int main() {
  Placeholder<"x", float, 1> x;
  Variable<"w", float, 1, 1> w;
  GlobalStep gs;
  auto loss = named<"loss">(reduce_mean(matmul(x, w)));
  auto x_mean = summary::scalar<"x_mean">(reduce_mean(x));
  auto train_op = GradientDescentOptimizer(0.1).minimize(loss, gs);
  MonitoredTrainingSession session(
      train_op, caller_feeds(4),
      hooks(SummarySaverHook({.save_steps = 8, .output_dir = "unused"}, summary::merge(x_mean))),
      x_mean);
  (void)session;
}
