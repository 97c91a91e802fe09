// examples/fashion_mnist: trains a 784 -> 256 ReLU -> 10 classifier on Fashion-MNIST (SGD, or
// --optimizer momentum|adam|rmsprop|adagrad), four hooks fused into the training step, then
// reports the test accuracy.
//
// The TensorFlow 1.x program it mirrors:
//   hidden = tf.layers.dense(x, 256, activation=tf.nn.relu)
//   logits = tf.layers.dense(hidden, 10)
//   loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
//   tf.compat.v1.summary.scalar("loss", loss); tf.compat.v1.summary.scalar("accuracy", accuracy)
//   train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step)
//     # --optimizer momentum: tf.train.MomentumOptimizer(lr, 0.9); adam: AdamOptimizer(lr);
//     # rmsprop: RMSPropOptimizer(lr); adagrad: AdagradOptimizer(lr). Default --learning_rate:
//     # 0.1 (sgd, adagrad), 0.01 (momentum), 0.001 (adam, rmsprop).
//     # --lr_schedule: the learning rate as a decayed tensor of global_step (lr = the rate
//     # above, T = the last step, E = the steps of one epoch):
//     #   exponential: tf.train.exponential_decay(lr, global_step, E, 0.9, staircase=True)
//     #   cosine:      tf.train.cosine_decay(lr, global_step, T, alpha=0.01)
//     #   piecewise:   tf.train.piecewise_constant(global_step, [T / 2, 3 T / 4],
//     #                                           [lr, lr / 10, lr / 100])
//     # here set before each step by a LearningRateSchedulerHook.
//   hooks = [StopAtStepHook(last_step=max_steps), NanTensorHook(loss),
//            LoggingTensorHook({"loss": loss, "accuracy": accuracy}, every_n_iter=100)]
//   tf.compat.v1.train.MonitoredTrainingSession(checkpoint_dir=model_dir,
//       save_checkpoint_steps=..., hooks=hooks)   # --model_dir, --save_checkpoint_steps
//   tf.compat.v1.train.init_from_checkpoint(warm_start_from, {"/": "/"})   # --warm_start_from
// With --model_dir, checkpoints go there (model.ckpt-<step>, TensorFlow's format) and a
// restarted run resumes from the latest one; the session's default summary hooks write one
// TensorBoard event file there: "loss" and "accuracy" at global steps 1, 101, 201, ... and
// "global_step/sec" at 101, 201, ... (scripts/plot_scalars.py draws them; docs/summaries.md).
// Without --model_dir a StepCounterHook of the example's own logs the step rate instead.
// --progress draws Keras' progress bar on stderr instead of those log lines (a
// ProgressBarHook<"loss", "accuracy"> up to the last step: loss and accuracy averaged since the
// start, steps/sec, ETA; redrawn in place on a terminal, a line every 100 steps otherwise). On
// resume it skips the batches already trained (global_step of them, in the same seeded order), so
// it trains on exactly the batches an uninterrupted run would (TensorFlow's numpy_input_fn would
// start its epoch again instead). The last line of output is "test_accuracy: <value>".
//
// Under MPI (the target fashion_mnist_mpi, HOOKFUSE_WITH_MPI; `mpirun -np N fashion_mnist_mpi`):
// data-parallel training as Horovod's, the global batch of --batch_size rows split across the N
// ranks (NumpyInputFnOptions num_shards = N, shard_index = rank: every rank draws the same
// seeded permutation and takes its slice of each global batch); hooks
// BroadcastGlobalVariablesHook (rank 0's variables to every rank after any restore),
// AverageVariablesHook with SGD and Momentum (the updated variables and slots averaged over the
// ranks, weighted by their rows: exact for these two, and their update stays fused) or
// AverageGradientsHook with the others (the global batch's gradient each step), --divergence_check_steps
// (DivergenceCheckHook) and SyncStopHook (a stop on one rank stops all). Rank 0 is the chief
// (SessionOptions::is_chief): it alone writes checkpoints and the event file to --model_dir,
// prints the log lines and evaluates the test set; the other ranks print nothing but errors.
// --threads T: the matrix products' threads per rank (hookfuse's intra-op thread pool,
// hookfuse/autodiff/threads.hpp).
//
// Bad input never aborts: a flag out of range (NaN and infinities included), a missing or
// malformed data file (load_fashion_mnist's checks: IDX layout, 28x28 images, labels 0..9, at
// least one example) or a training error prints one "fashion_mnist: ..." line naming the flag
// or file on stderr and exits 2 (a flag) or 1 (anything else).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <hookfuse/data/idx.hpp>
#include <hookfuse/data/input_fn.hpp>
#include <hookfuse/hookfuse.hpp>
#ifdef HOOKFUSE_WITH_MPI
#include <hookfuse/distributed/average_gradients_hook.hpp>
#include <hookfuse/distributed/average_variables_hook.hpp>
#include <hookfuse/distributed/broadcast_global_variables_hook.hpp>
#include <hookfuse/distributed/communicator.hpp>
#include <hookfuse/distributed/divergence_check_hook.hpp>
#include <hookfuse/distributed/sync_stop_hook.hpp>
#endif
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include "../cli_checks.hpp"

