// Control for tests/compile_fail/estimator_spec_eval_without_loss.cpp: the same spec with its
// loss compiles.
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

int main() {
  hf::nn::VariableStore vars;
  hf::Placeholder<"x", float, 1> x;
  auto& w = vars.variable<"w", float, 1, 1>();
  auto predictions = hf::named<"predictions">(hf::matmul(x, w));
  auto loss = hf::named<"loss">(hf::reduce_mean(predictions));
  auto spec =
      hf::EstimatorSpec{.mode = hf::ModeKeys::EVAL, .predictions = predictions, .loss = loss};
  (void)spec;
}
