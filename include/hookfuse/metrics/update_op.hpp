// hookfuse/metrics/update_op.hpp: a streaming metric's update as a tensor of the model, for a
// training summary or a hook's fetch (TF: the update_op of tf.compat.v1.metrics.accuracy,
// summarised with tf.compat.v1.summary.scalar("train_accuracy", update_op)).
#pragma once

#include <cstddef>
#include <type_traits>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/metrics/concepts.hpp"

namespace hookfuse::metrics {
namespace detail {

/// Each time it is computed: `metric->update(inputs...)`, the updated value as a [1, 1] tensor.
/// Not differentiable. Its scalar is that of input `ScalarFrom`, the first floating-point one.
template <class M, std::size_t ScalarFrom>
struct UpdateOp {
  M* metric;
  static constexpr bool differentiable = false;
  static constexpr std::size_t scalar_from = ScalarFrom;
  template <class... D>
  static constexpr Dims dims(D...) {
    return {1, 1};
  }
  template <class... D>
  static constexpr bool valid(D...) {
    return true;
  }
  template <class... Sh>
  static hookfuse::detail::Shape shape(Sh...) {
    return {1, 1};
  }

  template <class S, Dims Out, Dims... In>
  struct kernel {
    M* metric;
    explicit kernel(const UpdateOp& op) : metric(op.metric) {}
    template <class... Sh>
    void reserve(Sh...) {}
    template <class O, class... X>
    void forward(O& out, const X&... xs) {
      out(0, 0) = static_cast<S>(metric->update(xs...));
    }
  };
};

/// The position of the first floating-point scalar among Ss (sizeof...(Ss) when none is).
template <class... Ss>
constexpr std::size_t first_floating() {
  constexpr bool floating[] = {std::is_floating_point_v<Ss>..., false};
  std::size_t i = 0;
  while (i < sizeof...(Ss) && !floating[i]) ++i;
  return i;
}

}  // namespace detail

/// The update of `metric` over `inputs` as a [1, 1] tensor (TF: a metric's update_op): every
/// time the tensor is computed (fetched, or written by a summary), the batch is added to the
/// metric and its updated value is the tensor's value. Like TensorFlow's update_op, it counts
/// only the runs that compute it: in `summary::scalar<"train_accuracy">(update_op(acc, y,
/// logits))`, the batches of the steps the SummarySaverHook writes. The tensor's scalar is the
/// first floating-point input's (at least one input is float or double: a compile error
/// otherwise). `metric` must outlive the bound graph (in an Estimator's model_fn, keep it in the
/// VariableStore: `vars.layer<metrics::Accuracy>("train_accuracy")`). Errors as the metric's
/// update().
template <Metric M, Operand... Xs>
auto update_op(M& metric, Xs&&... inputs) {
  static_assert(M::num_inputs == static_cast<int>(sizeof...(Xs)),
                "hookfuse: update_op(metric, tensors...): give the metric as many tensors as it "
                "reads (M::num_inputs)");
  constexpr std::size_t from = detail::first_floating<typename expr_t<Xs>::scalar...>();
  static_assert(from < sizeof...(Xs),
                "hookfuse: update_op(metric, tensors...): the metric's value is a float, and the "
                "tensor takes the scalar type of one input: give at least one float or double "
                "input (scores or probabilities, or class ids as float)");
  using Op = detail::UpdateOp<M, from>;
  return node_t<Op, Xs...>{{}, Op{&metric}, {static_cast<Xs&&>(inputs)...}};
}

}  // namespace hookfuse::metrics
