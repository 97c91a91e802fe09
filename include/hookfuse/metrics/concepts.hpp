// hookfuse/metrics/concepts.hpp: what a streaming metric is, for the code that holds several
// (an Estimator's eval_metric_ops, a hook): TensorFlow's (value, update_op) pair as one object.
//
//   m.update(inputs...)   the update op: adds a batch to the local variables, returns the
//                         updated value (float); num_inputs arguments (values, or labels and
//                         predictions), each an Eigen matrix whose rows are the batch
//   m.value()             the value tensor: what the local variables give now (float)
//   m.reset()             local_variables_initializer: back to the state before any update
//   M::num_inputs         how many tensors update() takes (1 for Mean, 2 for the others)
#pragma once

#include <concepts>

namespace hookfuse::metrics {

/// A streaming metric: value(), reset() and num_inputs as above. update() is a template (any
/// Eigen input type), so it is not part of the concept; each metric documents its inputs.
template <class M>
concept Metric = requires(M& m, const M& cm) {
  { cm.value() } -> std::same_as<float>;
  m.reset();
  { M::num_inputs } -> std::convertible_to<int>;
  requires M::num_inputs == 1 || M::num_inputs == 2;
};

}  // namespace hookfuse::metrics
