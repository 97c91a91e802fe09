// tests/test_autodiff_gradcheck_checker.cpp: the gradient checker itself (gradcheck.hpp) rejects
// wrong gradients.
//
// The gradient checks of the ops are in the other tests/test_autodiff_gradcheck_*.cpp files, one
// per op family; their models and size modes are in gradcheck_fixture.hpp.
#include <limits>
#include <string>
#include <utility>

#include "gradcheck_fixture.hpp"

namespace hf = hookfuse;
using hookfuse_test::AllDynamic;
using hookfuse_test::analytic_gradient;
using hookfuse_test::Dense;
using hookfuse_test::kGradTolerance;
using hookfuse_test::max_relative_error;
using hookfuse_test::numeric_gradient;

// --- the checker itself --------------------------------------------------------------------------

TEST_CASE("gradcheck: the checker rejects wrong gradients", "[autodiff][gradcheck]") {
  Dense<AllDynamic, 6, 8, 7> f;
  auto g = hf::bind(8, hf::reduce_sum(hf::multiply(hf::tanh(hf::matmul(f.x, f.w)), f.r)));
  f.feed_all(g);
  const Eigen::MatrixXd an = analytic_gradient(g, f.w);
  const Eigen::MatrixXd fd = numeric_gradient(g, f.w);
  REQUIRE(max_relative_error(fd, an) < kGradTolerance);

  const auto rejects = [&](Eigen::MatrixXd wrong) {
    return max_relative_error(fd, wrong) >= kGradTolerance;
  };
  Eigen::MatrixXd wrong = an;
  wrong(1, 2) *= 1 + 1e-5;  // one element slightly off
  CHECK(rejects(wrong));
  wrong = an;
  std::swap(wrong(0, 1), wrong(1, 0));  // two elements exchanged
  CHECK(rejects(wrong));
  CHECK(rejects(2 * an));                                       // scaled
  CHECK(rejects(-an));                                          // wrong sign
  CHECK(rejects(Eigen::MatrixXd::Zero(an.rows(), an.cols())));  // missing
  CHECK(rejects(an.topRows(2)));                                // wrong shape
  wrong = an;
  wrong(0, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK(rejects(wrong));
  // An element whose true value is ~0 is held to an absolute error of 1e-12.
  CHECK(hookfuse_test::relative_error(0.0, 2e-12) >= kGradTolerance);
  CHECK(hookfuse_test::relative_error(1e-9, 1e-9 + 2e-12) >= kGradTolerance);
}
