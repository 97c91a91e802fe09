// examples/estimator_mlp: 784 -> 256 ReLU -> 10 under the Estimator, trained twice (the second
// run warm-started from the first by a VariableInitializationHook), then evaluate and predict.
//
// The TensorFlow 1.x program it mirrors (in outline):
//   def model_fn(features, labels, mode):
//     weights = tf.compat.v1.get_variable(
//         "weights", [784, 256], initializer=tf.compat.v1.truncated_normal_initializer(stddev=1))
//     biases = tf.compat.v1.get_variable("biases", [256], initializer=tf.zeros_initializer())
//     hidden = tf.nn.relu(tf.matmul(features["x"], weights) + biases)
//     logits = tf.compat.v1.layers.dense(
//         hidden, 10, kernel_initializer=tf.compat.v1.truncated_normal_initializer(stddev=1))
//     predictions = tf.argmax(logits, 1)
//     if mode == tf.estimator.ModeKeys.PREDICT:
//       return tf.estimator.EstimatorSpec(mode, predictions={"classes": predictions})
//     loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
//     accuracy = tf.compat.v1.metrics.accuracy(labels, predictions)
//     if mode == tf.estimator.ModeKeys.EVAL:
//       return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
//     tf.compat.v1.summary.scalar("train_accuracy", accuracy[1])
//     tf.identity(accuracy[1], name="train_accuracy")
//     train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
//         loss, tf.compat.v1.train.get_global_step())
//     return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
//
//   class VariableInitializationHook(tf.estimator.SessionRunHook):
//     def begin(self):
//       tf.compat.v1.train.init_from_checkpoint(tf.train.latest_checkpoint(dir), {"/": "/"})
//
//   x = np.random.rand(1000, 784).astype(np.float32); y = np.random.randint(0, 10, 1000)
//   hooks = [LoggingTensorHook(["train_accuracy"], every_n_iter=100),
//            CheckpointSaverHook(model_dir, save_steps=1000), StopAtStepHook(last_step=10000)]
//   estimator.train(numpy_input_fn({"x": x}, y, batch_size=100, num_epochs=None,
//                                  shuffle=True), hooks=hooks)
//   estimator2.train(..., hooks=hooks + [VariableInitializationHook()])   # warm-started
//   estimator2.evaluate(...); estimator2.predict(...)
//
// What differs, and why:
//  - The tensor the LoggingTensorHook fetches is named in EstimatorSpec::training_tensors
//    (hookfuse's model is the loss's expression; TF fetches any tensor of the graph by name).
//    It is the batch's accuracy (hf::accuracy), not tf.metrics.accuracy's running value over
//    the runs that compute it (metrics::update_op would give that), so each logged value is
//    the accuracy of that step's batch under the weights before its update.
//  - The CheckpointSaverHook is RunConfig's (save_checkpoints_steps = 1000): TF's Estimator
//    replaces its own saver hook by the caller's, hookfuse's would add a second one.
//  - VariableInitializationHook's checkpoint is resolved before training (latest_checkpoint of
//    the first run's directory): none is an error naming the directory, exit status 1, where
//    the TF program silently keeps its random weights. The hook sets the weights in
//    after_create_session (hooks/variable_initialization_hook.hpp),
//    after the session's first checkpoint: model.ckpt-0 of the second run holds the random
//    initial weights (TF's holds the warm-started ones, as init_from_checkpoint changes the
//    initializers).
//  - The random data are drawn by std::mt19937_64 (seed 0), not numpy's generator.
//  - --data_dir DIR trains on Fashion-MNIST (pixels / 255) and evaluates on its test set;
//    --kernel_init glorot uses glorot_uniform (TF's default) for both kernels.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <hookfuse/data/idx.hpp>
#include <hookfuse/hookfuse.hpp>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "../cli_checks.hpp"

namespace hf = hookfuse;

