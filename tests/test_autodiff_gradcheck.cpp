// tests/test_autodiff_gradcheck.cpp: finite-difference gradient checks of every autodiff op.
//
// Every op is checked in three size modes (the TEMPLATE_TEST_CASE types below):
//   FixedSizes    every dim a compile-time constant (Variable<"w", double, 3, 4>,
//                 Placeholder<"x", double, 3, /*rows*/ 5>)
//   DynamicBatch  batch rows known at run time (Placeholder<"x", double, 3>), fixed Variables
//   AllDynamic    every dim known at run time (Placeholder<"x", double, Dynamic>{3},
//                 Variable<"w", double, Dynamic, Dynamic>(3, 4)); a bias is
//                 Variable<"b", double, 1, Dynamic>(1, 4), since + and - decide on the row
//                 broadcast from the compile-time row count
// Dynamic-batch graphs are bound with a capacity above the fed batch (except where a Variable
// has batch rows), so the tensors are views into larger buffers.
//
// Every model ends in a [1, 1] loss. A non-scalar op is wrapped as
// reduce_sum(multiply(op(...), r)) with r a placeholder of fixed random weights, so every output
// element's adjoint is a distinct number and a transposed, misplaced or wrongly signed gradient
// element changes the result. The gradient with respect to every Variable of the model is
// compared with fourth-order central differences (see gradcheck.hpp for the step and the
// relative error). Set HOOKFUSE_GRADCHECK_REPORT=1 to print the largest relative error of each
// check. The file is slow to compile (every model is its own type); -DHF_MODES=AllDynamic (or
// another mode) builds one mode only, for quick iterations.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gradcheck.hpp"
#include "hookfuse/autodiff.hpp"

namespace hf = hookfuse;
using hf::Dynamic;
using hf::Index;
using hookfuse_test::analytic_gradient;
using hookfuse_test::kGradTolerance;
using hookfuse_test::max_relative_error;
using hookfuse_test::numeric_gradient;
using hookfuse_test::random_values;
using hookfuse_test::randomize;
using hookfuse_test::Rng;

