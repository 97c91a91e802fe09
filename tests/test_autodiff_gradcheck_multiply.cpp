// tests/test_autodiff_gradcheck_multiply.cpp: finite-difference gradient checks of multiply
// (elementwise) and scale.
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

// --- multiply, scale -----------------------------------------------------------------------------

TEMPLATE_TEST_CASE("gradcheck: multiply (elementwise)", "[autodiff][gradcheck]", HF_MODES) {
  Dense<TestType, 6, 8, 7> f;
  auto [x, w, w2, r] = std::tie(f.x, f.w, f.w2, f.r);
  f.check("multiply(x.w, x.w2)",
          hf::reduce_sum(hf::multiply(hf::multiply(hf::matmul(x, w), hf::matmul(x, w2)), r)), w,
          w2);
  f.check("x.w * x.w2", hf::reduce_sum(hf::multiply(hf::matmul(x, w) * hf::matmul(x, w2), r)), w,
          w2);
}

TEMPLATE_TEST_CASE("gradcheck: scale", "[autodiff][gradcheck]", HF_MODES) {
  Dense<TestType, 6, 8, 7> f;
  auto [x, w, r] = std::tie(f.x, f.w, f.r);
  f.check("scale(x.w, 2.5)", hf::reduce_sum(hf::multiply(hf::scale(hf::matmul(x, w), 2.5), r)), w);
  f.check("x.w * 2.0", hf::reduce_sum(hf::multiply(hf::matmul(x, w) * 2.0, r)), w);
  f.check("-0.75 * x.w", hf::reduce_sum(hf::multiply(-0.75 * hf::matmul(x, w), r)), w);
}

// Operators on bare Variables and Placeholders, as on TensorFlow tensors (`x * 0.5`, `w + w2`),
// not only on expressions built from them.
TEMPLATE_TEST_CASE("gradcheck: operators on bare Variables and Placeholders",
                   "[autodiff][gradcheck]", HF_MODES) {
  Dense<TestType, 6, 8, 7> f;
  auto [x, w, w2, r] = std::tie(f.x, f.w, f.w2, f.r);
  f.check("matmul(x * 0.5, w * -1.5)",
          hf::reduce_sum(hf::multiply(hf::matmul(x * 0.5, w * -1.5), r)), w);
  f.check("matmul(2.0 * x, w + w2) * r", hf::reduce_sum(hf::matmul(2.0 * x, w + w2) * r), w, w2);
  f.check("matmul(x, w - w2 * w) * r", hf::reduce_sum(hf::matmul(x, w - w2 * w) * r), w, w2);
  f.check("r - matmul(x, w)", hf::reduce_sum(hf::multiply(r - hf::matmul(x, w), r)), w);
}
