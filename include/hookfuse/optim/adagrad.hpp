// hookfuse/optim/adagrad.hpp: Adagrad (tf.compat.v1.train.AdagradOptimizer).
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/optim/optimizer.hpp"

namespace hookfuse {

/// Adagrad, as tf.compat.v1.train.AdagradOptimizer(learning_rate,
/// initial_accumulator_value = 0.1) (TF1's ApplyAdagrad kernel, no epsilon), for every variable
/// v with gradient g:
///   accum = accum + g * g        slot "<var>/Adagrad", starts at initial_accumulator_value
///   v -= learning_rate * g / sqrt(accum)
/// Never fused into the backward pass.
class AdagradOptimizer : public detail::SlotOptimizerBase<AdagradOptimizer> {
 public:
  using slot_names = SlotNames<"Adagrad">;
  using non_slot_names = SlotNames<>;

  explicit AdagradOptimizer(double learning_rate, double initial_accumulator_value = 0.1)
      : learning_rate_(static_cast<host_float>(learning_rate)),
        initial_accumulator_value_(static_cast<host_float>(initial_accumulator_value)) {
    detail::check_learning_rate("AdagradOptimizer", learning_rate_);
    // TF1: ValueError("initial_accumulator_value must be positive").
    detail::check_argument(
        std::isfinite(initial_accumulator_value_) && initial_accumulator_value_ > 0,
        "AdagradOptimizer", "initial_accumulator_value", "finite and > 0 (TensorFlow: positive)",
        initial_accumulator_value_);
  }

  template <class S>
  S initial_slot_value(std::size_t) const {
    return static_cast<S>(initial_accumulator_value_);
  }

  /// apply_dense is elementwise: a large variable's update may run on the intra-op threads.
  static constexpr bool elementwise_update = true;
  /// One variable's update (formula above).
  template <class M, class G, class Slots, class NonSlots>
  void apply_dense(M& value, const G& grad, Slots& slots, NonSlots&) const {
    using S = typename M::Scalar;
    auto accum = slots.slot[0].array();
    accum += grad.array().square();
    value.array() -= static_cast<S>(learning_rate_) * grad.array() * accum.rsqrt();
  }
  template <class NonSlots>
  void finish(NonSlots&) const {}

  host_float learning_rate() const { return learning_rate_; }
  /// Sets the learning rate the following updates use (a schedule hook calls it between steps).
  /// Throws std::invalid_argument unless it is finite and >= 0.
  void set_learning_rate(double learning_rate) {
    const auto lr = static_cast<host_float>(learning_rate);
    detail::check_learning_rate("AdagradOptimizer", lr);
    learning_rate_ = lr;
  }
  host_float initial_accumulator_value() const { return initial_accumulator_value_; }

 private:
  host_float learning_rate_;
  host_float initial_accumulator_value_;
};

}  // namespace hookfuse
