// EstimatorSpec::training_tensors: named tensors of the TRAIN model that hooks passed to
// Estimator::train fetch by name (TF: LoggingTensorHook(["train_accuracy"]) fetching a tensor of
// the graph), and argmax predictions. Expected values are worked out by hand in each test from
// the data and the weights, not taken from the code's output.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <hookfuse/estimator/estimator.hpp>
#include <hookfuse/hookfuse.hpp>
#include <string>
#include <vector>

#include "capturing_logger.hpp"
#include "temp_dir.hpp"

namespace hf = hookfuse;
using hookfuse_test::CapturingLogger;
using hookfuse_test::Lines;
using hookfuse_test::TempDir;

namespace {

using X = hf::Placeholder<"x", float, 2>;           // [batch, 2]
using Y = hf::Placeholder<"y", std::int32_t, 1>;    // [batch] class ids

struct Params {
  double learning_rate = 0.0;
  bool identity = true;  // W = I (logits = x), else W = 0
};

// logits = x W, W [2, 2] (run-time shape); train_accuracy the batch's accuracy.
auto model_fn = [](X x, Y y, auto mode, const Params& params, auto& vars) {
  auto& W = params.identity
                ? hf::nn::get_variable<"W", float>(vars, 2, 2, [](auto& m) { m.setIdentity(); })
                : hf::nn::get_variable<"W", float>(vars, 2, 2, hf::nn::zeros{});
  auto logits = hf::named<"logits">(hf::matmul(x, W));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, logits));
  return hf::EstimatorSpec{
      .mode = mode,
      .predictions = hf::predictions(hf::named<"classes">(hf::argmax(logits))),
      .loss = loss,
      .train_op =
          hf::GradientDescentOptimizer(params.learning_rate).minimize(loss, vars.global_step()),
      .training_tensors =
          hf::training_tensors(hf::named<"train_accuracy">(hf::accuracy(y, logits)))};
};

// The values of the "train_accuracy = X" lines, in order.
std::vector<double> logged_accuracies(const Lines& lines) {
  const std::string key = "train_accuracy = ";
  std::vector<double> out;
  for (const auto& l : lines)
    if (l.text.rfind(key, 0) == 0) out.push_back(std::stod(l.text.substr(key.size())));
  return out;
}

auto make_estimator(const TempDir& dir, Lines& lines, Params params) {
  return hf::Estimator(model_fn,
                       hf::RunConfig<hf::FakeClock, CapturingLogger>{
                           .model_dir = dir.path.string(),
                           .save_checkpoints_steps = 1000,
                           .log_step_count_steps = 0,
                           .logger = CapturingLogger{&lines}},
                       params);
}

using LogHook = hf::BasicLoggingTensorHook<hf::LoggingPolicies<hf::FakeClock, CapturingLogger>,
                                           "train_accuracy">;

}  // namespace

TEST_CASE("training_tensors: LoggingTensorHook logs the batch accuracy at steps 1, 101, 201") {
  TempDir dir("training_tensors");
  Lines lines;
  // W = I and learning rate 0: logits = x, so a row is right when its larger feature is at its
  // label. Six examples in batches of 2, unshuffled, repeated:
  //   batch 0: (0,1)->1 right, (1,0)->0 right   accuracy 1
  //   batch 1: (0,1)->1 right, (0,1)->0 wrong   accuracy 0.5
  //   batch 2: (1,0)->1 wrong, (0,1)->0 wrong   accuracy 0
  // Step s trains on batch (s - 1) mod 3: steps 1, 101, 201 on batches 0, 1, 2.
  const float xs[12] = {0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1};
  const std::int32_t ys[6] = {1, 0, 1, 0, 1, 0};
  auto estimator = make_estimator(dir, lines, Params{.learning_rate = 0.0, .identity = true});
  estimator.train(hf::numpy_input_fn<X, Y>(
                      xs, 6, ys, {.batch_size = 2, .num_epochs = std::nullopt, .shuffle = false}),
                  {.max_steps = 201},
                  hf::hooks(LogHook({.every_n_iter = 100}, {}, {}, CapturingLogger{&lines})));
  const auto logged = logged_accuracies(lines);
  REQUIRE(logged.size() == 3);
  CHECK(logged[0] == 1.0);
  CHECK(logged[1] == 0.5);
  CHECK(logged[2] == 0.0);

  // PREDICT: argmax(logits) = argmax(x) per row; a tie goes to the first column (tf.argmax).
  const float new_xs[8] = {0, 1, 1, 0, 2, 2, -1, -3};
  std::vector<float> classes;
  for (const auto& p : estimator.predict<"classes">(hf::numpy_input_fn<X, Y>(
           new_xs, 4, nullptr, {.batch_size = 4, .num_epochs = 1, .shuffle = false}))) {
    const hf::TensorValue c = p.get<"classes">();
    REQUIRE(c.rows == 1);
    REQUIRE(c.cols == 1);
    classes.push_back(static_cast<float>(c.at(0, 0)));
  }
  CHECK(classes == std::vector<float>{1, 0, 0, 0});
}

TEST_CASE("training_tensors: the logged value is computed before the step's update") {
  TempDir dir("training_tensors_before");
  Lines lines;
  // W = 0, learning rate 1, one batch of two examples, both of class 1:
  //   step 1: every logit 0, argmax 0 (first of a tie): accuracy 0.
  //   update: softmax (0.5, 0.5) - onehot (0, 1) = (0.5, -0.5) per row; dW = x^T (p - y) / 2
  //           = [[0.25, -0.25], [0.25, -0.25]] for x = (1,0), (0,1); W = -dW.
  //   step 2: logits (-0.25, 0.25) for both rows: argmax 1, accuracy 1.
  const float xs[4] = {1, 0, 0, 1};
  const std::int32_t ys[2] = {1, 1};
  auto estimator = make_estimator(dir, lines, Params{.learning_rate = 1.0, .identity = false});
  estimator.train(hf::numpy_input_fn<X, Y>(
                      xs, 2, ys, {.batch_size = 2, .num_epochs = std::nullopt, .shuffle = false}),
                  {.max_steps = 2},
                  hf::hooks(LogHook({.every_n_iter = 1}, {}, {}, CapturingLogger{&lines})));
  const auto logged = logged_accuracies(lines);
  REQUIRE(logged.size() == 2);
  CHECK(logged[0] == 0.0);
  CHECK(logged[1] == 1.0);
  // The trained W, read back from the checkpoint saved at step 2, after the second update:
  // softmax of (-0.25, 0.25) is (1 - s, s), s = 1 / (1 + e^-0.5) = 0.6224593, so p - y =
  // (0.3775407, -0.3775407) per row and each row of W moves by half of it:
  // W = [[-a, a], [-a, a]], a = 0.25 + 0.3775407 / 2 = 0.4387703.
  const auto latest = hf::io::latest_checkpoint(dir.path);
  REQUIRE(latest);
  const hf::io::CheckpointReader reader(*latest);
  const auto w = reader.get_tensor<float>("W");
  REQUIRE(w.size() == 4);
  const double a = 0.25 + 0.5 * (1.0 - 1.0 / (1.0 + std::exp(-0.5)));
  CHECK(w[0] == Approx(-a));
  CHECK(w[1] == Approx(a));
  CHECK(w[2] == Approx(-a));
  CHECK(w[3] == Approx(a));
}
