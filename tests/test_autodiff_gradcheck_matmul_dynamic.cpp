// tests/test_autodiff_gradcheck_matmul_dynamic.cpp: finite-difference gradient checks of matmul in
// both operand positions, with the batch size known at run time (fixed Variables), on every product
// path (GEMM, coefficient-based, vector-matrix, matrix-vector).
//
// The gradient checks are split over tests/test_autodiff_gradcheck_*.cpp, by op family and for
// matmul by size mode, so that each file compiles quickly; the size modes, the models and the
// check are in gradcheck_fixture.hpp.
#include "gradcheck_fixture.hpp"

using hookfuse_test::check_matmul_dynamic;
using hookfuse_test::DynamicBatch;

// --- matmul, dynamic batch -----------------------------------------------------------------------

// The other size modes are in test_autodiff_gradcheck_matmul_fixed.cpp and
// test_autodiff_gradcheck_matmul_all_dynamic.cpp.
TEMPLATE_TEST_CASE("gradcheck: matmul", "[autodiff][gradcheck]", DynamicBatch) {
  check_matmul_dynamic<TestType>();
}
