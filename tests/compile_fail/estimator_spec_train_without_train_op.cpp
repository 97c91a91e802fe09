// expect: EstimatorSpec for ModeKeys::TRAIN has no train_op
// A model_fn's spec for TRAIN without a train_op: TensorFlow raises ValueError('Missing
// train_op.') at run time; here the spec's type does not compile, and the message names the
// field and the mode.
// Control: tests/compile_ok/estimator_spec_train_without_train_op.cpp (train_op given).
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

int main() {
  hf::nn::VariableStore vars;
  hf::Placeholder<"x", float, 1> x;
  auto& w = vars.variable<"w", float, 1, 1>();
  auto loss = hf::named<"loss">(hf::reduce_mean(hf::matmul(x, w)));
  auto spec = hf::EstimatorSpec{.mode = hf::ModeKeys::TRAIN, .loss = loss};
  (void)spec;
}
