// expect: EstimatorSpec for ModeKeys::EVAL has no loss
// A model_fn's spec for EVAL without a loss: TensorFlow raises ValueError('Missing loss.') at
// run time; here the spec's type does not compile, and the message names the field and the mode.
// Control: tests/compile_ok/estimator_spec_eval_without_loss.cpp (loss given).
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

int main() {
  hf::nn::VariableStore vars;
  hf::Placeholder<"x", float, 1> x;
  auto& w = vars.variable<"w", float, 1, 1>();
  auto predictions = hf::named<"predictions">(hf::matmul(x, w));
  auto spec = hf::EstimatorSpec{.mode = hf::ModeKeys::EVAL, .predictions = predictions};
  (void)spec;
}
