// Control for tests/compile_fail/estimator_spec_train_without_train_op.cpp: the same spec with
// its train_op compiles.
#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

int main() {
  hf::nn::VariableStore vars;
  hf::Placeholder<"x", float, 1> x;
  auto& w = vars.variable<"w", float, 1, 1>();
  auto loss = hf::named<"loss">(hf::reduce_mean(hf::matmul(x, w)));
  auto spec = hf::EstimatorSpec{
      .mode = hf::ModeKeys::TRAIN,
      .loss = loss,
      .train_op = hf::GradientDescentOptimizer(0.1).minimize(loss, vars.global_step())};
  (void)spec;
}
