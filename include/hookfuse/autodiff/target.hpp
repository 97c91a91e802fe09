// hookfuse/autodiff/target.hpp: where a backward kernel writes one operand's adjoint.
//
// Whether a contribution overwrites or adds is decided at compile time: the first contribution
// a tensor receives in the backward pass assigns, later ones add. So the step resets adjoints
// itself, and a tensor with one consumer costs no zero-fill.
//
// An UpdateTarget is where a variable's gradient goes when the optimizer's update is folded into
// the backward pass: each contribution g is added to the variable's value as alpha * g (for SGD,
// alpha = -learning_rate), so the gradient is never stored.
#pragma once

#include "hookfuse/autodiff/gemm.hpp"
#include "hookfuse/autodiff/storage.hpp"

namespace hookfuse::detail {

template <class Map, bool Assign>
struct GradTarget {
  static constexpr bool assign = Assign;
  Map view;

  template <class X>
  void put(const X& x) {
    if constexpr (Assign) view = x;
    else view += x;
  }
  template <class X>
  void put_row(Index i, const X& x) {
    if constexpr (Assign) view.row(i) = x;
    else view.row(i) += x;
  }
  void put_constant(typename Map::Scalar c) {
    if constexpr (Assign) view.setConstant(c);
    else view.array() += c;
  }
  /// Adds x to one element, after a put() of the whole tensor (never the first write).
  void add_at(Index i, Index j, typename Map::Scalar x) { view(i, j) += x; }
  /// view (=|+=) alpha * lhs * rhs through a preallocated workspace.
  template <class L, class R, class WS>
  void gemm(const L& lhs, const R& rhs, typename Map::Scalar alpha, WS& ws) {
    if constexpr (Assign) view.setZero();
    gemm_add(view, lhs, rhs, alpha, ws);
  }
};

/// Backward writes that update a variable in place: value += alpha * contribution.
/// `alpha` is the optimizer's scale (SGD: -learning_rate). The weight-gradient product of a
/// matmul accumulates straight into the weights through Eigen's GEMM (alpha folded into it).
template <class Map>
struct UpdateTarget {
  using Scalar = typename Map::Scalar;
  static constexpr bool assign = false;
  Map view;
  Scalar alpha;

  template <class X>
  void put(const X& x) {
    view += alpha * x;
  }
  template <class X>
  void put_row(Index i, const X& x) {
    view.row(i) += alpha * x;
  }
  void put_constant(Scalar c) { view.array() += alpha * c; }
  void add_at(Index i, Index j, Scalar x) { view(i, j) += alpha * x; }
  template <class L, class R, class WS>
  void gemm(const L& lhs, const R& rhs, Scalar a, WS& ws) {
    gemm_add(view, lhs, rhs, alpha * a, ws);
  }
};

}  // namespace hookfuse::detail
