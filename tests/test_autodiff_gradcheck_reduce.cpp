// tests/test_autodiff_gradcheck_reduce.cpp: finite-difference gradient checks of the reductions
// reduce_sum and reduce_mean and of mean_squared_error.
//
// One op family of the gradient checks, split over tests/test_autodiff_gradcheck_*.cpp so that
// each file compiles quickly; the size modes, models and the check are in gradcheck_fixture.hpp.
#include <tuple>

#include "gradcheck_fixture.hpp"

namespace hf = hookfuse;
using hookfuse_test::AllDynamic;
using hookfuse_test::Dense;
using hookfuse_test::DynamicBatch;
using hookfuse_test::FixedSizes;

// --- reductions, mean squared error --------------------------------------------------------------

TEMPLATE_TEST_CASE("gradcheck: reduce_sum and reduce_mean", "[autodiff][gradcheck]", HF_MODES) {
  Dense<TestType, 6, 8, 7> f;
  auto [x, w, b, r] = std::tie(f.x, f.w, f.b, f.r);
  f.check("reduce_sum(x.w + b)", hf::reduce_sum(hf::matmul(x, w) + b), w, b);
  f.check("reduce_mean(x.w + b)", hf::reduce_mean(hf::matmul(x, w) + b), w, b);
  f.check("reduce_mean(multiply(x.w + b, r))",
          hf::reduce_mean(hf::multiply(hf::matmul(x, w) + b, r)), w, b);
  f.check("reduce_mean(square(x.w + b))", hf::reduce_mean(hf::square(hf::matmul(x, w) + b)), w, b);
}

TEMPLATE_TEST_CASE("gradcheck: mean_squared_error", "[autodiff][gradcheck]", HF_MODES) {
  Dense<TestType, 6, 8, 7> f;
  auto [x, w, w2, b, t] = std::tie(f.x, f.w, f.w2, f.b, f.t);
  f.check("mean_squared_error(t, x.w + b)", hf::mean_squared_error(t, hf::matmul(x, w) + b), w, b);
  // A gradient on the labels side too.
  f.check("mean_squared_error(x.w2, x.w + b)",
          hf::mean_squared_error(hf::matmul(x, w2), hf::matmul(x, w) + b), w, w2, b);
}