namespace hf = hookfuse;
#ifdef HOOKFUSE_WITH_MPI
namespace hd = hookfuse::distributed;
#endif

namespace {
using example_cli::finite_in;
using example_cli::integer_in;

/// The schedule of --lr_schedule, one type for all kinds (one session type per optimizer).
struct ExampleSchedule {
  enum class Kind { none, exponential, cosine, piecewise };
  Kind kind;
  hf::ExponentialDecay exponential;
  hf::CosineDecay cosine;
  hf::PiecewiseConstantDecay<2> piecewise;
  double constant;

  /// lr: the base rate; last_step: T; steps_per_epoch: E (see the file comment).
  ExampleSchedule(const std::string& name, double lr, std::int64_t last_step,
                  std::int64_t steps_per_epoch)
      : kind(name == "exponential" ? Kind::exponential
             : name == "cosine"    ? Kind::cosine
             : name == "piecewise" ? Kind::piecewise
                                   : Kind::none),
        exponential(lr, steps_per_epoch, 0.9, /*staircase=*/true),
        cosine(lr, last_step, 0.01),
        piecewise({last_step / 2, std::max(last_step * 3 / 4, last_step / 2 + 1)},
                  {lr, lr / 10, lr / 100}),
        constant(lr) {}

  double operator()(std::int64_t global_step) const {
    switch (kind) {
      case Kind::exponential: return exponential(global_step);
      case Kind::cosine: return cosine(global_step);
      case Kind::piecewise: return piecewise(global_step);
      case Kind::none: break;
    }
    return constant;
  }
};

#ifdef HOOKFUSE_WITH_MPI
/// The session's logger under MPI: the chief's INFO lines, and every rank's warnings and errors.
struct RankLogger {
  bool chief = true;
  void log(hf::Severity s, std::string_view line) const {
    if (chief || s >= hf::Severity::warning) hf::StderrLogger{}.log(s, line);
  }
};
using ExampleSessionOptions = hf::SessionOptions<hf::DefaultSaver, hf::SteadyClock, RankLogger>;

/// The ranks' average for optimizer Opt: of the updated variables where that equals the
/// gradients' and keeps the fused update (SGD, Momentum), of the gradients otherwise
/// (docs/distributed.md, AverageVariablesHook).
template <class Opt>
auto average_over_ranks(const hd::Communicator& comm) {
  if constexpr (std::is_same_v<Opt, hf::GradientDescentOptimizer> ||
                std::is_same_v<Opt, hf::MomentumOptimizer>)
    return hd::AverageVariablesHook(comm);
  else
    return hd::AverageGradientsHook(comm);
}
#else
using ExampleSessionOptions = hf::SessionOptions<>;
#endif
}  // namespace

