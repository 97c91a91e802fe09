// The compiling twin of tests/compile_fail/predict_unknown_key.cpp: a key the spec has.
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;
using X = hf::Placeholder<"x", float, 1>;

int main() {
  auto model_fn = [](X x, auto, auto mode, auto& vars) {
    auto& w = hf::nn::get_variable<"w", float, 1, 1>(vars);
    auto predictions = hf::named<"predictions">(hf::matmul(x, w));
    return hf::EstimatorSpec{.mode = mode, .predictions = predictions};
  };
  hf::Estimator estimator(model_fn, hf::RunConfig{.model_dir = "unused"});
  const float xs[1] = {1};
  for (const auto& p : estimator.predict<"predictions">(
           hf::numpy_input_fn<X>(xs, 1, {.batch_size = 1, .num_epochs = 1, .shuffle = false})))
    (void)p.get<"predictions">();
}
