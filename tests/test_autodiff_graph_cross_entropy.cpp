// tests/test_autodiff_graph_cross_entropy.cpp: sparse softmax cross-entropy in a bound graph:
// a label out of range, hand-computed losses and gradients, logits of +-1000 (split from
// test_autodiff_graph.cpp to keep each file's compile time under a minute).
#include <algorithm>
#include <catch2/catch.hpp>

#include "error_of.hpp"
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "gradcheck.hpp"
#include "hookfuse/autodiff.hpp"

namespace hf = hookfuse;
using Catch::Matchers::Contains;
using hookfuse_test::max_rel_diff;

namespace {

using hookfuse_test::error_of;

}  // namespace

// --- (h), (i), (j) sparse softmax cross-entropy ------------------------------------------------

namespace {
/// Logits are a Variable z [rows, classes] directly, so the test sets them exactly.
template <class S, int Rows, int Classes>
struct DirectLogits {
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"z", S, Rows, Classes> z;
  auto bind() {
    return hf::bind(Rows, hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, z)),
                    hf::named<"softmax">(hf::softmax(z)));
  }
};
}  // namespace

TEST_CASE("graph: a label out of range throws InvalidArgumentError naming the row and value",
          "[autodiff][graph]") {
  DirectLogits<double, 4, 4> m;
  auto g = m.bind();
  std::vector<std::int32_t> y = {0, 1, 4, 2};
  g.feed<"y">(y.data(), 4);
  std::string msg = error_of<hf::InvalidArgumentError>([&] { g.forward(); });
  CHECK_THAT(msg, Contains("labels[2] = 4") && Contains("[0, 4)"));
  y = {-1, 1, 3, 2};
  msg = error_of<hf::InvalidArgumentError>([&] { g.forward(); });
  CHECK_THAT(msg, Contains("labels[0] = -1"));
  y = {0, 1, 3, 2};
  CHECK(g.forward() == Approx(std::log(4.0)));  // usable again
}

TEST_CASE("graph: sparse softmax cross-entropy of hand-computed examples", "[autodiff][graph]") {
  SECTION("equal logits: log(C)") {
    DirectLogits<double, 2, 5> m;
    m.z.value.setConstant(0.7);
    auto g = m.bind();
    const std::vector<std::int32_t> y = {3, 0};
    g.feed<"y">(y.data(), 2);
    CHECK(g.forward() == Approx(std::log(5.0)).epsilon(1e-15));
    g.backward();
    // (softmax - one_hot) / batch.
    Eigen::Matrix<double, 2, 5, Eigen::RowMajor> expected;
    expected.setConstant(0.2 / 2);
    expected(0, 3) -= 0.5;
    expected(1, 0) -= 0.5;
    CHECK(max_rel_diff(m.z.grad, expected) < 1e-15);
  }
  SECTION("two rows") {
    DirectLogits<double, 2, 3> m;
    m.z.value << 1, 2, 3,  //
        0.5, -1, 2;
    auto g = m.bind();
    const std::vector<std::int32_t> y = {0, 2};
    g.feed<"y">(y.data(), 2);
    const double e = std::exp(1.0);
    // Row 0: -log(e^1 / (e^1 + e^2 + e^3)) = log(1 + e + e^2).
    const double row0 = std::log(1 + e + e * e);
    // Row 1: -log(e^2 / (e^0.5 + e^-1 + e^2)).
    const double row1 = std::log(std::exp(0.5) + std::exp(-1.0) + std::exp(2.0)) - 2.0;
    CHECK(g.forward() == Approx((row0 + row1) / 2).epsilon(1e-15));
    g.backward();
    const double s0 = 1 + e + e * e;
    const double s1 = std::exp(0.5) + std::exp(-1.0) + std::exp(2.0);
    Eigen::Matrix<double, 2, 3, Eigen::RowMajor> expected;
    expected << 1 / s0 - 1, e / s0, e * e / s0,  //
        std::exp(0.5) / s1, std::exp(-1.0) / s1, std::exp(2.0) / s1 - 1;
    expected /= 2;
    CHECK(max_rel_diff(m.z.grad, expected) < 1e-14);
    const auto p = g.compute<"softmax">();
    CHECK(p(0, 2) == Approx(e * e / s0).epsilon(1e-15));
    CHECK(p.row(1).sum() == Approx(1.0).epsilon(1e-15));
  }
}

TEMPLATE_TEST_CASE("graph: logits of +-1000 give finite losses and gradients", "[autodiff][graph]",
                   double, float) {
  using S = TestType;
  DirectLogits<S, 3, 3> m;
  m.z.value << 1000, 0, -1000,  //
      1000, 1000, 1000,         //
      -1000, 1000, 0;
  auto g = m.bind();
  const std::vector<std::int32_t> y = {0, 1, 0};
  g.template feed<"y">(y.data(), 3);
  const S loss = g.forward();
  // Row 0: 0; row 1: log 3; row 2: 1000 - (-1000).
  REQUIRE(std::isfinite(loss));
  CHECK(static_cast<double>(loss) == Approx((0 + std::log(3.0) + 2000) / 3).epsilon(1e-6));
  g.backward();
  REQUIRE(m.z.grad.allFinite());
  Eigen::Matrix<double, 3, 3, Eigen::RowMajor> expected;
  expected << 0, 0, 0,                //
      1.0 / 3, 1.0 / 3 - 1, 1.0 / 3,  //
      -1, 1, 0;
  expected /= 3;
  CHECK((m.z.grad.template cast<double>() - expected).cwiseAbs().maxCoeff() < 1e-6);
  const auto p = g.template compute<"softmax">();
  REQUIRE(p.allFinite());
  CHECK(static_cast<double>(p(0, 0)) == Approx(1.0));
  CHECK(static_cast<double>(p(1, 2)) == Approx(1.0 / 3));
  CHECK(static_cast<double>(p(2, 1)) == Approx(1.0));
}
