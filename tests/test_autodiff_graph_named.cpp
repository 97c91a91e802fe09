// tests/test_autodiff_graph_named.cpp: a named node used twice in a bound graph is one tape
// entry whose adjoint sums both uses (split from test_autodiff_graph.cpp to keep each file's
// compile time under a minute); the compile-time tables the graph reads of its tape.
#include <algorithm>
#include <array>
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

// --- (b) the compile-time tables of a tape (autodiff/tape_tables.hpp) ---------------------------

TEST_CASE("graph: the tape's tables: what each tensor reads, operand counts, first "
          "contributions, fusion and names",
          "[autodiff][graph]") {
  hf::Placeholder<"x", double, 3> x;
  hf::Placeholder<"r", double, 4> r;
  hf::Variable<"w", double, 3, 4> w;
  hf::Variable<"v", double, 4, 4> v;
  hf::Variable<"u", double, 4, 4> u;
  auto h = hf::named<"h">(hf::tanh(hf::matmul(x, w)));
  auto g = hf::bind(2,
                    hf::named<"loss">(hf::reduce_sum(hf::multiply(h, r)) +
                                      hf::reduce_sum(hf::square(h))),
                    hf::named<"wv">(hf::matmul(w, v)), hf::named<"vu">(hf::add(v, u)));
  using G = decltype(g);
  using E = G::entries_type;
  using N = G::names_type;
  // The tape, children before parents, worked out by hand: 0 x, 1 w, 2 matmul(0, 1), 3 tanh(2)
  // = h, 4 r, 5 multiply(3, 4), 6 reduce_sum(5), 7 square(3), 8 reduce_sum(7), 9 add(6, 8) =
  // loss; the fetches: 10 v, 11 matmul(1, 10) = wv, 12 u, 13 add(10, 12) = vu.
  STATIC_REQUIRE(G::size == 14);
  STATIC_REQUIRE(G::loss_index == 9);
  STATIC_REQUIRE(G::index_of<"h"> == 3);
  STATIC_REQUIRE(G::index_of<"vu"> == 13);

  // What a tensor reads: the loss everything up to 9, wv only w, v and itself, square(h) h's chain.
  constexpr std::array<bool, 14> loss_reads{true, true, true, true, true, true, true,
                                            true, true, true, false, false, false, false};
  STATIC_REQUIRE(hf::detail::reach_table<E, 9> == loss_reads);
  constexpr std::array<bool, 14> wv_reads{false, true,  false, false, false, false, false,
                                          false, false, false, true,  true,  false, false};
  STATIC_REQUIRE(hf::detail::reach_table<E, 11> == wv_reads);
  constexpr std::array<bool, 14> square_reads{true,  true,  true,  true,  false, false, false,
                                              true,  false, false, false, false, false, false};
  STATIC_REQUIRE(hf::detail::reach_table<E, 7> == square_reads);
  STATIC_REQUIRE(hf::detail::reads_placeholder<E, 9, 0>());   // the loss reads x
  STATIC_REQUIRE(hf::detail::reads_placeholder<E, 9, 4>());   // and r
  STATIC_REQUIRE(!hf::detail::reads_placeholder<E, 7, 4>());  // square(h) does not read r
  STATIC_REQUIRE(!hf::detail::reads_placeholder<E, 11, 0>());
  STATIC_REQUIRE(!hf::detail::reads_placeholder<E, 9, 1>());  // w is no placeholder

  // Operand counts up to the loss, and over the whole tape: h twice, w and v twice in all.
  constexpr std::array<std::size_t, 14> uses_to_loss{1, 1, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0};
  STATIC_REQUIRE(hf::detail::operand_count<E, 9> == uses_to_loss);
  constexpr std::array<std::size_t, 14> uses_all{1, 2, 1, 2, 1, 1, 1, 1, 1, 0, 2, 0, 1, 0};
  STATIC_REQUIRE(hf::detail::operand_count<E, 13> == uses_all);

  // The backward pass from the loss visits 9 down to 0: h's adjoint gets its first contribution
  // from square (7), then multiply (5) adds to it; r's only contribution is at 5.
  STATIC_REQUIRE(hf::detail::first_write<E, 9, 7, 0>());
  STATIC_REQUIRE(!hf::detail::first_write<E, 9, 5, 0>());
  STATIC_REQUIRE(hf::detail::first_write<E, 9, 5, 1>());
  STATIC_REQUIRE(hf::detail::first_write<E, 9, 2, 1>());  // w, below the loss: one use
  STATIC_REQUIRE(hf::detail::last_grad_consumer<E, 9>[3] == 7);
  STATIC_REQUIRE(hf::detail::last_grad_consumer<E, 9>[9] == hf::detail::npos);

  // Fusion: matmul(w, v) reads both of its Variable operands in its backward pass, so neither
  // w nor v may be updated during it; u's other operand in v + u is a Variable, but an addition
  // reads no operand. (x's consumer matmul(x, w) has the Variable w as its other operand: the
  // table says no for x too, which is only ever asked about Variables.)
  constexpr std::array<bool, 14> fusable{false, false, true, true, true, true, true,
                                         true, true, true, false, true, true, true};
  STATIC_REQUIRE(hf::detail::consumers_allow_fusion<E> == fusable);
  STATIC_REQUIRE(!G::update_fused_at<hf::detail::FuseAll, 1>());   // w: two uses
  STATIC_REQUIRE(!G::update_fused_at<hf::detail::FuseAll, 12>());  // u: not in the loss's graph
  STATIC_REQUIRE(!G::update_fused_at<hf::detail::FuseAll, 0>());   // x: no Variable

  STATIC_REQUIRE(hf::detail::name_at<N, 3>() == "h");
  STATIC_REQUIRE(hf::detail::name_at<N, 9>() == "loss");
  STATIC_REQUIRE(hf::detail::name_at<N, 12>() == "u");
  STATIC_REQUIRE(hf::detail::name_at<N, 5>().empty());
}