int main(int argc, char** argv) try {
#ifdef HOOKFUSE_WITH_MPI
  // First in main(), last to go: MPI_Init_thread before the flags (it may take its own
  // arguments out of argv), MPI_Finalize after every Communicator is gone.
  hd::MpiEnvironment mpi(argc, argv);
  hd::Communicator comm;  // MPI_COMM_WORLD
  const std::int64_t rank = comm.rank(), num_ranks = comm.size();
  const bool chief = rank == 0;
  // A training error on one rank (a NaN loss, a failed write) would leave the others waiting in
  // the next allreduce: end the whole job.
  const auto abort_job = [&] {
    if (num_ranks > 1) MPI_Abort(MPI_COMM_WORLD, 1);
  };
#else
  constexpr std::int64_t rank = 0, num_ranks = 1;
  constexpr bool chief = true;
  const auto abort_job = [] {};
#endif
  CLI::App app{"Fashion-MNIST MLP (784 -> 256 ReLU -> 10) trained with hookfuse"};
  int epochs = 1;
  std::int64_t batch_size = 32;
  std::optional<double> learning_rate;
  std::string optimizer = "sgd";
  std::string data_dir = hf::data::default_fashion_mnist_dir;
  std::uint64_t seed = 7;
  std::optional<std::int64_t> max_steps;
  std::string model_dir;
  std::optional<std::int64_t> save_checkpoint_steps;
  std::string warm_start_from;
  std::string lr_schedule = "none";
  bool progress = false;
#ifdef HOOKFUSE_WITH_MPI
  int threads = 1;
  std::int64_t divergence_check_steps = 0;
#endif
  // The bounds keep every step count in range of std::int64_t: at most 60000 * 10000 steps
  // from --epochs (Fashion-MNIST's 60000 examples at batch 1), or --max_steps.
  app.add_option("--epochs", epochs, "passes over the training set")->check(integer_in(1, 10000));
  app.add_option("--batch_size", batch_size, "examples per step")
      ->check(integer_in(std::int64_t{1}, std::int64_t{60000}));
  app.add_option("--learning_rate", learning_rate,
                 "learning rate (default: 0.1 for sgd and adagrad, 0.01 for momentum, 0.001 for "
                 "adam and rmsprop)")
      ->check(finite_in(0.0, 10.0));
  app.add_option("--optimizer", optimizer,
                 "sgd (GradientDescentOptimizer), momentum (MomentumOptimizer, momentum 0.9), "
                 "adam (AdamOptimizer), rmsprop (RMSPropOptimizer) or adagrad "
                 "(AdagradOptimizer), with TensorFlow 1.x's defaults")
      ->check(CLI::IsMember({"sgd", "momentum", "adam", "rmsprop", "adagrad"}));
  app.add_option("--lr_schedule", lr_schedule,
                 "learning-rate schedule over the global step, from the --learning_rate lr "
                 "(T: the last step, E: steps per epoch): none (lr throughout); exponential "
                 "(exponential_decay(lr, E, 0.9, staircase): x0.9 each epoch); cosine "
                 "(cosine_decay(lr, T, alpha 0.01): to lr/100 at T); piecewise "
                 "(piecewise_constant([T/2, 3T/4], [lr, lr/10, lr/100]))")
      ->check(CLI::IsMember({"none", "exponential", "cosine", "piecewise"}));
  app.add_option("--data_dir", data_dir,
                 "directory with the four Fashion-MNIST IDX files, raw or .gz");
  app.add_option("--seed", seed, "seed of the initial weights and the batch order")
      ->check(integer_in(std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--max_steps", max_steps, "stop after this many steps (global step)")
      ->check(integer_in(std::int64_t{1}, std::int64_t{1000000000}));
  app.add_option("--model_dir", model_dir,
                 "save checkpoints here and resume from the latest one (must exist or is created)");
  app.add_option("--save_checkpoint_steps", save_checkpoint_steps,
                 "save a checkpoint every this many steps (default: every 600 seconds)")
      ->check(integer_in(std::int64_t{1}, std::int64_t{1000000000}));
  app.add_option("--warm_start_from", warm_start_from,
                 "initialise the weights from this checkpoint directory or prefix ({\"/\": \"/\"}); "
                 "a checkpoint in --model_dir wins");
  app.add_flag("--progress", progress,
               "draw a progress bar (loss, accuracy, steps/sec, ETA) on stderr instead of the "
               "loss/accuracy and step-rate log lines");
#ifdef HOOKFUSE_WITH_MPI
  app.add_option("--threads", threads,
                 "threads of the matrix products on each rank (hookfuse's intra-op pool)")
      ->check(integer_in(1, 256));
  app.add_option("--divergence_check_steps", divergence_check_steps,
                 "check every this many steps that all ranks hold the same variables "
                 "(DivergenceCheckHook; 0: never)")
      ->check(integer_in(std::int64_t{0}, std::int64_t{1000000000}));
#endif
  if (const auto status = example_cli::parse(app, argc, argv, "fashion_mnist")) return *status;
#ifdef HOOKFUSE_WITH_MPI
  if (batch_size % num_ranks != 0) {
    std::fprintf(stderr,
                 "fashion_mnist: --batch_size %lld must be a multiple of the number of ranks "
                 "(%lld): every rank trains on an equal slice of the global batch\n",
                 static_cast<long long>(batch_size), static_cast<long long>(num_ranks));
    return 2;
  }
  hf::set_intra_op_parallelism_threads(threads);
#endif
  if (!model_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(model_dir, ec);
    if (ec) {
      std::fprintf(stderr, "fashion_mnist: --model_dir %s: %s\n", model_dir.c_str(),
                   ec.message().c_str());
      return 1;
    }
  }

  hf::data::Dataset train, test;
  try {
    train = hf::data::load_fashion_mnist(data_dir, hf::data::Split::train);
    test = hf::data::load_fashion_mnist(data_dir, hf::data::Split::test);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return 1;
  }
  if (chief)
    std::printf("train: %lld examples, test: %lld examples, %lld features\n",
                static_cast<long long>(train.images.count),
                static_cast<long long>(test.images.count),
                static_cast<long long>(train.images.features()));

  // The model. Rows are the batch.
  hf::Placeholder<"x", float, 784> x;                   // [batch, 784] pixels in [0, 1]
  hf::Placeholder<"labels", std::int32_t, 1> labels;    // [batch] classes 0..9
  // Layers this large use run-time sizes (Eigen keeps fixed-size matrices on the stack).
  hf::nn::Dense<"dense", float> hidden(784, 256, hf::nn::glorot_uniform{seed});
  hf::nn::Dense<"logits", float> output(256, 10, hf::nn::glorot_uniform{seed + 1});
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  auto accuracy = hf::named<"accuracy">(hf::accuracy(labels, logits));
  // The model's summaries: the session's default SummarySaverHook writes every one of them.
  auto loss_summary = hf::summary::scalar<"loss">(loss);
  auto accuracy_summary = hf::summary::scalar<"accuracy">(accuracy);

  hf::GlobalStep global_step;

  hf::data::NumpyInputFn<float> train_input(
      train, {.batch_size = batch_size, .num_epochs = epochs, .shuffle = true, .seed = seed,
              .num_shards = num_ranks, .shard_index = rank});
  const std::int64_t steps_per_epoch = (train.images.count + batch_size - 1) / batch_size;
  const std::int64_t last_step = max_steps.value_or(steps_per_epoch * epochs);

  // Every rank restores from --model_dir; only the chief writes to it.
  ExampleSessionOptions options{.is_chief = chief,
                                .checkpoint_dir = model_dir,
                                .save_checkpoint_steps = save_checkpoint_steps};
#ifdef HOOKFUSE_WITH_MPI
  options.logger.chief = chief;
#endif
  if (!warm_start_from.empty()) options.warm_start_from = hf::io::WarmStart{warm_start_from};

  // One session type per optimizer (its slots are part of the session and the checkpoint).
  const auto start = std::chrono::steady_clock::now();
  double final_learning_rate = 0.0;
  const auto train_with = [&](const auto& opt) -> bool {
    const ExampleSchedule schedule(lr_schedule, opt.learning_rate(), last_step, steps_per_epoch);
    try {
      hf::MonitoredTrainingSession session(
          opt.minimize(loss, global_step), hf::feeds<"x", "labels">(train_input),
          std::move(options),
          hf::hooks(
#ifdef HOOKFUSE_WITH_MPI
              // First: the hooks after it see rank 0's (possibly restored) variables.
              hd::BroadcastGlobalVariablesHook(comm),
              average_over_ranks<std::remove_cvref_t<decltype(opt)>>(comm),
#endif
              hf::StopAtStepHook({.last_step = last_step}),
              // The session installs TF's StepCounterHook when it has a directory.
              hf::ConditionalHook(hf::StepCounterHook<>({.every_n_steps = 100}),
                                  model_dir.empty() && !progress && chief),
              hf::NanTensorHook<"loss">(),
              // Under MPI: rank 0's loss and accuracy, those of its slice of the batch.
              hf::ConditionalHook(
                  hf::LoggingTensorHook<"loss", "accuracy">({.every_n_iter = 100}),
                  !progress && chief),
              hf::ConditionalHook(hf::ProgressBarHook<"loss", "accuracy">({.total = last_step}),
                                  progress && chief),
              hf::ConditionalHook(hf::LearningRateSchedulerHook(schedule),
                                  schedule.kind != ExampleSchedule::Kind::none)
#ifdef HOOKFUSE_WITH_MPI
              ,
              hf::ConditionalHook(
                  hd::DivergenceCheckHook(
                      comm, {.every_n_steps = std::max<std::int64_t>(divergence_check_steps, 1)}),
                  divergence_check_steps > 0),
              hd::SyncStopHook(comm)  // last: sees every other hook's stop
#endif
              ),
          loss_summary, accuracy_summary);
      if (session.restored_from_checkpoint()) {
        // Resume the batch order where the checkpoint left it: skip the batches trained so far.
        if (chief)
          std::printf("resumed at global_step: %lld\n", static_cast<long long>(global_step.value));
        for (std::int64_t i = 0; i < global_step.value && train_input.next(); ++i) {
        }
      }
      while (!session.should_stop()) session.run();
      final_learning_rate = session.optimizer().learning_rate();
      // Every hook's end() (the final checkpoint, the event file's flush) runs here; the first
      // error is raised, so a failed end() exits 1 (the destructor would only log it).
      session.close();
    } catch (const std::exception& e) {
      if (num_ranks > 1)
        std::fprintf(stderr, "fashion_mnist: rank %lld: %s\n", static_cast<long long>(rank),
                     e.what());
      else
        std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
      abort_job();
      return false;
    }
    return true;
  };
  if (chief) {
    std::printf("optimizer: %s\n", optimizer.c_str());
    std::printf("lr_schedule: %s\n", lr_schedule.c_str());
  }
  bool trained = false;
  if (optimizer == "momentum")
    trained = train_with(hf::MomentumOptimizer(learning_rate.value_or(0.01), 0.9));
  else if (optimizer == "adam")
    trained = train_with(hf::AdamOptimizer(learning_rate.value_or(0.001)));
  else if (optimizer == "rmsprop")
    trained = train_with(hf::RMSPropOptimizer(learning_rate.value_or(0.001)));
  else if (optimizer == "adagrad")
    trained = train_with(hf::AdagradOptimizer(learning_rate.value_or(0.1)));
  else
    trained = train_with(hf::GradientDescentOptimizer(learning_rate.value_or(0.1)));
  if (!trained) return 1;
  // Evaluation and the summary lines: the chief's (every rank holds the same variables).
  if (!chief) return 0;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                             .count();
  const double epochs_done =
      static_cast<double>(global_step.value) / static_cast<double>(steps_per_epoch);
  std::printf("global_step: %lld\n", static_cast<long long>(global_step.value));
  std::printf("final_learning_rate: %g\n", final_learning_rate);
  std::printf("train_seconds: %.3f\nseconds_per_epoch: %.3f\n", seconds,
              epochs_done > 0 ? seconds / epochs_done : 0.0);

  // Evaluation: the same variables, bound to a second graph for batches of 1000.
  hf::data::NumpyInputFn<float> test_input(
      test, {.batch_size = 1000, .num_epochs = 1, .shuffle = false});
  auto eval = hf::bind(test_input.batch_size(), loss, accuracy);
  double loss_sum = 0, hits = 0;
  std::int64_t seen = 0;
  while (test_input.next()) {
    const auto rows = static_cast<hf::Index>(test_input.rows());
    eval.feed<"x">(test_input.features());  // [rows, 784], checked against the placeholder
    eval.feed<"labels">(test_input.labels());
    loss_sum += static_cast<double>(eval.forward()) * static_cast<double>(rows);
    hits += static_cast<double>(eval.compute<"accuracy">()(0, 0)) * static_cast<double>(rows);
    seen += rows;
  }
  if (seen == 0) {  // load_fashion_mnist refuses an empty set; never print NaN as accuracy
    std::fprintf(stderr, "fashion_mnist: the test set holds no examples\n");
    return 1;
  }
  std::printf("test_loss: %.4f\n", loss_sum / static_cast<double>(seen));
  std::printf("test_accuracy: %.4f\n", hits / static_cast<double>(seen));
  return 0;
} catch (const std::exception& e) {
  // Anything not caught above (an input function's options, the evaluation graph, memory):
  // one line and exit 1, never std::terminate.
  std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
  return 1;
}
