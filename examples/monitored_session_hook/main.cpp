// examples/monitored_session_hook: a user hook under a MonitoredTrainingSession whose caller
// feeds every run: the hook reads the caller's request in before_run, records each run's loss in
// after_run and saves a checkpoint in end().
//
// The TensorFlow 1.x program it mirrors (xs = [[1], [2], [3], [4]], ys = [[2], [4], [6], [8]]):
//   x = tf.compat.v1.placeholder(tf.float32, [None, 1]); y = ... same
//   W = tf.compat.v1.get_variable("W", [1, 1], initializer=tf.zeros_initializer())
//   b = tf.compat.v1.get_variable("b", [1], initializer=tf.zeros_initializer())
//   loss = tf.compat.v1.losses.mean_squared_error(y, tf.matmul(x, W) + b)
//   train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
//       loss, tf.compat.v1.train.get_or_create_global_step())
//
//   class LossRecorderHook(tf.compat.v1.train.SessionRunHook):
//     def __init__(self, checkpoint_dir, print_every):
//       self.losses = []; self.fetches_seen = collections.Counter(); ...
//     def begin(self):
//       self._saver = tf.compat.v1.train.Saver()
//     def before_run(self, run_context):
//       self.fetches_seen[str(run_context.original_args.fetches)] += 1
//       return tf.compat.v1.train.SessionRunArgs(loss)
//     def after_run(self, run_context, run_values):
//       self.losses.append(run_values.results)
//       if len(self.losses) % self._print_every == 0 or len(self.losses) == 1:
//         print("run %d: loss = %g" % (len(self.losses), run_values.results))
//     def end(self, session):
//       path = self._saver.save(session, os.path.join(self._dir, "model.ckpt"),
//                               global_step=tf.compat.v1.train.get_global_step())
//       print("end(): saved checkpoint", path)
//
//   os.makedirs("checkpoints", exist_ok=True)  # Saver.save needs the directory
//   hook = LossRecorderHook("checkpoints", print_every=10)
//   with tf.compat.v1.train.MonitoredTrainingSession(hooks=[hook]) as sess:
//     for _ in range(100):
//       sess.run(train_op, feed_dict={x: xs, y: ys})
//   print(len(hook.losses), "losses recorded; final loss:", hook.losses[-1])
//
// What differs, and why:
//  - hookfuse's run_context.original_args() holds the caller's fetches only, as the names of the
//    tensors asked for beside the train op: sess.run(train_op, feed_dict=...) is
//    session.run(feed<"x">(...), feed<"y">(...)), whose fetch list is empty (the train op is
//    implicit), and the hook cannot see the caller's feed_dict. --fetch_loss makes the caller
//    run sess.run([train_op, loss], feed_dict=...) instead, which the hook sees as [loss].
//  - The fetch lists are printed as hookfuse names them: "[]" for TF's train_op alone.
//  - "checkpoints" is relative to --dir (default: the working directory).
#include <CLI/CLI.hpp>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <hookfuse/hookfuse.hpp>
#include <map>
#include <string>
#include <vector>

#include "../cli_checks.hpp"

namespace hf = hookfuse;

class LossRecorderHook {
 public:
  LossRecorderHook(std::string checkpoint_dir, std::int64_t print_every)
      : save_path_((std::filesystem::path(checkpoint_dir) / "model.ckpt").string()),
        print_every_(print_every) {}

  void begin() {
    losses_.clear();
    fetches_seen_.clear();
  }

