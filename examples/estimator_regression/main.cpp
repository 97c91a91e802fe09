// examples/estimator_regression: y = W x + b through the Estimator: train, evaluate, train on,
// evaluate again, predict.
//
// The TensorFlow 1.x program it mirrors:
//   def model_fn(features, labels, mode, params):
//     W = tf.compat.v1.get_variable("W", [1, 1], initializer=tf.zeros_initializer())
//     b = tf.compat.v1.get_variable("b", [1], initializer=tf.zeros_initializer())
//     predictions = tf.matmul(features["x"], W) + b
//     loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
//     train_op = tf.compat.v1.train.GradientDescentOptimizer(params["learning_rate"]).minimize(
//         loss, tf.compat.v1.train.get_global_step())
//     return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
//         train_op=train_op,
//         eval_metric_ops={"mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)})
//   estimator = tf.estimator.Estimator(model_fn, model_dir, params={"learning_rate": 0.01})
//   train_fn = numpy_input_fn({"x": x}, y, batch_size=1, num_epochs=None, shuffle=True)
//   eval_fn = numpy_input_fn({"x": x}, y, batch_size=4, num_epochs=1, shuffle=False)
//   estimator.train(train_fn, steps=steps); print(estimator.evaluate(eval_fn))
//   estimator.train(train_fn, steps=steps); print(estimator.evaluate(eval_fn))
//   print(list(estimator.predict(numpy_input_fn({"x": [[5.], [6.]]}, shuffle=False))))
#include <CLI/CLI.hpp>
#include <array>
#include <cstdio>
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

int main(int argc, char** argv) {
  CLI::App app{"y = W x + b with hookfuse's Estimator"};
  std::string model_dir;
  std::int64_t steps = 500;
  double learning_rate = 0.01;
  app.add_option("--model_dir", model_dir,
                 "checkpoints and event files (default: a new "
                 "directory under the system's temporary directory)");
  app.add_option("--steps", steps, "training steps per train() call")
      ->check(example_cli::integer_in(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--learning_rate", learning_rate, "SGD learning rate")
      ->check(example_cli::finite_in(0.0, 10.0));
  if (const auto status = example_cli::parse(app, argc, argv, "estimator_regression"))
    return *status;
  if (model_dir.empty())
    model_dir = (std::filesystem::temp_directory_path() / "hookfuse_estimator_regression").string();

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
            hf::GradientDescentOptimizer(params.learning_rate).minimize(loss, vars.global_step()),
        .eval_metric_ops = hf::eval_metric_ops(
            hf::metric<"mae">(hf::metrics::MeanAbsoluteError{}, y, predictions))};
  };

  const std::array<float, 4> xs{1, 2, 3, 4};
  const std::array<float, 4> ys{2, 4, 6, 8};
  const auto train_fn = hf::numpy_input_fn<X, Y>(
      xs.data(), 4, ys.data(),
      {.batch_size = 1, .num_epochs = std::nullopt, .shuffle = true, .seed = 7});
  const auto eval_fn = hf::numpy_input_fn<X, Y>(
      xs.data(), 4, ys.data(), {.batch_size = 4, .num_epochs = 1, .shuffle = false});

  hf::Estimator estimator(model_fn, hf::RunConfig{.model_dir = model_dir}, Params{learning_rate});
  for (int round = 0; round < 2; ++round) {
    estimator.train(train_fn, {.steps = steps});
    const hf::EvalResult r = estimator.evaluate(eval_fn);
    std::printf("global_step: %lld loss: %.6g mae: %.6g\n", static_cast<long long>(r.global_step),
                static_cast<double>(r.loss()), static_cast<double>(r.at("mae")));
  }
  const std::array<float, 2> new_xs{5, 6};
  for (const auto& p : estimator.predict(hf::numpy_input_fn<X, Y>(
           new_xs.data(), 2, nullptr, {.batch_size = 2, .num_epochs = 1, .shuffle = false})))
    std::printf("prediction: %.4f\n", p.get<"predictions">().item());
  return 0;
}
