// hookfuse/metrics/metric_op.hpp: a streaming metric bound to the tensors it reads, the entry of
// an EstimatorSpec's eval_metric_ops (TF: the (value_op, update_op) pair that
// tf.compat.v1.metrics.accuracy(labels, predictions) returns).
#pragma once

#include <Eigen/Core>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/metrics/concepts.hpp"

namespace hookfuse::metrics {

namespace detail {
/// The name under which a metric's K-th input is computed: "<metric>/input_<K>".
template <fixed_string Name, std::size_t K>
constexpr auto input_name() {
  static_assert(K < 10, "hookfuse: a metric reads at most 10 tensors");
  fixed_string<9> suffix("/input_0");
  suffix.data[7] = static_cast<char>('0' + K);
  return concat(Name, suffix);
}
}  // namespace detail

/// The streaming metric `Metric` (metrics/: Accuracy, Mean, AUC, ...) reading the tensors
/// `Inputs` (named expressions, "<Name>/input_0", ...). An evaluation computes the inputs for
/// each batch and calls metric.update(inputs...) on them; the metric's value() is its result
/// under `name`.
template <fixed_string Name, class Metric, class... Inputs>
struct MetricOp {
  static constexpr auto name = Name;
  using metric_type = Metric;
  Metric metric;
  boost::hana::tuple<Inputs...> inputs;
};

/// `metric<"accuracy">(metrics::Accuracy{}, labels, predictions)`: the metric named "accuracy"
/// over those tensors (placeholders, variables or expressions; their shapes are the metric's
/// to check, see each metric), for an EstimatorSpec's eval_metric_ops. The name is the key of
/// evaluate()'s result and the tag of its summary.
template <fixed_string Name, class Metric_, Operand... Xs>
auto metric(Metric_ m, Xs&&... xs) {
  static_assert(Name.size() > 0, "hookfuse: metric<\"name\">(...): name the metric");
  static_assert(Metric<Metric_>,
                "hookfuse: metric<\"name\">(m, ...): m is a streaming metric "
                "(metrics/concepts.hpp: value(), reset(), num_inputs)");
  static_assert(Metric_::num_inputs == static_cast<int>(sizeof...(Xs)),
                "hookfuse: metric<\"name\">(m, tensors...): give the metric as many tensors as "
                "it reads (Metric_::num_inputs: 1 for Mean, labels and predictions for the "
                "others)");
  static_assert(Name.view() != "loss" && Name.view() != "global_step",
                "hookfuse: metric<\"loss\"> and metric<\"global_step\">: the Estimator reports "
                "these itself (TF: ValueError 'Metric with name \"loss\" is not allowed')");
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    return MetricOp<Name, Metric_, Named<detail::input_name<Name, K>(), expr_t<Xs>>...>{
        std::move(m), boost::hana::make_tuple(Named<detail::input_name<Name, K>(), expr_t<Xs>>{
                          as_expr(static_cast<Xs&&>(xs))}...)};
  }
  (std::index_sequence_for<Xs...>{});
}

/// The metrics of an EstimatorSpec: eval_metric_ops(metric<"a">(...), metric<"b">(...)).
/// Names must differ.
template <class... Ops>
auto eval_metric_ops(Ops... ops) {
  return boost::hana::make_tuple(std::move(ops)...);
}

}  // namespace hookfuse::metrics

namespace hookfuse {
using metrics::eval_metric_ops;
using metrics::metric;
}  // namespace hookfuse
