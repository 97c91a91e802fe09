// tests/test_autodiff_gradcheck_softmax.cpp: finite-difference gradient checks of softmax.
//
// One op family of the gradient checks, split over tests/test_autodiff_gradcheck_*.cpp so that
// each file compiles quickly; the size modes, models and the check are in gradcheck_fixture.hpp.
#include "gradcheck_fixture.hpp"

namespace hf = hookfuse;
using hookfuse_test::AllDynamic;
using hookfuse_test::Dense;
using hookfuse_test::DynamicBatch;
using hookfuse_test::FixedSizes;

// --- softmax -------------------------------------------------------------------------------------

TEMPLATE_TEST_CASE("gradcheck: softmax", "[autodiff][gradcheck]", HF_MODES) {
  Dense<TestType, 6, 8, 7> f;
  f.check("softmax(x.w + b)",
          hf::reduce_sum(hf::multiply(hf::softmax(hf::matmul(f.x, f.w) + f.b), f.r)), f.w, f.b);
}
