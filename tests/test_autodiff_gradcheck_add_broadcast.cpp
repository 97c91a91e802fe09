// tests/test_autodiff_gradcheck_add_broadcast.cpp: finite-difference gradient checks of add and
// subtract with a [1, c] operand broadcast over the rows of the other (a bias added to a batch).
//
// One op family of the gradient checks, split over tests/test_autodiff_gradcheck_*.cpp so that
// each file compiles quickly; the size modes, models and the check are in gradcheck_fixture.hpp.
#include <string>
#include <tuple>

#include "gradcheck_fixture.hpp"

namespace hf = hookfuse;
using hookfuse_test::AllDynamic;
using hookfuse_test::Dense;
using hookfuse_test::DynamicBatch;
using hookfuse_test::FixedSizes;

// --- add, subtract with a row broadcast ----------------------------------------------------------

TEMPLATE_TEST_CASE("gradcheck: add and subtract, [1, c] row broadcast", "[autodiff][gradcheck]",
                   HF_MODES) {
  Dense<TestType, 6, 8, 7> f;
  auto [x, w, b, r] = std::tie(f.x, f.w, f.b, f.r);
  f.check("add(x.w, b)", hf::reduce_sum(hf::multiply(hf::add(hf::matmul(x, w), b), r)), w, b);
  f.check("x.w + b", hf::reduce_sum(hf::multiply(hf::matmul(x, w) + b, r)), w, b);
  f.check("b + x.w", hf::reduce_sum(hf::multiply(b + hf::matmul(x, w), r)), w, b);
  f.check("x.w - b", hf::reduce_sum(hf::multiply(hf::matmul(x, w) - b, r)), w, b);
  f.check("b - x.w", hf::reduce_sum(hf::multiply(b - hf::matmul(x, w), r)), w, b);
  f.check("subtract(b, x.w)", hf::reduce_sum(hf::multiply(hf::subtract(b, hf::matmul(x, w)), r)), w,
          b);
}
