// tests/gradcheck_fixture.hpp: the models, size modes and check shared by the
// tests/test_autodiff_gradcheck_*.cpp files (one file per op family, so that no file takes long
// to compile: every model there is its own type, with its own forward and backward passes).
//
// Every op is checked in three size modes (the TEMPLATE_TEST_CASE types of those files):
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
// check. -DHF_MODES=AllDynamic (or another mode) builds one mode only, for quick iterations.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gradcheck.hpp"
#include "hookfuse/autodiff.hpp"

namespace hookfuse_test {

// --- size modes ----------------------------------------------------------------------------------

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

// The mode list the TEMPLATE_TEST_CASEs run over (Catch names each case after the unqualified
// type, so the files bring these names in with `using`).
#ifndef HF_MODES
#define HF_MODES FixedSizes, DynamicBatch, AllDynamic
#endif

template <class M, hookfuse::fixed_string N, int R, int C>
using Var = hookfuse::Variable<N, double, M::fixed_vars ? R : hookfuse::Dynamic,
                               M::fixed_vars ? C : hookfuse::Dynamic>;
template <class M, hookfuse::fixed_string N, int C>
using Bias = hookfuse::Variable<N, double, 1, M::fixed_vars ? C : hookfuse::Dynamic>;
template <class M, hookfuse::fixed_string N, int B, int C>
using In = hookfuse::Placeholder<N, double, M::fixed_cols ? C : hookfuse::Dynamic,
                                 M::fixed_batch ? B : hookfuse::Dynamic>;
template <class M, hookfuse::fixed_string N, int B>
using Labels = hookfuse::Placeholder<N, std::int32_t, 1, M::fixed_batch ? B : hookfuse::Dynamic>;

/// Capacity to bind a graph with for batches of `batch` rows (larger when the batch is dynamic).
template <class M>
constexpr hookfuse::Index capacity(hookfuse::Index batch) {
  return M::fixed_batch ? batch : batch + 3;
}

template <class V>
V make_var(hookfuse::Index rows, hookfuse::Index cols) {
  if constexpr (V::rows_at_compile_time != hookfuse::Dynamic &&
                V::cols_at_compile_time != hookfuse::Dynamic)
    return V();
  else
    return V(rows, cols);
}

template <class P>
P make_input(hookfuse::Index cols) {
  P p;
  if constexpr (P::cols_at_compile_time == hookfuse::Dynamic) p.cols = cols;
  return p;
}

/// `data` as `rows` rows: its width is size / rows, checked against the placeholder's.
template <hookfuse::fixed_string N, class G, class T>
void feed(G& g, const std::vector<T>& data, hookfuse::Index rows) {
  REQUIRE(rows > 0);
  g.template feed<N>(data.data(), rows, static_cast<hookfuse::Index>(data.size()) / rows);
}

// --- the check -----------------------------------------------------------------------------------

/// One Variable's check, compiled once for all graphs: `step` runs forward() and backward(),
/// `analytic` then reads the Variable's gradient, `numeric` differentiates `loss` by it.
/// Returns the largest relative error.
inline double check_variable(const std::string& label, std::string_view var_name,
                             const std::function<void()>& step,
                             const std::function<Eigen::MatrixXd()>& analytic,
                             const std::function<Eigen::MatrixXd()>& numeric) {
  step();
  const Eigen::MatrixXd an = analytic();
  const Eigen::MatrixXd fd = numeric();
  const double err = max_relative_error(fd, an);
  INFO(label << ": d loss / d " << var_name << "\nanalytic:\n" << an << "\nnumerical:\n" << fd);
  // The loss depends on the Variable, so an analytic gradient of zeros cannot pass by accident.
  CHECK(fd.cwiseAbs().maxCoeff() > 1e-2);
  CHECK(err < kGradTolerance);
  return err;
}

/// Compares d loss / d v with finite differences for every Variable `vs` of the graph.
template <class M, class G, class... Vs>
void check_gradients(const std::string& what, G& g, Vs&... vs) {
  const std::string label = what + " [" + M::name + "]";
  // The graph is driven through these two type-erased calls.
  const LossFn loss = [&g] { return static_cast<double>(g.forward()); };
  const std::function<void()> step = [&g] {
    g.forward();
    g.backward();
  };
  double worst = 0;
  (
      [&](auto& v) {
        const double err = check_variable(
            label, v.name.view(), step,
            [&v] { return Eigen::MatrixXd(v.grad.template cast<double>()); },
            [&] { return numeric_gradient(loss, v.value); });
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
  std::vector<double> xd = random_values(rng, hookfuse::Index{B} * K, 0.5, 1.5, true);
  std::vector<double> rd = random_values(rng, hookfuse::Index{B} * C, 0.5, 1.5, true);
  std::vector<double> td = random_values(rng, hookfuse::Index{B} * C, -1.0, 1.0);
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
    auto g = hookfuse::bind(capacity<M>(B), std::forward<L>(loss));
    feed_all(g);
    check_gradients<M>(what, g, vs...);
  }
};

// --- models used by more than one file -----------------------------------------------------------

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
    auto g = hookfuse::bind(capacity<M>(B), hookfuse::reduce_sum(hookfuse::multiply(
                                                hookfuse::matmul(hookfuse::matmul(x, w1), w2), r)));
    feed<"x">(g, xd, B);
    feed<"r">(g, rd, B);
    check_gradients<M>("matmul(matmul(x, w1), w2)" + dims, g, w1, w2);
  }
  {
    auto g =
        hookfuse::bind(B, hookfuse::reduce_sum(hookfuse::multiply(hookfuse::matmul(v, w1), rh)));
    feed<"rh">(g, rhd, B);
    check_gradients<M>("matmul(v, w1)" + dims, g, v, w1);
  }
}

/// check_matmul on every product path of a dynamic-size mode: dynamic products choose their path
/// by size at run time (gemm.hpp); the batch does not change the types in AllDynamic, so these
/// share their instantiations there.
template <class M>
void check_matmul_dynamic() {
  check_matmul<M, 9, 8, 6, 7>();   // GEMM with a workspace (9 + 6 + 8 >= 20)
  check_matmul<M, 2, 8, 6, 7>();   // coefficient-based (2 + 6 + 8 < 20)
  check_matmul<M, 1, 8, 6, 7>();   // one row: vector-matrix; weight gradients are depth-1 GEMMs
  check_matmul<M, 10, 8, 6, 1>();  // one column: matrix-vector
}

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
  auto g = hookfuse::bind(B, hookfuse::reduce_sum(hookfuse::multiply(op(hookfuse::add(x, v)), r)));
  feed<"x">(g, xd, B);
  feed<"r">(g, rd, B);
  check_gradients<M>(name + "(x + v)", g, v);
}

/// op(x.w + b) for the smooth ops, in a dynamic batch below the capacity.
template <class M, class Op>
void check_unary_dense(const std::string& name, Op op) {
  Dense<M, 6, 8, 7> f;
  f.check(name + "(x.w + b)",
          hookfuse::reduce_sum(hookfuse::multiply(op(hookfuse::matmul(f.x, f.w) + f.b), f.r)), f.w,
          f.b);
}

}  // namespace hookfuse_test

/// An elementwise op of hookfuse as a callable, for check_unary and check_unary_dense.
#define HF_OP(fn) [](auto&& e) { return hookfuse::fn(std::forward<decltype(e)>(e)); }
