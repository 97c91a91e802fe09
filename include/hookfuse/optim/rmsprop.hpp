// hookfuse/optim/rmsprop.hpp: RMSProp (tf.compat.v1.train.RMSPropOptimizer, not centered).
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/optim/optimizer.hpp"

namespace hookfuse {

/// RMSProp, as tf.compat.v1.train.RMSPropOptimizer(learning_rate, decay = 0.9, momentum = 0.0,
/// epsilon = 1e-10) with centered = false (TF's ApplyRMSProp kernel), for every variable v with
/// gradient g:
///   ms = ms + (g * g - ms) * (1 - decay)                       slot "<var>/RMSProp",   starts at 1
///   mom = mom * momentum + learning_rate * g / sqrt(ms + epsilon)   slot "<var>/RMSProp_1", at 0
///   v -= mom
/// (TF1 starts the mean square at 1, ones_initializer; Keras' RMSprop starts it at 0.)
/// Not implemented: centered = true (the "<var>/RMSProp_2" mean-gradient slot). Never fused.
class RMSPropOptimizer {
 public:
  using slot_names = SlotNames<"RMSProp", "RMSProp_1">;
  using non_slot_names = SlotNames<>;

  explicit RMSPropOptimizer(double learning_rate, double decay = 0.9, double momentum = 0.0,
                            double epsilon = 1e-10)
      : learning_rate_(learning_rate), decay_(decay), momentum_(momentum), epsilon_(epsilon) {
    detail::check_learning_rate("RMSPropOptimizer", learning_rate);
    detail::check_argument(decay >= 0 && decay <= 1, "RMSPropOptimizer", "decay",
                                 "in [0, 1]", decay);
    detail::check_argument(std::isfinite(momentum) && momentum >= 0, "RMSPropOptimizer",
                                 "momentum", "finite and >= 0", momentum);
    detail::check_argument(std::isfinite(epsilon) && epsilon >= 0, "RMSPropOptimizer",
                                 "epsilon", "finite and >= 0", epsilon);
  }

  /// The train op (see GradientDescentOptimizer::minimize); `loss` must be [1, 1].
  template <Operand L>
  auto minimize(L&& loss, GlobalStep& global_step) const {
    return hookfuse::minimize(*this, std::forward<L>(loss), global_step);
  }

  /// "RMSProp" (the mean square) starts at 1, "RMSProp_1" (the momentum) at 0.
  template <class S>
  S initial_slot_value(std::size_t k) const {
    return k == 0 ? S(1) : S(0);
  }
  template <class S>
  S initial_non_slot_value(std::size_t) const {
    return S(0);
  }

  /// One variable's update (formula above).
  template <class M, class G, class Slots, class NonSlots>
  void apply_dense(M& value, const G& grad, Slots& slots, NonSlots&) const {
    using S = typename M::Scalar;
    auto ms = slots.slot[0].array();
    auto mom = slots.slot[1].array();
    ms += (grad.array().square() - ms) * (S(1) - static_cast<S>(decay_));
    mom = mom * static_cast<S>(momentum_) +
          static_cast<S>(learning_rate_) * grad.array() / (ms + static_cast<S>(epsilon_)).sqrt();
    value.array() -= mom;
  }
  template <class NonSlots>
  void finish(NonSlots&) const {}

  double learning_rate() const { return learning_rate_; }
  /// Sets the learning rate the following updates use (a schedule hook calls it between steps).
  /// Throws std::invalid_argument unless it is finite and >= 0.
  void set_learning_rate(double learning_rate) {
    detail::check_learning_rate("RMSPropOptimizer", learning_rate);
    learning_rate_ = learning_rate;
  }
  double decay() const { return decay_; }
  double momentum() const { return momentum_; }
  double epsilon() const { return epsilon_; }

 private:
  double learning_rate_;
  double decay_;
  double momentum_;
  double epsilon_;
};

}  // namespace hookfuse
