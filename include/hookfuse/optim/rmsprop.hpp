// hookfuse/optim/rmsprop.hpp: RMSProp (tf.compat.v1.train.RMSPropOptimizer), plain or centered.
#pragma once

#include <cmath>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/optim/optimizer.hpp"

namespace hookfuse {

/// RMSProp, as tf.compat.v1.train.RMSPropOptimizer(learning_rate, decay = 0.9, momentum = 0.0,
/// epsilon = 1e-10, centered = Centered). For every variable v with gradient g (any shape, the
/// variable's dtype), with TF's kernels ApplyRMSProp and ApplyCenteredRMSProp:
///   ms = ms + (g * g - ms) * (1 - decay)                        mean square, starts at 1
///   mg = mg + (g - mg) * (1 - decay)                            mean gradient (centered only), 0
///   mom = mom * momentum + learning_rate * g / sqrt(d)          momentum, starts at 0
///   v -= mom
/// where d = ms + epsilon, or d = ms - mg * mg + epsilon when centered (an estimate of the
/// gradient's variance; TF1 starts ms at 1, ones_initializer, so d stays positive early on;
/// Keras' RMSprop starts it at 0).
///
/// Slots and their checkpoint keys: TF creates them in the order ms, mg (centered only),
/// momentum, all named "<var>/RMSProp" and made unique in that order, so
///   not centered: "<var>/RMSProp" (ms), "<var>/RMSProp_1" (mom)
///   centered:     "<var>/RMSProp" (ms), "<var>/RMSProp_1" (mg), "<var>/RMSProp_2" (mom).
/// TF's `centered` is a template argument here because it decides which slots exist, and the
/// session lays its slots and checkpoint list out at compile time:
///     tf.compat.v1.train.RMSPropOptimizer(0.001, centered=True)
///  -> hookfuse::RMSPropOptimizer<true>(0.001)
/// (`RMSPropOptimizer(0.001)` deduces RMSPropOptimizer<false>, TF's default.) A checkpoint of
/// one kind restored into the other is refused, naming the slot: a centered session misses
/// "<var>/RMSProp_2" (io::NotFoundError); a plain one finds "<var>/RMSProp_2" beside the
/// "<var>/RMSProp_1" it would take for its momentum (hookfuse::ValueError; TF's Saver would
/// load the mean gradient as the momentum). Never fused into the backward pass (the update is
/// not linear in the gradient). Constructor errors: std::invalid_argument naming the argument.
template <bool Centered = false>
class RMSPropOptimizer : public detail::SlotOptimizerBase<RMSPropOptimizer<Centered>> {
 public:
  using slot_names = std::conditional_t<Centered, SlotNames<"RMSProp", "RMSProp_1", "RMSProp_2">,
                                        SlotNames<"RMSProp", "RMSProp_1">>;
  using non_slot_names = SlotNames<>;
  /// Per slot, a name whose presence in a checkpoint (as "<var>/<name>") means that checkpoint's
  /// value for this slot is something else (see OptimizerSlots): a plain RMSProp's
  /// "RMSProp_1" is a centered one's mean gradient.
  using conflicting_slot_names = std::conditional_t<Centered, SlotNames<"", "", "">,
                                                    SlotNames<"", "RMSProp_2">>;
  static constexpr std::string_view slot_conflict_reason =
      "the checkpoint was saved by a centered RMSPropOptimizer (slots <var>/RMSProp, "
      "<var>/RMSProp_1 = mean gradient, <var>/RMSProp_2 = momentum), this one is not centered "
      "(<var>/RMSProp_1 = momentum): restore it with RMSPropOptimizer<true>";

  /// The slot indices (slot_names order): mean square, mean gradient (centered), momentum.
  static constexpr std::size_t ms_slot = 0;
  static constexpr std::size_t mom_slot = Centered ? 2 : 1;

  explicit RMSPropOptimizer(double learning_rate, double decay = 0.9, double momentum = 0.0,
                            double epsilon = 1e-10)
      : learning_rate_(static_cast<host_float>(learning_rate)),
        decay_(static_cast<host_float>(decay)),
        momentum_(static_cast<host_float>(momentum)),
        epsilon_(static_cast<host_float>(epsilon)) {
    detail::check_learning_rate("RMSPropOptimizer", learning_rate_);
    detail::check_argument(decay_ >= 0 && decay_ <= 1, "RMSPropOptimizer", "decay",
                                 "in [0, 1]", decay_);
    detail::check_argument(std::isfinite(momentum_) && momentum_ >= 0, "RMSPropOptimizer",
                                 "momentum", "finite and >= 0", momentum_);
    detail::check_argument(std::isfinite(epsilon_) && epsilon_ >= 0, "RMSPropOptimizer",
                                 "epsilon", "finite and >= 0", epsilon_);
  }

  /// The mean square starts at 1, the mean gradient and the momentum at 0.
  template <class S>
  S initial_slot_value(std::size_t k) const {
    return k == ms_slot ? S(1) : S(0);
  }

  /// apply_dense is elementwise: a large variable's update may run on the intra-op threads.
  static constexpr bool elementwise_update = true;
  /// One variable's update (formula above); coefficient-wise Eigen expressions, no temporary.
  template <class M, class G, class Slots, class NonSlots>
  void apply_dense(M& value, const G& grad, Slots& slots, NonSlots&) const {
    using S = typename M::Scalar;
    const S one_minus_decay = S(1) - static_cast<S>(decay_);
    const S lr = static_cast<S>(learning_rate_);
    const S eps = static_cast<S>(epsilon_);
    auto ms = slots.slot[ms_slot].array();
    auto mom = slots.slot[mom_slot].array();
    ms += (grad.array().square() - ms) * one_minus_decay;
    if constexpr (Centered) {
      auto mg = slots.slot[1].array();
      mg += (grad.array() - mg) * one_minus_decay;
      mom = mom * static_cast<S>(momentum_) + lr * grad.array() / (ms - mg.square() + eps).sqrt();
    } else {
      mom = mom * static_cast<S>(momentum_) + lr * grad.array() / (ms + eps).sqrt();
    }
    value.array() -= mom;
  }
  template <class NonSlots>
  void finish(NonSlots&) const {}

  host_float learning_rate() const { return learning_rate_; }
  /// Sets the learning rate the following updates use (a schedule hook calls it between steps).
  /// Throws std::invalid_argument unless it is finite and >= 0.
  void set_learning_rate(double learning_rate) {
    const auto lr = static_cast<host_float>(learning_rate);
    detail::check_learning_rate("RMSPropOptimizer", lr);
    learning_rate_ = lr;
  }
  host_float decay() const { return decay_; }
  host_float momentum() const { return momentum_; }
  host_float epsilon() const { return epsilon_; }
  /// TF's `centered`: the template argument.
  static constexpr bool centered() { return Centered; }

 private:
  host_float learning_rate_;
  host_float decay_;
  host_float momentum_;
  host_float epsilon_;
};

}  // namespace hookfuse
