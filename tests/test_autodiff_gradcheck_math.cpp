// tests/test_autodiff_gradcheck_math.cpp: finite-difference gradient checks of the elementwise
// maths ops exp, log, square.
//
// One op family of the gradient checks, split over tests/test_autodiff_gradcheck_*.cpp so that
// each file compiles quickly; the size modes, models and the check are in gradcheck_fixture.hpp.
#include "gradcheck_fixture.hpp"

using hookfuse_test::AllDynamic;
using hookfuse_test::check_unary;
using hookfuse_test::check_unary_dense;
using hookfuse_test::DynamicBatch;
using hookfuse_test::FixedSizes;

// --- elementwise maths ---------------------------------------------------------------------------

TEMPLATE_TEST_CASE("gradcheck: exp", "[autodiff][gradcheck]", HF_MODES) {
  check_unary<TestType>("exp", HF_OP(exp), 0.0, 1.5, true);
  check_unary_dense<TestType>("exp", HF_OP(exp));
}
TEMPLATE_TEST_CASE("gradcheck: log", "[autodiff][gradcheck]", HF_MODES) {
  // Inputs in [0.25, 1.75]: positive.
  check_unary<TestType>("log", HF_OP(log), 0.5, 1.5, false);
}
TEMPLATE_TEST_CASE("gradcheck: square", "[autodiff][gradcheck]", HF_MODES) {
  check_unary<TestType>("square", HF_OP(square), 0.0, 1.5, true);
  check_unary_dense<TestType>("square", HF_OP(square));
}