namespace {

// --- size modes --------------------------------------------------------------------------------

struct FixedSizes {
  static constexpr const char* name = "fixed";
  static constexpr bool fixed_batch = true, fixed_vars = true, fixed_cols = true;
};
struct DynamicBatch {
  static constexpr const char* name = "dynamic batch";
  static constexpr bool fixed_batch = false, fixed_vars = true, fixed_cols = true;
};
struct AllDynamic {
  static constexpr const char* name = "all dynamic";
  static constexpr bool fixed_batch = false, fixed_vars = false, fixed_cols = false;
};

template <class M, hf::fixed_string N, int R, int C>
using Var = hf::Variable<N, double, M::fixed_vars ? R : Dynamic, M::fixed_vars ? C : Dynamic>;
template <class M, hf::fixed_string N, int C>
using Bias = hf::Variable<N, double, 1, M::fixed_vars ? C : Dynamic>;
template <class M, hf::fixed_string N, int B, int C>
using In = hf::Placeholder<N, double, M::fixed_cols ? C : Dynamic, M::fixed_batch ? B : Dynamic>;
template <class M, hf::fixed_string N, int B>
using Labels = hf::Placeholder<N, std::int32_t, 1, M::fixed_batch ? B : Dynamic>;

/// Capacity to bind a graph with for batches of `batch` rows (larger when the batch is dynamic).
template <class M>
constexpr Index capacity(Index batch) {
  return M::fixed_batch ? batch : batch + 3;
}

template <class V>
V make_var(Index rows, Index cols) {
  if constexpr (V::rows_at_compile_time != Dynamic && V::cols_at_compile_time != Dynamic)
    return V();
  else
    return V(rows, cols);
}

template <class P>
P make_input(Index cols) {
  P p;
  if constexpr (P::cols_at_compile_time == Dynamic) p.cols = cols;
  return p;
}

/// `data` as `rows` rows: its width is size / rows, checked against the placeholder's.
template <hf::fixed_string N, class G, class T>
void feed(G& g, const std::vector<T>& data, Index rows) {
  REQUIRE(rows > 0);
  g.template feed<N>(data.data(), rows, static_cast<Index>(data.size()) / rows);
}

// --- the check ---------------------------------------------------------------------------------

/// Compares d loss / d v with finite differences for every Variable `vs` of the graph.
template <class M, class G, class... Vs>
void check_gradients(const std::string& what, G& g, Vs&... vs) {
  const std::string label = what + " [" + M::name + "]";
  // The graph is driven through these two type-erased calls.
  const hookfuse_test::LossFn loss = [&g] { return static_cast<double>(g.forward()); };
  const std::function<void()> step = [&g] {
    g.forward();
    g.backward();
  };
  double worst = 0;
  (
      [&](auto& v) {
        step();
        const Eigen::MatrixXd an = v.grad.template cast<double>();
        const Eigen::MatrixXd fd = numeric_gradient(loss, v.value);
        const double err = max_relative_error(fd, an);
        INFO(label << ": d loss / d " << v.name.view() << "\nanalytic:\n"
                   << an << "\nnumerical:\n"
                   << fd);
        // The loss depends on v, so an analytic gradient of zeros cannot pass by accident.
        CHECK(fd.cwiseAbs().maxCoeff() > 1e-2);
        CHECK(err < kGradTolerance);
        worst = std::max(worst, err);
      }(vs),
      ...);
  if (std::getenv("HOOKFUSE_GRADCHECK_REPORT"))
    std::printf("gradcheck %-58s max rel error %.2e\n", label.c_str(), worst);
}

/// The fixture of most checks: inputs x [B, K], weights r [B, C], targets t [B, C] and labels
/// y [B] fed; Variables w [K, C], w2 [K, C] and b [1, C], all random.
template <class M, int B, int K, int C>
struct Dense {
  Rng rng{0x5eed0000U + B * 10000U + K * 100U + C};
  In<M, "x", B, K> x = make_input<In<M, "x", B, K>>(K);
  In<M, "r", B, C> r = make_input<In<M, "r", B, C>>(C);
  In<M, "t", B, C> t = make_input<In<M, "t", B, C>>(C);
  Labels<M, "y", B> y{};
  Var<M, "w", K, C> w = make_var<Var<M, "w", K, C>>(K, C);
  Var<M, "w2", K, C> w2 = make_var<Var<M, "w2", K, C>>(K, C);
  Bias<M, "b", C> b = make_var<Bias<M, "b", C>>(1, C);
  std::vector<double> xd = random_values(rng, Index{B} * K, 0.5, 1.5, true);
  std::vector<double> rd = random_values(rng, Index{B} * C, 0.5, 1.5, true);
  std::vector<double> td = random_values(rng, Index{B} * C, -1.0, 1.0);
  std::vector<std::int32_t> yd = [this] {
    std::vector<std::int32_t> v(B);
    for (auto& l : v) l = rng.below(C);
    return v;
  }();

  Dense() {
    randomize(w.value, rng, 0.05, 0.25, true);
    randomize(w2.value, rng, 0.05, 0.25, true);
    randomize(b.value, rng, 0.1, 0.5, true);
  }
  /// Feeds every placeholder the graph has.
  template <class G>
  void feed_all(G& g) {
    if constexpr (G::template has<"x">) feed<"x">(g, xd, B);
    if constexpr (G::template has<"r">) feed<"r">(g, rd, B);
    if constexpr (G::template has<"t">) feed<"t">(g, td, B);
    if constexpr (G::template has<"y">) feed<"y">(g, yd, B);
  }
  /// Binds `loss`, feeds it and checks the gradients of `vs`.
  template <class L, class... Vs>
  void check(const std::string& what, L&& loss, Vs&... vs) {
    auto g = hf::bind(capacity<M>(B), std::forward<L>(loss));
    feed_all(g);
    check_gradients<M>(what, g, vs...);
  }
};

#ifndef HF_MODES
#define HF_MODES FixedSizes, DynamicBatch, AllDynamic
#endif

}  // namespace

// --- matmul ------------------------------------------------------------------------------------

