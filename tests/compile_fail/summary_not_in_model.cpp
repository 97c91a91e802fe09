// expect: (error: invalid application of 'sizeof' to incomplete type 'hookfuse::compile_error<hookfuse::fixed_string<[0-9]+>{"hook `hookfuse::SummarySaverHook<[^`]*` fetches `x_mean`, which is not a tensor of the model\. Tensors of the model: x, w, loss, global_step\.|implicit instantiation of undefined template 'hookfuse::compile_error<.*check_fetch<hookfuse::SummarySaverHook<)
// A summary of an unnamed expression is the named tensor "x_mean"; given to the hook but not to
// the session, the model lacks it: a compile error naming the hook and the name.
// Control: tests/compile_ok/summary_not_in_model.cpp (the summary passed as an extra).
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
      hooks(SummarySaverHook({.save_steps = 8, .output_dir = "unused"}, summary::merge(x_mean))));
  (void)session;
}
