// tests/test_autodiff_gradcheck_cross_entropy.cpp: finite-difference gradient checks of
// sparse_softmax_cross_entropy (a linear model and a two-layer network).
//
// One op family of the gradient checks, split over tests/test_autodiff_gradcheck_*.cpp so that
// each file compiles quickly; the size modes, models and the check are in gradcheck_fixture.hpp.
#include "gradcheck_fixture.hpp"

namespace hf = hookfuse;
using hookfuse_test::AllDynamic;
using hookfuse_test::Bias;
using hookfuse_test::Dense;
using hookfuse_test::DynamicBatch;
using hookfuse_test::FixedSizes;
using hookfuse_test::make_var;
using hookfuse_test::randomize;
using hookfuse_test::Rng;
using hookfuse_test::Var;

// --- sparse softmax cross entropy ----------------------------------------------------------------

TEMPLATE_TEST_CASE("gradcheck: sparse_softmax_cross_entropy", "[autodiff][gradcheck]", HF_MODES) {
  using M = TestType;
  Dense<M, 6, 8, 7> f;
  f.check("sparse_softmax_cross_entropy(y, x.w + b)",
          hf::sparse_softmax_cross_entropy(f.y, hf::matmul(f.x, f.w) + f.b), f.w, f.b);

  // A two-layer network, 8 -> 6 tanh -> 7 classes (the shapes of the matmul checks).
  Rng rng(0xc1a55e5);
  auto m1 = make_var<Var<M, "m1", 8, 6>>(8, 6);
  auto mb1 = make_var<Bias<M, "mb1", 6>>(1, 6);
  auto m2 = make_var<Var<M, "m2", 6, 7>>(6, 7);
  auto mb2 = make_var<Bias<M, "mb2", 7>>(1, 7);
  randomize(m1.value, rng, 0.05, 0.4, true);
  randomize(mb1.value, rng, 0.0, 0.3, true);
  randomize(m2.value, rng, 0.1, 0.8, true);
  randomize(mb2.value, rng, 0.0, 0.3, true);
  auto logits = hf::matmul(hf::tanh(hf::matmul(f.x, m1) + mb1), m2) + mb2;
  f.check("sparse_softmax_cross_entropy(y, mlp(x))", hf::sparse_softmax_cross_entropy(f.y, logits),
          m1, mb1, m2, mb2);
}
