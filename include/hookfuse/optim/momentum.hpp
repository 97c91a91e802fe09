// hookfuse/optim/momentum.hpp: SGD with momentum (tf.compat.v1.train.MomentumOptimizer).
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>
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
/// Fused into the backward pass when use_nesterov is false (decided at run time, each step):
/// for a variable whose gradient no hook reads (see MonitoredTrainingSession::update_fused),
/// the slot is scaled by momentum before the backward pass, every gradient contribution is
/// added straight into it (the gradient is never stored), and v -= learning_rate * accum
/// follows. With use_nesterov the update needs g itself: every gradient is stored and applied
/// after the backward pass.
class MomentumOptimizer : public detail::SlotOptimizerBase<MomentumOptimizer> {
 public:
  using slot_names = SlotNames<"Momentum">;
  using non_slot_names = SlotNames<>;

  /// Throws std::invalid_argument unless learning_rate and momentum are finite and >= 0.
  MomentumOptimizer(double learning_rate, double momentum, bool use_nesterov = false)
      : learning_rate_(static_cast<host_float>(learning_rate)),
        momentum_(static_cast<host_float>(momentum)),
        use_nesterov_(use_nesterov) {
    detail::check_learning_rate("MomentumOptimizer", learning_rate_);
    detail::check_argument(std::isfinite(momentum_) && momentum_ >= 0, "MomentumOptimizer",
                                 "momentum", "finite and >= 0", momentum_);
  }

  /// apply_dense is elementwise: a large variable's update may run on the intra-op threads.
  static constexpr bool elementwise_update = true;
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

  /// The fused update (see the class comment): the slot the backward pass accumulates into,
  /// what happens to it before the pass, and the value's update after it.
  static constexpr std::size_t accumulation_slot = 0;
  bool fusable() const { return !use_nesterov_; }
  template <class Slots>
  void before_backward(Slots& slots) const {
    using S = typename std::remove_cvref_t<decltype(slots.slot[0])>::Scalar;
    slots.slot[0].array() *= static_cast<S>(momentum_);
  }
  template <class M, class Slots>
  void apply_fused(M& value, Slots& slots) const {
    using S = typename M::Scalar;
    value.array() -= static_cast<S>(learning_rate_) * slots.slot[0].array();
  }

  host_float learning_rate() const { return learning_rate_; }
  /// Sets the learning rate the following updates use (a schedule hook calls it between steps).
  /// Throws std::invalid_argument unless it is finite and >= 0.
  void set_learning_rate(double learning_rate) {
    const auto lr = static_cast<host_float>(learning_rate);
    detail::check_learning_rate("MomentumOptimizer", lr);
    learning_rate_ = lr;
  }
  host_float momentum() const { return momentum_; }
  bool use_nesterov() const { return use_nesterov_; }

 private:
  host_float learning_rate_;
  host_float momentum_;
  bool use_nesterov_;
};

}  // namespace hookfuse