namespace {

using X = hf::Placeholder<"x", float, 784>;             // [batch, 784] float32
using Y = hf::Placeholder<"labels", std::int32_t, 1>;  // [batch] int32 classes 0..9

/// Both kernels' initializer: truncated_normal(stddev 1), as the TF program, or glorot_uniform.
struct KernelInit {
  bool glorot = false;
  template <class M>
  void operator()(M& m, std::string_view name) const {
    if (glorot)
      hf::nn::glorot_uniform{}(m, name);
    else
      hf::nn::truncated_normal{.stddev = 1.0}(m, name);
  }
};

struct Params {
  KernelInit kernel_init;
};

auto model_fn = [](X x, Y labels, auto mode, const Params& params, auto& vars) {
  auto& weights = hf::nn::get_variable<"weights", float>(vars, 784, 256, params.kernel_init);
  auto& biases = hf::nn::get_variable<"biases", float, 1>(vars, 1, 256, hf::nn::zeros{});
  auto& dense = hf::nn::get_layer<hf::nn::Dense<"dense", float>>(vars, "dense", 256, 10,
                                                                 params.kernel_init);
  auto hidden = hf::relu(hf::matmul(x, weights) + biases);
  auto logits = hf::named<"logits">(dense(hidden));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  return hf::EstimatorSpec{
      .mode = mode,
      .predictions = hf::predictions(hf::named<"classes">(hf::argmax(logits))),
      .loss = loss,
      .train_op = hf::GradientDescentOptimizer(0.1).minimize(loss, vars.global_step()),
      .eval_metric_ops =
          hf::eval_metric_ops(hf::metric<"accuracy">(hf::metrics::Accuracy{}, labels, logits)),
      .training_tensors = hf::training_tensors(hf::summary::scalar<"train_accuracy">(
          hf::named<"train_accuracy">(hf::accuracy(labels, logits))))};
};

/// StderrLogger's lines, also keeping the value of every "train_accuracy = X" line logged.
struct TeeLogger {
  std::vector<double>* train_accuracy;
  void log(hf::Severity s, std::string_view line) const {
    hf::StderrLogger{}.log(s, line);
    constexpr std::string_view key = "train_accuracy = ";
    if (line.substr(0, key.size()) == key)
      train_accuracy->push_back(std::stod(std::string(line.substr(key.size()))));
  }
};

using LogHook = hf::BasicLoggingTensorHook<hf::LoggingPolicies<hf::SteadyClock, TeeLogger>,
                                           "train_accuracy">;

struct Data {
  std::vector<float> x;             // [n, 784], example-major
  std::vector<std::int32_t> y;      // [n]
  std::int64_t size() const { return static_cast<std::int64_t>(y.size()); }
};

/// The program's own data: n x 784 uniform [0, 1) features and uniform labels 0..9, seed 0.
Data make_random_data(std::int64_t n) {
  std::mt19937_64 rng(0);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::uniform_int_distribution<std::int32_t> c(0, 9);
  Data d;
  d.x.resize(static_cast<std::size_t>(n * 784));
  for (float& v : d.x) v = u(rng);
  d.y.resize(static_cast<std::size_t>(n));
  for (std::int32_t& v : d.y) v = c(rng);
  return d;
}

Data from_idx(const hf::data::Dataset& ds) {
  Data d;
  d.x.reserve(ds.images.pixels.size());
  for (std::uint8_t p : ds.images.pixels) d.x.push_back(static_cast<float>(p) / 255.0f);
  d.y.assign(ds.labels.labels.begin(), ds.labels.labels.end());
  return d;
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"784 -> 256 ReLU -> 10 with the Estimator, trained, warm-started, evaluated"};
  std::string data_dir;
  std::int64_t max_steps = 10000;
  std::int64_t batch_size = 100;
  std::string model_dir = "/tmp/estimator_mlp";
  std::string kernel_init = "truncated_normal";
  std::string warm_start_from;
  app.add_option("--data_dir", data_dir,
                 "directory with the Fashion-MNIST IDX files (default: the program's own random "
                 "data, 1000 x 784)")
      ->check(example_cli::non_empty_path());
  app.add_option("--max_steps", max_steps, "StopAtStepHook's last_step, per run (default 10000)")
      ->check(example_cli::integer_in(std::int64_t{1}, std::int64_t{100000000}));
  app.add_option("--batch_size", batch_size, "training batch size (default 100)")
      ->check(example_cli::integer_in(std::int64_t{1}, std::int64_t{60000}));
  app.add_option("--model_dir", model_dir,
                 "directory of both runs: <model_dir>/first and <model_dir>/warm, removed first "
                 "(default /tmp/estimator_mlp)")
      ->check(example_cli::non_empty_path());
  app.add_option("--kernel_init", kernel_init,
                 "both kernels' initializer: truncated_normal (stddev 1, as the TF program) or "
                 "glorot (glorot_uniform, TF's default)")
      ->check(CLI::IsMember({"truncated_normal", "glorot"}));
  app.add_option("--warm_start_from", warm_start_from,
                 "directory whose latest checkpoint warm-starts the second run (default: the "
                 "first run's, <model_dir>/first)")
      ->check(example_cli::non_empty_path());
  if (const auto status = example_cli::parse(app, argc, argv, "estimator_mlp")) return *status;

