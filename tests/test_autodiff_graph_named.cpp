// tests/test_autodiff_graph_named.cpp: a named node used twice in a bound graph is one tape
// entry whose adjoint sums both uses (split from test_autodiff_graph.cpp to keep each file's
// compile time under a minute).
#include <algorithm>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "gradcheck.hpp"
#include "hookfuse/autodiff.hpp"

namespace hf = hookfuse;
using hf::Dynamic;
using hf::Index;
using hookfuse_test::analytic_gradient;
using hookfuse_test::kGradTolerance;
using hookfuse_test::max_rel_diff;
using hookfuse_test::max_relative_error;
using hookfuse_test::numeric_gradient;
using hookfuse_test::random_values;
using hookfuse_test::randomize;
using hookfuse_test::Rng;

// --- (a) a named node used twice ---------------------------------------------------------------

TEST_CASE("graph: a named node used twice is one tape entry whose adjoint sums both uses",
          "[autodiff][graph]") {
  constexpr Index B = 5;
  Rng rng(0x7a11);
  hf::Placeholder<"x", double, 3> x;
  hf::Placeholder<"r", double, 4> r;
  hf::Variable<"w", double, 3, 4> w;
  randomize(w.value, rng, 0.1, 0.6, true);
  const auto xd = random_values(rng, B * 3, 0.5, 1.5, true);
  const auto rd = random_values(rng, B * 4, 0.5, 1.5, true);

  auto h = hf::named<"h">(hf::tanh(hf::matmul(x, w)));
  auto u = hf::tanh(hf::matmul(x, w));  // the same expression, unnamed

  SECTION("h * h") {
    auto g = hf::bind(8, hf::named<"loss">(hf::reduce_sum(h * h)));
    auto dup = hf::bind(8, hf::reduce_sum(u * u));
    using G = decltype(g);
    // x, w, matmul, tanh (= h), multiply, reduce_sum: h is evaluated once.
    STATIC_REQUIRE(G::size == 6);
    STATIC_REQUIRE(G::index_of<"h"> == 3);
    STATIC_REQUIRE(G::index_of<"loss"> == G::loss_index);
    // Unnamed, the two operands are two matmul + tanh chains (x and w are shared by name).
    STATIC_REQUIRE(decltype(dup)::size == 8);

    g.feed<"x">(xd.data(), B, 3);
    dup.feed<"x">(xd.data(), B, 3);
    const double loss = g.forward();
    CHECK(loss == Approx(dup.forward()).epsilon(1e-14));
    CHECK(loss == Approx(g.value<"h">().squaredNorm()).epsilon(1e-14));

    const Eigen::MatrixXd an = analytic_gradient(g, w);
    // d loss / d h = 2 h: both uses of h contributed.
    CHECK(max_rel_diff(g.adjoint<"h">(), 2 * g.value<"h">()) < 1e-15);
    CHECK(max_rel_diff(an, analytic_gradient(dup, w)) < 1e-13);
    CHECK(max_relative_error(numeric_gradient(g, w), an) < kGradTolerance);
  }
  SECTION("h + h") {
    auto g = hf::bind(8, hf::reduce_sum(hf::multiply(h + h, r)));
    STATIC_REQUIRE(decltype(g)::size == 8);  // x, w, matmul, tanh, add, r, multiply, reduce_sum
    g.feed<"x">(xd.data(), B, 3);
    g.feed<"r">(rd.data(), B, 4);
    const Eigen::MatrixXd an = analytic_gradient(g, w);
    const Eigen::Map<const Eigen::Matrix<double, Dynamic, 4, Eigen::RowMajor>> rm(rd.data(), B, 4);
    CHECK(max_rel_diff(g.adjoint<"h">(), 2 * rm) < 1e-15);
    CHECK(max_relative_error(numeric_gradient(g, w), an) < kGradTolerance);
  }
  SECTION("h in two different parents") {
    auto g = hf::bind(8, hf::reduce_sum(hf::multiply(h, r)) + hf::reduce_sum(hf::square(h)));
    // x, w, matmul, tanh, r, multiply, reduce_sum, square, reduce_sum, add.
    STATIC_REQUIRE(decltype(g)::size == 10);
    g.feed<"x">(xd.data(), B, 3);
    g.feed<"r">(rd.data(), B, 4);
    const Eigen::MatrixXd an = analytic_gradient(g, w);
    const Eigen::Map<const Eigen::Matrix<double, Dynamic, 4, Eigen::RowMajor>> rm(rd.data(), B, 4);
    const Eigen::MatrixXd hv = g.value<"h">();
    CHECK(max_rel_diff(g.adjoint<"h">(), rm + 2 * hv) < 1e-15);
    CHECK(max_relative_error(numeric_gradient(g, w), an) < kGradTolerance);
  }
  SECTION("a Variable used twice") {
    hf::Variable<"v", double, 2, 3> v;
    randomize(v.value, rng, 0.5, 1.5, true);
    auto g = hf::bind(1, hf::reduce_sum(hf::multiply(v, v)));
    STATIC_REQUIRE(decltype(g)::size == 3);  // v, multiply, reduce_sum
    const Eigen::MatrixXd an = analytic_gradient(g, v);
    CHECK(max_rel_diff(an, 2 * v.value) < 1e-15);
  }
}
