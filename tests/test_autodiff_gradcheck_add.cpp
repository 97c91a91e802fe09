// tests/test_autodiff_gradcheck_add.cpp: finite-difference gradient checks of add and subtract of
// two tensors of one shape (the [1, c] row broadcast: test_autodiff_gradcheck_add_broadcast.cpp).
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

// --- add, subtract -------------------------------------------------------------------------------

TEMPLATE_TEST_CASE("gradcheck: add and subtract, same shape", "[autodiff][gradcheck]", HF_MODES) {
  Dense<TestType, 6, 8, 7> f;
  auto [x, w, w2, r] = std::tie(f.x, f.w, f.w2, f.r);
  f.check("add(x.w, x.w2)",
          hf::reduce_sum(hf::multiply(hf::add(hf::matmul(x, w), hf::matmul(x, w2)), r)), w, w2);
  f.check("x.w + x.w2", hf::reduce_sum(hf::multiply(hf::matmul(x, w) + hf::matmul(x, w2), r)), w,
          w2);
  f.check("subtract(x.w, x.w2)",
          hf::reduce_sum(hf::multiply(hf::subtract(hf::matmul(x, w), hf::matmul(x, w2)), r)), w,
          w2);
  f.check("x.w - x.w2", hf::reduce_sum(hf::multiply(hf::matmul(x, w) - hf::matmul(x, w2), r)), w,
          w2);
}
