// tests/test_autodiff_gradcheck_matmul_fixed.cpp: finite-difference gradient checks of matmul in
// both operand positions, with every size a compile-time constant.
//
// The gradient checks are split over tests/test_autodiff_gradcheck_*.cpp, by op family and for
// matmul by size mode, so that each file compiles quickly; the size modes, the models and the
// check are in gradcheck_fixture.hpp.
#include "gradcheck_fixture.hpp"

using hookfuse_test::check_matmul;
using hookfuse_test::FixedSizes;

// --- matmul, fixed sizes -------------------------------------------------------------------------

// The dynamic-size modes are in test_autodiff_gradcheck_matmul_dynamic.cpp (DynamicBatch) and
// test_autodiff_gradcheck_matmul_all_dynamic.cpp (AllDynamic).
TEMPLATE_TEST_CASE("gradcheck: matmul", "[autodiff][gradcheck]", FixedSizes) {
  using M = TestType;
  // Every shape is its own type; fixed products are coefficient-based.
  check_matmul<M, 9, 8, 6, 7>();
  check_matmul<M, 1, 8, 6, 7>();   // one-row operands
  check_matmul<M, 10, 8, 6, 1>();  // one-column result (column-major)
}
