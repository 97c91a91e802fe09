// hookfuse/optim/gradient_descent.hpp: plain SGD (tf.compat.v1.train.GradientDescentOptimizer).
#pragma once

#include <cmath>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/optim/global_step.hpp"
#include "hookfuse/optim/optimizer.hpp"

namespace hookfuse {

/// Stochastic gradient descent: for every trainable variable v, v -= learning_rate * dloss/dv.
/// Mirrors tf.compat.v1.train.GradientDescentOptimizer(learning_rate).
/// The learning rate is kept as host_float (double; float in embedded builds) and converted to
/// each variable's scalar type (float or double) on use.
class GradientDescentOptimizer : public detail::OptimizerBase<GradientDescentOptimizer> {
 public:
  /// Throws std::invalid_argument unless learning_rate is finite and >= 0.
  explicit GradientDescentOptimizer(double learning_rate)
      : learning_rate_(static_cast<host_float>(learning_rate)) {
    detail::check_learning_rate("GradientDescentOptimizer", learning_rate_);
  }

  /// Applies one update to a variable from its gradient (tf's apply_gradients for one pair).
  template <class V>
  void apply(V& variable) const {
    using S = typename V::scalar;
    variable.value.noalias() -= static_cast<S>(learning_rate_) * variable.grad;
  }

  /// SGD's update is linear in the gradient (value += update_scale * gradient), so the session
  /// folds it into the backward pass when no hook reads the gradient (see autodiff/fusion_policy.hpp).
  template <class S>
  S update_scale() const {
    return static_cast<S>(-learning_rate_);
  }

  host_float learning_rate() const { return learning_rate_; }
  /// Sets the learning rate the following updates use (a schedule hook calls it between steps).
  /// Throws std::invalid_argument unless it is finite and >= 0.
  void set_learning_rate(double learning_rate) {
    const auto lr = static_cast<host_float>(learning_rate);
    detail::check_learning_rate("GradientDescentOptimizer", lr);
    learning_rate_ = lr;
  }

 private:
  host_float learning_rate_;
};

}  // namespace hookfuse
