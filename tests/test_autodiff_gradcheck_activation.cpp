// tests/test_autodiff_gradcheck_activation.cpp: finite-difference gradient checks of the
// activations: relu, sigmoid, tanh (elementwise).
//
// One op family of the gradient checks, split over tests/test_autodiff_gradcheck_*.cpp so that
// each file compiles quickly; the size modes, models and the check are in gradcheck_fixture.hpp.
#include "gradcheck_fixture.hpp"

using hookfuse_test::AllDynamic;
using hookfuse_test::check_unary;
using hookfuse_test::check_unary_dense;
using hookfuse_test::DynamicBatch;
using hookfuse_test::FixedSizes;

// --- activations ---------------------------------------------------------------------------------

TEMPLATE_TEST_CASE("gradcheck: relu", "[autodiff][gradcheck]", HF_MODES) {
  // Inputs at least 0.25 from the kink at 0, both signs.
  check_unary<TestType>("relu", HF_OP(relu), 0.5, 1.5, true);
}
TEMPLATE_TEST_CASE("gradcheck: sigmoid", "[autodiff][gradcheck]", HF_MODES) {
  check_unary<TestType>("sigmoid", HF_OP(sigmoid), 0.0, 2.0, true);
  check_unary_dense<TestType>("sigmoid", HF_OP(sigmoid));
}
TEMPLATE_TEST_CASE("gradcheck: tanh", "[autodiff][gradcheck]", HF_MODES) {
  check_unary<TestType>("tanh", HF_OP(tanh), 0.0, 2.0, true);
  check_unary_dense<TestType>("tanh", HF_OP(tanh));
}
