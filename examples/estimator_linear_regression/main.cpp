// examples/estimator_linear_regression: y = W x + b on four points through
// tf.estimator.train_and_evaluate, with five hooks in the TrainSpec.
//
// The TensorFlow 1.x program it mirrors (x = [[1], [2], [3], [4]], y = [[2], [4], [6], [8]]):
//   def model_fn(features, labels, mode):
//     W = tf.compat.v1.get_variable("W", [1, 1], initializer=tf.zeros_initializer())
//     b = tf.compat.v1.get_variable("b", [1], initializer=tf.zeros_initializer())
//     predictions = tf.matmul(features["x"], W) + b
//     loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
//     train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
//         loss, tf.compat.v1.train.get_global_step())
//     return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
//                                       train_op=train_op)
//   estimator = tf.estimator.Estimator(model_fn, model_dir="model")
//   train_spec = tf.estimator.TrainSpec(
//       numpy_input_fn({"x": x}, y, batch_size=1, num_epochs=None, shuffle=True),
//       hooks=[tf.compat.v1.train.StepCounterHook(every_n_steps=1, output_dir="logs"),
//              tf.compat.v1.train.StopAtStepHook(num_steps=1000),
//              tf.compat.v1.train.NanTensorHook(loss),
//              tf.compat.v1.train.CheckpointSaverHook("checkpoints", save_steps=100),
//              tf.compat.v1.train.SummarySaverHook(save_steps=10, output_dir="logs",
//                                                  summary_op=tf.summary.scalar("loss", loss))])
//   eval_spec = tf.estimator.EvalSpec(
//       numpy_input_fn({"x": x}, y, num_epochs=1, shuffle=False), steps=None)
//   metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
//   print("W:", estimator.get_variable_value("W"), "b:", estimator.get_variable_value("b"))
//   print("loss:", metrics["loss"])
//
// What differs, and why:
//  - TensorFlow's `loss` tensor exists only inside model_fn, so a TF program puts NanTensorHook
//    and SummarySaverHook there (EstimatorSpec.training_hooks) or names the tensor; hookfuse's
//    hooks name their tensors ("loss") at compile time, so they stay in the TrainSpec as written.
//  - SummarySaverHook takes its summaries as a compile-time list: the scalar "loss" of the tensor
//    named "loss" (TF: summary_op=tf.summary.scalar("loss", loss)).
//  - CheckpointSaverHook takes its saver as an argument: io::Saver{}, TensorFlow's default
//    Saver(max_to_keep=5), as TF's hook builds when given none.
//  - hookfuse's Estimator has no get_variable_value; W and b are read from model_dir's latest
//    checkpoint with io::load_checkpoint, which is what TF's get_variable_value does
//    (tf.train.load_variable(model_dir, name)).
//  - CheckpointSaverHook creates "checkpoints" in begin(), as TF's does (TF through the summary
//    writer it opens there; hookfuse's through its saver's create_checkpoint_dir, writing no
//    events).
//  - "model", "logs" and "checkpoints" are relative to --dir (default: the working directory).
#include <CLI/CLI.hpp>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <hookfuse/hookfuse.hpp>
#include <string>

#include "../cli_checks.hpp"

namespace hf = hookfuse;

using X = hf::Placeholder<"x", float, 1>;  // [batch, 1]
using Y = hf::Placeholder<"y", float, 1>;  // [batch, 1]

struct Params {
  double learning_rate = 0.01;
};

int main(int argc, char** argv) try {
  CLI::App app{"y = W x + b with train_and_evaluate and five TrainSpec hooks"};
  std::string dir = ".";
  std::int64_t num_steps = 1000;
  double learning_rate = 0.01;
  std::uint64_t seed = 7;
  app.add_option("--dir", dir, "directory holding model/, logs/ and checkpoints/ (default: .)")
      ->check(example_cli::non_empty_path());
  app.add_option("--num_steps", num_steps, "StopAtStepHook's num_steps (default 1000)")
      ->check(example_cli::integer_in(std::int64_t{1}, std::int64_t{1000000000}));
  app.add_option("--learning_rate", learning_rate, "SGD learning rate (default 0.01)")
      ->check(example_cli::finite_in(0.0, 10.0));
  app.add_option("--seed", seed, "seed of the training input's shuffle (default 7)")
      ->check(example_cli::integer_in(std::uint64_t{0}, std::uint64_t{1} << 62));
  if (const auto status = example_cli::parse(app, argc, argv, "estimator_linear_regression"))
    return *status;

  const std::filesystem::path root(dir);
  const std::string model_dir = (root / "model").string();
  const std::string logs = (root / "logs").string();
  const std::string checkpoints = (root / "checkpoints").string();

  const auto model_fn = [](X x, Y y, auto mode, const Params& params, auto& vars) {
    auto& W = hf::nn::get_variable<"W", float, 1, 1>(vars, hf::nn::zeros{});
    auto& b = hf::nn::get_variable<"b", float, 1, 1, 1>(vars, hf::nn::zeros{});  // TF shape [1]
    auto predictions = hf::named<"predictions">(hf::matmul(x, W) + b);
    auto loss = hf::named<"loss">(hf::mean_squared_error(y, predictions));
    return hf::EstimatorSpec{
        .mode = mode,
        .predictions = predictions,
        .loss = loss,
        .train_op =
            hf::GradientDescentOptimizer(params.learning_rate).minimize(loss, vars.global_step())};
  };

  const std::array<float, 4> xs{1, 2, 3, 4};
  const std::array<float, 4> ys{2, 4, 6, 8};
  const auto train_input_fn = hf::numpy_input_fn<X, Y>(
      xs.data(), 4, ys.data(),
      {.batch_size = 1, .num_epochs = std::nullopt, .shuffle = true, .seed = seed});
  // TF's default batch_size (128) takes the four examples as one batch.
  const auto eval_input_fn =
      hf::numpy_input_fn<X, Y>(xs.data(), 4, ys.data(), {.num_epochs = 1, .shuffle = false});

  hf::Estimator estimator(model_fn, hf::RunConfig{.model_dir = model_dir}, Params{learning_rate});
  const hf::TrainSpec train_spec(
      train_input_fn, std::nullopt,
      hf::hooks(hf::StepCounterHook<>({.every_n_steps = 1, .output_dir = logs}),
                hf::StopAtStepHook({.num_steps = num_steps}), hf::NanTensorHook<"loss">(),
                hf::CheckpointSaverHook(checkpoints, {.save_steps = 100}, hf::io::Saver{}),
                hf::SummarySaverHook(
                    {.save_steps = 10, .output_dir = logs},
                    hf::summary::Merged<
                        hf::summary::Spec<hf::summary::Kind::scalar, "loss", "loss">>{})));
  const hf::EvalSpec eval_spec(eval_input_fn, {.steps = std::nullopt});
  const hf::TrainAndEvaluateResult result =
      hf::train_and_evaluate(estimator, train_spec, eval_spec);

  const hf::io::CheckpointReader reader = hf::io::load_checkpoint(model_dir);
  std::printf("W: %.6f\nb: %.6f\n", static_cast<double>(reader.get_tensor<float>("W").at(0)),
              static_cast<double>(reader.get_tensor<float>("b").at(0)));
  if (!result.eval_result) {
    std::fprintf(stderr, "estimator_linear_regression: no evaluation ran\n");
    return 1;
  }
  std::printf("global_step: %lld\nloss: %.6g\n",
              static_cast<long long>(result.eval_result->global_step),
              static_cast<double>(result.eval_result->loss()));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "estimator_linear_regression: %s\n", e.what());
  return 1;
}
