// examples/custom_hook: a user-written hook that records every step's loss in after_run and
// reports in end(), beside StopAtStepHook.
//
// A hook is any class; each event method is optional. Here: before_run asks for "loss" and
// "global_step" every run, after_run stores them, end prints a summary. A misspelled tensor name
// or a wrong after_run signature would not compile.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <hookfuse/hookfuse.hpp>
#include <vector>

#include "../cli_checks.hpp"

namespace hf = hookfuse;

class LossHistoryHook {
 public:
  explicit LossHistoryHook(std::size_t expected_steps) { losses_.reserve(expected_steps); }

  void begin() { losses_.clear(); }

  hf::SessionRunArgs<"loss", "global_step"> before_run(hf::SessionRunContext&) { return {}; }

  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"loss", "global_step">& v) {
    losses_.push_back(v.get<"loss">().item());
    last_step_ = v.get<"global_step">().item_int() + 1;
  }

  template <class Session>
  void end(Session& session) {
    std::printf("LossHistoryHook: %zu steps recorded, session global step %lld\n",
                losses_.size(), static_cast<long long>(session.global_step()));
    if (losses_.empty()) return;
    std::printf("first loss: %.6f\nlast loss: %.6f\n", losses_.front(), losses_.back());
    std::size_t decreases = 0;
    for (std::size_t i = 1; i < losses_.size(); ++i) decreases += losses_[i] < losses_[i - 1];
    std::printf("steps where the loss fell: %zu of %zu\n", decreases, losses_.size() - 1);
  }

 private:
  std::vector<double> losses_;
  std::int64_t last_step_ = 0;
};

// A fixed batch of 8 noisy points of y = 3 x - 1, fed every step (full-batch gradient descent).
struct FixedBatch {
  float xs[8] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f};
  float ys[8] = {-4.1f, -2.4f, -1.05f, 0.45f, 2.1f, 3.4f, 5.05f, 6.6f};
  bool next() { return true; }
  hf::Index batch_size() const { return 8; }
  template <class Graph>
  void feed(Graph& g) {
    g.template feed<"x">(xs, 8, 1);  // [8, 1] each
    g.template feed<"y">(ys, 8, 1);
  }
};

int main(int argc, char** argv) try {
  CLI::App app{"A user-written hook recording the loss"};
  std::int64_t steps = 50;
  // Bounded: LossHistoryHook reserves room for every step's loss.
  app.add_option("--steps", steps, "training steps")
      ->check(example_cli::integer_in(std::int64_t{1}, std::int64_t{1000000}));
  if (const auto status = example_cli::parse(app, argc, argv, "custom_hook")) return *status;

  hf::Placeholder<"x", float, 1> x;
  hf::Placeholder<"y", float, 1> y;
  hf::Variable<"W", float, 1, 1> W;
  hf::Variable<"b", float, 1, 1> b;
  auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b));
  hf::GlobalStep global_step;
  auto train_op = hf::GradientDescentOptimizer(0.1).minimize(loss, global_step);

  hf::MonitoredTrainingSession session(
      train_op, FixedBatch{},
      hf::hooks(hf::StopAtStepHook({.num_steps = steps}),
                LossHistoryHook(static_cast<std::size_t>(steps))));
  while (!session.should_stop()) session.run();
  session.close();  // LossHistoryHook::end prints its report here
  std::printf("W: %.4f\nb: %.4f\n", static_cast<double>(W.value(0, 0)),
              static_cast<double>(b.value(0, 0)));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "custom_hook: %s\n", e.what());
  return 1;
}