  // TF: run_context.original_args.fetches, the caller's request for this run.
  hf::SessionRunArgs<"loss"> before_run(hf::SessionRunContext& ctx) {
    std::string fetches = "[";
    for (const std::string_view name : ctx.original_args().fetches)
      fetches.append(fetches.size() > 1 ? ", " : "").append(name);
    fetches += "]";
    ++fetches_seen_[fetches];
    return {};
  }

  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"loss">& values) {
    losses_.push_back(values.get<"loss">().item());
    const auto n = static_cast<std::int64_t>(losses_.size());
    if (n == 1 || n % print_every_ == 0)
      std::printf("run %lld: loss = %.9g\n", static_cast<long long>(n), losses_.back());
  }

  // TF: saver.save(session, "checkpoints/model.ckpt", global_step=global_step).
  template <class Session>
  void end(Session& session) {
    saved_path_ = saver_.save(session.variables(), save_path_, session.global_step());
    std::printf("end(): saved checkpoint %s\n", saved_path_.c_str());
  }

  const std::vector<double>& losses() const { return losses_; }
  const std::map<std::string, std::int64_t>& fetches_seen() const { return fetches_seen_; }
  const std::string& saved_path() const { return saved_path_; }

 private:
  std::string save_path_;
  std::int64_t print_every_;
  hf::io::Saver saver_;  // TF's Saver(): max_to_keep=5
  std::vector<double> losses_;
  std::map<std::string, std::int64_t> fetches_seen_;
  std::string saved_path_;
};

int main(int argc, char** argv) try {
  CLI::App app{"A user hook reading original_args, recording losses and saving in end()"};
  std::string dir = ".";
  std::int64_t runs = 100;
  std::int64_t print_every = 10;
  double learning_rate = 0.01;
  bool fetch_loss = false;
  app.add_option("--dir", dir, "directory holding checkpoints/ (default: .)")
      ->check(example_cli::non_empty_path());
  app.add_option("--runs", runs, "caller's sess.run calls (default 100)")
      ->check(example_cli::integer_in(std::int64_t{1}, std::int64_t{1000000000}));
  app.add_option("--print_every", print_every, "the hook prints every N-th loss (default 10)")
      ->check(example_cli::integer_in(std::int64_t{1}, std::int64_t{1000000000}));
  app.add_option("--learning_rate", learning_rate, "SGD learning rate (default 0.01)")
      ->check(example_cli::finite_in(0.0, 10.0));
  app.add_flag("--fetch_loss", fetch_loss,
               "the caller runs sess.run([train_op, loss], feed_dict) instead of "
               "sess.run(train_op, feed_dict)");
  if (const auto status = example_cli::parse(app, argc, argv, "monitored_session_hook"))
    return *status;

  const std::string checkpoint_dir = (std::filesystem::path(dir) / "checkpoints").string();
  std::filesystem::create_directories(checkpoint_dir);  // TF: os.makedirs; Saver.save needs it

  hf::Placeholder<"x", float, 1> x;  // [batch, 1]
  hf::Placeholder<"y", float, 1> y;  // [batch, 1]
  hf::Variable<"W", float, 1, 1> W;  // zeros
  hf::Variable<"b", float, 1, 1> b;  // zeros
  auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b));
  hf::GlobalStep global_step;
  auto train_op = hf::GradientDescentOptimizer(learning_rate).minimize(loss, global_step);

  const std::array<float, 4> xs{1, 2, 3, 4};
  const std::array<float, 4> ys{2, 4, 6, 8};
  LossRecorderHook hook(checkpoint_dir, print_every);
  {
    hf::MonitoredTrainingSession session(train_op, hf::caller_feeds(4), hf::hooks(std::ref(hook)));
    for (std::int64_t i = 0; i < runs; ++i) {
      if (fetch_loss)
        (void)session.run<"loss">(hf::feed<"x">(xs, 4), hf::feed<"y">(ys, 4));
      else
        session.run(hf::feed<"x">(xs, 4), hf::feed<"y">(ys, 4));
    }
    session.close();  // the hook's end() saves here
  }

  for (const auto& [fetches, count] : hook.fetches_seen())
    std::printf("before_run saw original_args.fetches = %s in %lld runs\n", fetches.c_str(),
                static_cast<long long>(count));
  std::printf("%zu losses recorded; final loss: %.9g\n", hook.losses().size(),
              hook.losses().empty() ? 0.0 : hook.losses().back());
  std::printf("global_step: %lld\nW: %.6f\nb: %.6f\n", static_cast<long long>(global_step.value),
              static_cast<double>(W.value(0, 0)), static_cast<double>(b.value(0, 0)));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "monitored_session_hook: %s\n", e.what());
  return 1;
}
