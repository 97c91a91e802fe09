// hookfuse/estimator/estimator_spec.hpp: EstimatorSpec, what a model_fn returns
// (tf.estimator.EstimatorSpec), and the checks of what each mode needs.
#pragma once

#include <boost/hana/tuple.hpp>
#include <type_traits>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/estimator/mode_keys.hpp"

namespace hookfuse {

/// A field an EstimatorSpec was not given (TF: None).
struct NoField {};

namespace detail {
template <class T>
inline constexpr bool has_field_v = !std::is_same_v<T, NoField>;

template <class T>
inline constexpr bool is_named_v = false;
template <class N, class E>
inline constexpr bool is_named_v<BasicNamed<N, E>> = true;

template <class T>
inline constexpr bool is_hana_tuple_v = false;
template <class... Ts>
inline constexpr bool is_hana_tuple_v<boost::hana::tuple<Ts...>> = true;

/// A spec's hook field as a hana tuple (none: empty).
template <class T>
auto as_hook_tuple(T t) {
  if constexpr (std::is_same_v<T, NoField>)
    return boost::hana::make_tuple();
  else
    return t;
}

/// Fails to compile, naming the field and the mode, for a spec that lacks what its mode needs.
template <Mode M, bool HasTrainOp, bool HasLoss, bool HasPredictions>
constexpr bool check_spec_fields() {
  static_assert(M != Mode::train || HasTrainOp,
                "hookfuse: EstimatorSpec for ModeKeys::TRAIN has no train_op: set .train_op = "
                "optimizer.minimize(loss, vars.global_step()) (TF: ValueError 'Missing "
                "train_op.')");
  static_assert(M != Mode::eval || HasLoss,
                "hookfuse: EstimatorSpec for ModeKeys::EVAL has no loss: set .loss = "
                "named<\"loss\">(...) (TF: ValueError 'Missing loss.')");
  static_assert(M != Mode::predict || HasPredictions,
                "hookfuse: EstimatorSpec for ModeKeys::PREDICT has no predictions: set "
                ".predictions = named<\"predictions\">(...) or predictions(named<\"a\">(...), "
                "...) (TF: ValueError 'Missing predictions.')");
  return true;
}
}  // namespace detail

/// Several named prediction tensors (TF: a dict of predictions): predictions(named<"classes">
/// (...), named<"probabilities">(...)). Each must be a named tensor.
template <class... Ps>
constexpr auto predictions(Ps... ps) {
  static_assert((detail::is_named_v<Ps> && ...),
                "hookfuse: predictions(...) takes named tensors: named<\"probabilities\">(...)");
  return boost::hana::make_tuple(ps...);
}

/// Named tensors a TRAIN model computes besides its loss, for the hooks passed to
/// Estimator::train to fetch by name (TF: any tensor of the graph, fetched by its name, as
/// LoggingTensorHook(["train_accuracy"]) does): training_tensors(named<"train_accuracy">(
/// accuracy(labels, logits))). Each is a named tensor or a summary declaration
/// (summary::scalar<"a">(named<"a">(...)): fetched as "a", and written by the session's
/// SummarySaverHook into model_dir, as TF's tf.compat.v1.summary.scalar in a model_fn).
template <class... Ts>
constexpr auto training_tensors(Ts... ts) {
  static_assert(((detail::is_named_v<Ts> || requires { typename Ts::summarized_type; }) && ...),
                "hookfuse: training_tensors(...) takes named tensors (named<\"train_accuracy\">("
                "...)) or summary declarations (summary::scalar<\"a\">(named<\"a\">(...)))");
  return boost::hana::make_tuple(ts...);
}

/// What a model_fn returns for one mode, tf.estimator.EstimatorSpec(mode, predictions, loss,
/// train_op, eval_metric_ops, training_hooks, evaluation_hooks, prediction_hooks), set by name:
///
///     return EstimatorSpec{.mode = mode, .predictions = logits, .loss = loss,
///                          .train_op = GradientDescentOptimizer(0.1).minimize(loss,
///                          vars.global_step()), .eval_metric_ops =
///                          eval_metric_ops(metric<"accuracy">(
///                              metrics::Accuracy{}, labels, logits))};
///
///   mode              the ModeKey the model_fn received (ModeKeys::TRAIN, EVAL or PREDICT).
///   predictions       a named tensor (named<"predictions">(...)), [batch, k], or several
///                     (predictions(named<"a">(...), ...)): what predict() returns per example.
///   loss              a scalar ([1, 1]) tensor; in TRAIN the train op's loss is used.
///   train_op          optimizer.minimize(loss, vars.global_step()) (optim/optimizer.hpp).
///   eval_metric_ops   eval_metric_ops(metric<"name">(Metric, inputs...), ...)
///                     (metrics/metric_op.hpp); "loss" is reserved (evaluate() adds it).
///   training_hooks, evaluation_hooks, prediction_hooks
///                     hooks(...) run in that mode after the Estimator's own (session hooks,
///                     hooks/concepts.hpp).
///   training_tensors  training_tensors(named<"a">(...), ...): tensors that hooks passed to
///                     train() (or training_hooks) may fetch by name in TRAIN; bound with the
///                     loss, computed only in the runs that fetch them. Ignored in EVAL and
///                     PREDICT. (Beyond TF's EstimatorSpec: a TF graph's tensors are all
///                     fetchable by name; a hookfuse model is the loss's expression, so the
///                     others are named here.)
/// A field not given is NoField. The mode's required fields (TRAIN: train_op; EVAL: loss;
/// PREDICT: predictions) are checked when the spec's type is completed: a spec without one is a
/// compile error naming the field and the mode (TensorFlow: a ValueError at run time). Fields
/// other modes need may be given as well (one model_fn for every mode).
template <class ModeT, class Predictions = NoField, class Loss = NoField, class TrainOp = NoField,
          class EvalMetricOps = NoField, class TrainingHooks = boost::hana::tuple<>,
          class EvaluationHooks = boost::hana::tuple<>,
          class PredictionHooks = boost::hana::tuple<>,
          class TrainingTensors = boost::hana::tuple<>>
struct EstimatorSpec {
  static_assert(detail::is_mode_key_v<ModeT>,
                "hookfuse: EstimatorSpec's .mode is the mode the model_fn received "
                "(ModeKeys::TRAIN, ModeKeys::EVAL or ModeKeys::PREDICT)");
  static_assert(
      detail::check_spec_fields<ModeT::value, detail::has_field_v<TrainOp>,
                                detail::has_field_v<Loss>, detail::has_field_v<Predictions>>());
  static_assert(!detail::has_field_v<Predictions> || detail::is_named_v<Predictions> ||
                    detail::is_hana_tuple_v<Predictions>,
                "hookfuse: EstimatorSpec's .predictions is a named tensor (named<\"name\">(...)) "
                "or predictions(named<\"a\">(...), ...): predict() returns them by name");
  static_assert(detail::is_hana_tuple_v<TrainingTensors>,
                "hookfuse: EstimatorSpec's .training_tensors is training_tensors(named<\"a\">("
                "...), ...)");

  ModeT mode;
  Predictions predictions{};
  Loss loss{};
  TrainOp train_op{};
  EvalMetricOps eval_metric_ops{};
  TrainingHooks training_hooks{};
  EvaluationHooks evaluation_hooks{};
  PredictionHooks prediction_hooks{};
  TrainingTensors training_tensors{};
};

namespace detail {
template <class T>
inline constexpr bool is_estimator_spec_v = false;
template <class... Ts>
inline constexpr bool is_estimator_spec_v<EstimatorSpec<Ts...>> = true;
}  // namespace detail

}  // namespace hookfuse
