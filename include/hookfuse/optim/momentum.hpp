// hookfuse/optim/momentum.hpp: SGD with momentum (tf.compat.v1.train.MomentumOptimizer).
#pragma once

#include <cstddef>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/optim/optimizer.hpp"

namespace hookfuse {

/// Momentum, as tf.compat.v1.train.MomentumOptimizer(learning_rate, momentum, use_nesterov)
/// (TF's ApplyMomentum kernel), for every variable v with gradient g and slot accum:
///   accum = accum * momentum + g
///   v -= learning_rate * accum                                   (use_nesterov = false)
///   v -= learning_rate * g + learning_rate * momentum * accum    (use_nesterov = true)
/// The slot "<var>/Momentum" (same shape and dtype as v) starts at 0. Parameters are converted
/// to each variable's scalar type on use.
///
/// Not fused: the update is applied after the backward pass from the stored gradient. (Next
/// step of the work: fold `accum = accum * momentum + g` into the backward pass with the slot
/// as the accumulation target, as SGD folds into the value; see graph.hpp's UpdateTarget.)
class MomentumOptimizer {
 public:
  using slot_names = SlotNames<"Momentum">;
  using non_slot_names = SlotNames<>;

  MomentumOptimizer(double learning_rate, double momentum, bool use_nesterov = false)
      : learning_rate_(learning_rate), momentum_(momentum), use_nesterov_(use_nesterov) {}

  /// The train op (see GradientDescentOptimizer::minimize); `loss` must be [1, 1].
  template <Operand L>
  auto minimize(L&& loss, GlobalStep& global_step) const {
    return hookfuse::minimize(*this, std::forward<L>(loss), global_step);
  }

  template <class S>
  S initial_slot_value(std::size_t) const {
    return S(0);
  }
  template <class S>
  S initial_non_slot_value(std::size_t) const {
    return S(0);
  }

  /// One variable's update (formula above). `value`, `grad` and the slot are [R, C].
  template <class M, class G, class Slots, class NonSlots>
  void apply_dense(M& value, const G& grad, Slots& slots, NonSlots&) const {
    using S = typename M::Scalar;
    const auto lr = static_cast<S>(learning_rate_);
    const auto m = static_cast<S>(momentum_);
    auto accum = slots.slot[0].array();
    accum = accum * m + grad.array();
    if (use_nesterov_)
      value.array() -= grad.array() * lr + accum * (m * lr);
    else
      value.array() -= lr * accum;
  }
  template <class NonSlots>
  void finish(NonSlots&) const {}

  double learning_rate() const { return learning_rate_; }
  /// Sets the learning rate the following updates use (a schedule hook calls it between steps).
  void set_learning_rate(double learning_rate) { learning_rate_ = learning_rate; }
  double momentum() const { return momentum_; }
  bool use_nesterov() const { return use_nesterov_; }

 private:
  double learning_rate_;
  double momentum_;
  bool use_nesterov_;
};

}  // namespace hookfuse
