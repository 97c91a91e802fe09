// Estimator train / evaluate: y = Wx + b through a model_fn, step accounting, the files written,
// TensorFlow's log lines. Expected numbers are worked out in the tests by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <hookfuse/estimator/estimator.hpp>
#include <hookfuse/hookfuse.hpp>
#include <set>
#include <string>
#include <vector>

#include "capturing_logger.hpp"
#include "temp_dir.hpp"

namespace hf = hookfuse;
namespace fs = std::filesystem;
using hookfuse_test::CapturingLogger;
using hookfuse_test::Lines;
using hookfuse_test::TempDir;

namespace {

using X = hf::Placeholder<"x", float, 1>;  // [batch, 1]
using Y = hf::Placeholder<"y", float, 1>;  // [batch, 1]

struct Params {
  double learning_rate = 0.01;
};

// y = W x + b, W and b start at 0 (TF: get_variable(initializer=zeros)).
auto linear_model_fn = [](X x, Y y, auto mode, const Params& params, hf::nn::VariableStore& vars) {
  auto& W = vars.variable<"W", float, 1, 1, 2>(hf::nn::zeros{});
  auto& b = vars.variable<"b", float, 1, 1, 1>(hf::nn::zeros{});
  auto predictions = hf::named<"predictions">(hf::matmul(x, W) + b);
  auto loss = hf::named<"loss">(hf::mean_squared_error(y, predictions));
  return hf::EstimatorSpec{
      .mode = mode,
      .predictions = predictions,
      .loss = loss,
      .train_op = hf::GradientDescentOptimizer(params.learning_rate).minimize(loss, vars.global_step())};
};

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out.insert(fs::relative(e.path(), dir).string());
  return out;
}

bool has_line(const Lines& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.text == text) return true;
  return false;
}

}  // namespace

TEST_CASE("Estimator trains y = 2x on four points and evaluates the mean squared error") {
  TempDir dir("estimator");
  const float xs[4] = {1, 2, 3, 4};
  const float ys[4] = {2, 4, 6, 8};
  Lines lines;
  hf::Estimator estimator(
      linear_model_fn,
      hf::RunConfig<hf::FakeClock, CapturingLogger>{.model_dir = dir.path.string(),
                                                     .logger = CapturingLogger{&lines}},
      Params{0.01});
  // numpy_input_fn(x, y, batch_size=1, num_epochs=None, shuffle=True)
  estimator.train(hf::numpy_input_fn<X, Y>(xs, 4, ys,
                                           {.batch_size = 1, .num_epochs = std::nullopt,
                                            .shuffle = true, .seed = 3}),
                  {.steps = 1000});
  CHECK(has_line(lines, "Saving checkpoints for 1000 into " + (dir.path / "model.ckpt").string() + "."));
  CHECK(fs::exists(dir.path / "model.ckpt-1000.index"));

  lines.clear();
  const hf::EvalResult r = estimator.evaluate(
      hf::numpy_input_fn<X, Y>(xs, 4, ys, {.batch_size = 1, .num_epochs = 1, .shuffle = false}));
  CHECK(r.global_step == 1000);
  // W and b as restored from the checkpoint, read independently of the Estimator.
  const auto reader = hf::io::load_checkpoint(dir.path / "model.ckpt-1000");
  const float W = reader.get_tensor<float>("W")[0];
  const float b = reader.get_tensor<float>("b")[0];
  CHECK(std::abs(W - 2.0f) < 0.05f);
  CHECK(std::abs(b) < 0.1f);
  // The evaluation loss: batches of one row, so the mean of the four squared errors.
  double mse = 0;
  for (int i = 0; i < 4; ++i) {
    const double e = static_cast<double>(W) * xs[i] + b - ys[i];
    mse += e * e / 4.0;
  }
  CHECK(r.loss() == Approx(mse).epsilon(1e-4));
}
