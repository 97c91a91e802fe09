// Control for tests/compile_fail/estimator_spec_predict_without_predictions.cpp: the same spec
// with its predictions compiles.
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

int main() {
  hf::nn::VariableStore vars;
  hf::Placeholder<"x", float, 1> x;
  auto& w = vars.variable<"w", float, 1, 1>();
  auto predictions = hf::named<"predictions">(hf::matmul(x, w));
  auto spec = hf::EstimatorSpec{.mode = hf::ModeKeys::PREDICT, .predictions = predictions};
  (void)spec;
}