namespace {
/// matmul in both operand positions: a chain x [B, K] . w1 [K, H] . w2 [H, C], and a product of
/// two Variables v [B, K] . w1 [K, H].
template <class M, int B, int K, int H, int C>
void check_matmul() {
  const std::string dims = " B=" + std::to_string(B) + " K=" + std::to_string(K) +
                           " H=" + std::to_string(H) + " C=" + std::to_string(C);
  Rng rng(0xa11ce + B + K + H + C);
  auto x = make_input<In<M, "x", B, K>>(K);
  auto r = make_input<In<M, "r", B, C>>(C);
  auto rh = make_input<In<M, "rh", B, H>>(H);
  auto w1 = make_var<Var<M, "w1", K, H>>(K, H);
  auto w2 = make_var<Var<M, "w2", H, C>>(H, C);
  auto v = make_var<Var<M, "v", B, K>>(B, K);
  randomize(w1.value, rng, 0.1, 0.6, true);
  randomize(w2.value, rng, 0.1, 0.6, true);
  randomize(v.value, rng, 0.5, 1.5, true);
  const auto xd = random_values(rng, B * K, 0.5, 1.5, true);
  const auto rd = random_values(rng, B * C, 0.5, 1.5, true);
  const auto rhd = random_values(rng, B * H, 0.5, 1.5, true);
  {
    auto g = hf::bind(capacity<M>(B),
                      hf::reduce_sum(hf::multiply(hf::matmul(hf::matmul(x, w1), w2), r)));
    feed<"x">(g, xd, B);
    feed<"r">(g, rd, B);
    check_gradients<M>("matmul(matmul(x, w1), w2)" + dims, g, w1, w2);
  }
  {
    auto g = hf::bind(B, hf::reduce_sum(hf::multiply(hf::matmul(v, w1), rh)));
    feed<"rh">(g, rhd, B);
    check_gradients<M>("matmul(v, w1)" + dims, g, v, w1);
  }
}
}  // namespace

TEMPLATE_TEST_CASE("gradcheck: matmul", "[autodiff][gradcheck]", HF_MODES) {
  using M = TestType;
  if constexpr (M::fixed_batch) {
    // Every shape is its own type; fixed products are coefficient-based.
    check_matmul<M, 9, 8, 6, 7>();
    check_matmul<M, 1, 8, 6, 7>();   // one-row operands
    check_matmul<M, 10, 8, 6, 1>();  // one-column result (column-major)
  } else {
    // Dynamic products choose their path by size at run time (gemm.hpp); the batch does not
    // change the types, so these share their instantiations.
    check_matmul<M, 9, 8, 6, 7>();   // GEMM with a workspace (9 + 6 + 8 >= 20)
    check_matmul<M, 2, 8, 6, 7>();   // coefficient-based (2 + 6 + 8 < 20)
    check_matmul<M, 1, 8, 6, 7>();   // one row: vector-matrix; weight gradients are depth-1 GEMMs
    check_matmul<M, 10, 8, 6, 1>();  // one column: matrix-vector
  }
}

// --- add, subtract -----------------------------------------------------------------------------

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

// --- multiply, scale ---------------------------------------------------------------------------

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

// --- elementwise maths -------------------------------------------------------------------------

namespace {
/// op(x + v) with x fed and v a Variable of the batch's shape, so the op's input is exactly
/// controlled: x has magnitudes in [lo, hi] (random signs when `sign`), v in [-0.25, 0.25].
template <class M, class Op>
void check_unary(const std::string& name, Op op, double lo, double hi, bool sign) {
  constexpr int B = 5, C = 4;
  Rng rng(0xe1e3e47);
  auto x = make_input<In<M, "x", B, C>>(C);
  auto r = make_input<In<M, "r", B, C>>(C);
  auto v = make_var<Var<M, "v", B, C>>(B, C);
  const auto xd = random_values(rng, B * C, lo, hi, sign);
  const auto rd = random_values(rng, B * C, 0.5, 1.5, true);
  randomize(v.value, rng, -0.25, 0.25);
  auto g = hf::bind(B, hf::reduce_sum(hf::multiply(op(hf::add(x, v)), r)));
  feed<"x">(g, xd, B);
  feed<"r">(g, rd, B);
  check_gradients<M>(name + "(x + v)", g, v);
}

/// op(x.w + b) for the smooth ops, in a dynamic batch below the capacity.
template <class M, class Op>
void check_unary_dense(const std::string& name, Op op) {
  Dense<M, 6, 8, 7> f;
  f.check(name + "(x.w + b)", hf::reduce_sum(hf::multiply(op(hf::matmul(f.x, f.w) + f.b), f.r)),
          f.w, f.b);
}
}  // namespace

