// Control for tests/compile_fail/train_and_evaluate_empty_eval_specs.cpp: the same call with
// one EvalSpec in eval_specs(...) compiles.
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;
using X = hf::Placeholder<"x", float, 1>;
using Y = hf::Placeholder<"y", float, 1>;

int main() {
  auto model_fn = [](X x, Y y, auto mode, auto& vars) {
    auto& w = hf::nn::get_variable<"w", float, 1, 1>(vars, hf::nn::zeros{});
    auto loss = hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, w)));
    return hf::EstimatorSpec{
        .mode = mode,
        .loss = loss,
        .train_op = hf::GradientDescentOptimizer(0.1).minimize(loss, vars.global_step())};
  };
  static const float xs[1] = {1};
  static const float ys[1] = {2};
  const auto input_fn =
      hf::numpy_input_fn<X, Y>(xs, 1, ys, {.batch_size = 1, .num_epochs = 1, .shuffle = false});
  hf::Estimator estimator(model_fn, hf::RunConfig{.model_dir = "unused"});
  (void)hf::train_and_evaluate(estimator, hf::TrainSpec(input_fn, 1),
                               hf::eval_specs(hf::EvalSpec(input_fn)));
}
