// hookfuse/optim/adam.hpp: Adam (tf.compat.v1.train.AdamOptimizer).
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/optim/optimizer.hpp"

namespace hookfuse {

/// Adam, as tf.compat.v1.train.AdamOptimizer(learning_rate = 0.001, beta1 = 0.9,
/// beta2 = 0.999, epsilon = 1e-8) (TF's ApplyAdam kernel, "epsilon hat" of Kingma and Ba
/// section 2): at step t (1, 2, ...), for every variable v with gradient g,
///   lr_t = learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t)
///   m = m + (g - m) * (1 - beta1)            slot "<var>/Adam",   starts at 0
///   v_ = v_ + (g * g - v_) * (1 - beta2)     slot "<var>/Adam_1", starts at 0
///   v -= lr_t * m / (sqrt(v_) + epsilon)
/// beta1^t and beta2^t are the non-slot variables "beta1_power" and "beta2_power" (rank 0, the
/// loss's dtype), which start at beta1 and beta2 and are multiplied by them after every step's
/// updates (TF's _finish). All are saved in checkpoints under these names.
/// Never fused into the backward pass (the update is not linear in the gradient).
class AdamOptimizer : public detail::SlotOptimizerBase<AdamOptimizer> {
 public:
  using slot_names = SlotNames<"Adam", "Adam_1">;
  using non_slot_names = SlotNames<"beta1_power", "beta2_power">;

  explicit AdamOptimizer(double learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999,
                         double epsilon = 1e-8)
      : learning_rate_(static_cast<host_float>(learning_rate)),
        beta1_(static_cast<host_float>(beta1)),
        beta2_(static_cast<host_float>(beta2)),
        epsilon_(static_cast<host_float>(epsilon)) {
    detail::check_learning_rate("AdamOptimizer", learning_rate_);
    detail::check_argument(beta1_ >= 0 && beta1_ < 1, "AdamOptimizer", "beta1", "in [0, 1)",
                                 beta1_);
    detail::check_argument(beta2_ >= 0 && beta2_ < 1, "AdamOptimizer", "beta2", "in [0, 1)",
                                 beta2_);
    detail::check_argument(std::isfinite(epsilon_) && epsilon_ >= 0, "AdamOptimizer",
                                 "epsilon", "finite and >= 0", epsilon_);
  }

  /// beta1_power starts at beta1, beta2_power at beta2.
  template <class S>
  S initial_non_slot_value(std::size_t k) const {
    return static_cast<S>(k == 0 ? beta1_ : beta2_);
  }

  /// apply_dense is elementwise: a large variable's update may run on the intra-op threads.
  static constexpr bool elementwise_update = true;
  /// One variable's update (formula above); non_slots = {beta1_power, beta2_power}.
  template <class M, class G, class Slots, class NonSlots>
  void apply_dense(M& value, const G& grad, Slots& slots, NonSlots& non_slots) const {
    using S = typename M::Scalar;
    const auto b1 = static_cast<S>(beta1_);
    const auto b2 = static_cast<S>(beta2_);
    const auto b1p = static_cast<S>(non_slots[0]);
    const auto b2p = static_cast<S>(non_slots[1]);
    const S alpha = static_cast<S>(learning_rate_) * std::sqrt(S(1) - b2p) / (S(1) - b1p);
    auto m = slots.slot[0].array();
    auto v = slots.slot[1].array();
    m += (grad.array() - m) * (S(1) - b1);
    v += (grad.array().square() - v) * (S(1) - b2);
    value.array() -= (m * alpha) / (v.sqrt() + static_cast<S>(epsilon_));
  }
  /// After every variable's update: beta1_power *= beta1, beta2_power *= beta2.
  template <class NonSlots>
  void finish(NonSlots& non_slots) const {
    using S = typename NonSlots::value_type;
    non_slots[0] *= static_cast<S>(beta1_);
    non_slots[1] *= static_cast<S>(beta2_);
  }

  host_float learning_rate() const { return learning_rate_; }
  /// Sets the learning rate the following updates use (a schedule hook calls it between steps).
  /// Throws std::invalid_argument unless it is finite and >= 0.
  void set_learning_rate(double learning_rate) {
    const auto lr = static_cast<host_float>(learning_rate);
    detail::check_learning_rate("AdamOptimizer", lr);
    learning_rate_ = lr;
  }
  host_float beta1() const { return beta1_; }
  host_float beta2() const { return beta2_; }
  host_float epsilon() const { return epsilon_; }

 private:
  host_float learning_rate_;
  host_float beta1_;
  host_float beta2_;
  host_float epsilon_;
};

}  // namespace hookfuse