#define HF_OP(fn) [](auto&& e) { return hf::fn(std::forward<decltype(e)>(e)); }

TEMPLATE_TEST_CASE("gradcheck: relu", "[autodiff][gradcheck]", HF_MODES) {
  // Inputs at least 0.25 from the kink at 0, both signs.
  check_unary<TestType>("relu", HF_OP(relu), 0.5, 1.5, true);
}
TEMPLATE_TEST_CASE("gradcheck: sigmoid", "[autodiff][gradcheck]", HF_MODES) {
  check_unary<TestType>("sigmoid", HF_OP(sigmoid), 0.0, 2.0, true);
  check_unary_dense<TestType>("sigmoid", HF_OP(sigmoid));
}
TEMPLATE_TEST_CASE("gradcheck: tanh", "[autodiff][gradcheck]", HF_MODES) {
  check_unary<TestType>("tanh", HF_OP(tanh), 0.0, 2.0, true);
  check_unary_dense<TestType>("tanh", HF_OP(tanh));
}
TEMPLATE_TEST_CASE("gradcheck: exp", "[autodiff][gradcheck]", HF_MODES) {
  check_unary<TestType>("exp", HF_OP(exp), 0.0, 1.5, true);
  check_unary_dense<TestType>("exp", HF_OP(exp));
}
TEMPLATE_TEST_CASE("gradcheck: log", "[autodiff][gradcheck]", HF_MODES) {
  // Inputs in [0.25, 1.75]: positive.
  check_unary<TestType>("log", HF_OP(log), 0.5, 1.5, false);
}
TEMPLATE_TEST_CASE("gradcheck: square", "[autodiff][gradcheck]", HF_MODES) {
  check_unary<TestType>("square", HF_OP(square), 0.0, 1.5, true);
  check_unary_dense<TestType>("square", HF_OP(square));
}

// --- reductions and losses ---------------------------------------------------------------------

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

TEMPLATE_TEST_CASE("gradcheck: softmax", "[autodiff][gradcheck]", HF_MODES) {
  Dense<TestType, 6, 8, 7> f;
  f.check("softmax(x.w + b)",
          hf::reduce_sum(hf::multiply(hf::softmax(hf::matmul(f.x, f.w) + f.b), f.r)), f.w, f.b);
}

TEMPLATE_TEST_CASE("gradcheck: sparse_softmax_cross_entropy", "[autodiff][gradcheck]", HF_MODES) {
  using M = TestType;
  Dense<M, 6, 8, 7> f;
  f.check("sparse_softmax_cross_entropy(y, x.w + b)",
          hf::sparse_softmax_cross_entropy(f.y, hf::matmul(f.x, f.w) + f.b), f.w, f.b);

  // A two-layer network, 8 -> 6 tanh -> 7 classes (the shapes of the matmul checks).
  Rng rng(0xc1a55e5);
  auto m1 = make_var<Var<M, "m1", 8, 6>>(8, 6);
  auto mb1 = make_var<Bias<M, "mb1", 6>>(1, 6);
  auto m2 = make_var<Var<M, "m2", 6, 7>>(6, 7);
  auto mb2 = make_var<Bias<M, "mb2", 7>>(1, 7);
  randomize(m1.value, rng, 0.05, 0.4, true);
  randomize(mb1.value, rng, 0.0, 0.3, true);
  randomize(m2.value, rng, 0.1, 0.8, true);
  randomize(mb2.value, rng, 0.0, 0.3, true);
  auto logits = hf::matmul(hf::tanh(hf::matmul(f.x, m1) + mb1), m2) + mb2;
  f.check("sparse_softmax_cross_entropy(y, mlp(x))", hf::sparse_softmax_cross_entropy(f.y, logits),
          m1, mb1, m2, mb2);
}

// --- the checker itself ------------------------------------------------------------------------

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
