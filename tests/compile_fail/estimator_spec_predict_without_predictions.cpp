// expect: EstimatorSpec for ModeKeys::PREDICT has no predictions
// A model_fn's spec for PREDICT without predictions: TensorFlow raises ValueError('Missing
// predictions.') at run time; here the spec's type does not compile, and the message names the
// field and the mode.
// Control: tests/compile_ok/estimator_spec_predict_without_predictions.cpp (predictions given).
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

int main() {
  hf::nn::VariableStore vars;
  hf::Placeholder<"x", float, 1> x;
  auto& w = vars.variable<"w", float, 1, 1>();
  auto loss = hf::named<"loss">(hf::reduce_mean(hf::matmul(x, w)));
  auto spec = hf::EstimatorSpec{.mode = hf::ModeKeys::PREDICT, .loss = loss};
  (void)spec;
}