  Data train, test;
  if (!data_dir.empty()) {
    try {
      train = from_idx(hf::data::load_fashion_mnist(data_dir, hf::data::Split::train));
      test = from_idx(hf::data::load_fashion_mnist(data_dir, hf::data::Split::test));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "estimator_mlp: --data_dir %s: %s\n", data_dir.c_str(), e.what());
      return 2;
    }
  } else {
    train = make_random_data(1000);
    test = train;  // the TF program evaluates on its training data
  }
  if (batch_size > train.size()) {
    std::fprintf(stderr, "estimator_mlp: --batch_size %lld: larger than the %lld examples\n",
                 static_cast<long long>(batch_size), static_cast<long long>(train.size()));
    return 2;
  }
  std::printf("data: %s, train %lld, test %lld examples; kernel_init: %s; batch_size: %lld\n",
              data_dir.empty() ? "random (seed 0)" : "Fashion-MNIST",
              static_cast<long long>(train.size()), static_cast<long long>(test.size()),
              kernel_init.c_str(), static_cast<long long>(batch_size));

  const std::filesystem::path root(model_dir);
  const std::string first_dir = (root / "first").string();
  const std::string warm_dir = (root / "warm").string();
  const Params params{KernelInit{kernel_init == "glorot"}};
  // Both runs start fresh: the program owns these two directories (TF's program uses new ones).
  for (const std::string& d : {first_dir, warm_dir}) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
    if (ec) {
      std::fprintf(stderr, "estimator_mlp: --model_dir %s: cannot remove %s: %s\n",
                   model_dir.c_str(), d.c_str(), ec.message().c_str());
      return 1;
    }
  }

  const auto train_input_fn = hf::numpy_input_fn<X, Y>(
      train.x.data(), train.size(), train.y.data(),
      {.batch_size = batch_size, .num_epochs = std::nullopt, .shuffle = true, .seed = 1});
  const auto eval_input_fn = hf::numpy_input_fn<X, Y>(
      test.x.data(), test.size(), test.y.data(),
      {.batch_size = 1000, .num_epochs = 1, .shuffle = false});
  auto make_hooks = [&](std::vector<double>* logged) {
    return hf::hooks(LogHook({.every_n_iter = 100}, {}, {}, TeeLogger{logged}),
                     hf::StopAtStepHook({.last_step = max_steps}));
  };
  const auto config = [&](const std::string& dir) {
    return hf::RunConfig{.model_dir = dir, .save_checkpoints_steps = 1000};
  };
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };

  // 1. Train from the initializers.
  std::vector<double> logged1;
  hf::Estimator first(model_fn, config(first_dir), params);
  auto t = Clock::now();
  first.train(train_input_fn, {}, make_hooks(&logged1));
  const double first_secs = seconds_since(t);
  const hf::EvalResult r1 = first.evaluate(eval_input_fn);
  std::printf("first run: global_step %lld, train %.1f s, accuracy %.6f, loss %.6f\n",
              static_cast<long long>(r1.global_step), first_secs,
              static_cast<double>(r1.at("accuracy")), static_cast<double>(r1.loss()));

  // 2. Train again from the first run's weights (VariableInitializationHook).
  const std::string from = warm_start_from.empty() ? first_dir : warm_start_from;
  const auto latest = hf::io::latest_checkpoint(std::filesystem::path(from));
  if (!latest) {
    std::fprintf(stderr,
                 "estimator_mlp: --warm_start_from %s: no checkpoint to warm-start from "
                 "(tf.train.latest_checkpoint is None)\n",
                 from.c_str());
    return 1;
  }
  std::vector<double> logged2;
  hf::Estimator warm(model_fn, config(warm_dir), params);
  t = Clock::now();
  warm.train(train_input_fn, {},
             hf::hooks(LogHook({.every_n_iter = 100}, {}, {}, TeeLogger{&logged2}),
                       hf::StopAtStepHook({.last_step = max_steps}),
                       hf::VariableInitializationHook<>(latest->string(), {{"/", "/"}})));
  const double warm_secs = seconds_since(t);
  if (logged2.empty()) {
    std::fprintf(stderr, "estimator_mlp: the warm-started run logged no train_accuracy\n");
    return 1;
  }
  std::printf("warm-started from %s\n", latest->string().c_str());
  std::printf("first run's evaluate accuracy: %.6f\n", static_cast<double>(r1.at("accuracy")));
  std::printf("warm-started run's first logged train_accuracy: %.6f\n", logged2.front());

  // 3. Evaluate and predict with the warm-started run's model.
  const hf::EvalResult r2 = warm.evaluate(eval_input_fn);
  std::printf("warm-started run: global_step %lld, train %.1f s, accuracy %.6f, loss %.6f\n",
              static_cast<long long>(r2.global_step), warm_secs,
              static_cast<double>(r2.at("accuracy")), static_cast<double>(r2.loss()));
  std::printf("test_accuracy: %.4f\n", static_cast<double>(r2.at("accuracy")));
  const auto predict_input_fn = hf::numpy_input_fn<X, Y>(
      test.x.data(), 5, nullptr, {.batch_size = 5, .num_epochs = 1, .shuffle = false});
  std::printf("predicted classes (first 5):");
  for (const auto& p : warm.predict<"classes">(predict_input_fn))
    std::printf(" %d", static_cast<int>(p.get<"classes">().at(0, 0)));
  std::printf("\nlabels            (first 5):");
  for (std::size_t i = 0; i < 5; ++i) std::printf(" %d", static_cast<int>(test.y[i]));
  std::printf("\n");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "estimator_mlp: %s\n", e.what());
  return 1;
}
