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

// --- slice_cols (x[:, begin:begin + count]) ------------------------------------------------------

TEMPLATE_TEST_CASE("gradcheck: slice_cols", "[autodiff][gradcheck]", HF_MODES) {
  Dense<TestType, 6, 8, 7> f;
  // columns 2..4 of softmax(x.w + b), weighted by columns 0..2 of r
  f.check("slice_cols<2, 3>(softmax(x.w + b))",
          hf::reduce_sum(hf::multiply(hf::slice_cols<2, 3>(hf::softmax(hf::matmul(f.x, f.w) + f.b)),
                                      hf::slice_cols<0, 3>(f.r))),
          f.w, f.b);
}
