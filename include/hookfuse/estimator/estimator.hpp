// hookfuse/estimator/estimator.hpp: Estimator, train / evaluate over a model_fn
// (tf.estimator.Estimator).
//
// As in TensorFlow, every call builds the mode's model afresh: it calls the model_fn with a new
// variable store, takes the variables from model_dir's latest checkpoint (fresh initial values
// only when there is none, then warm_start_from applies) and runs a session over them. Modes
// share nothing but the files in model_dir.
#pragma once

#include <algorithm>
#include <boost/hana/at.hpp>
#include <boost/hana/concat.hpp>
#include <boost/hana/flatten.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/summary.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/estimator/detail/evaluation.hpp"
#include "hookfuse/estimator/detail/loss_summary.hpp"
#include "hookfuse/estimator/detail/model_dir.hpp"
#include "hookfuse/estimator/detail/model_variables.hpp"
#include "hookfuse/estimator/estimator_args.hpp"
#include "hookfuse/estimator/estimator_input.hpp"
#include "hookfuse/estimator/estimator_spec.hpp"
#include "hookfuse/estimator/mode_keys.hpp"
#include "hookfuse/estimator/prediction_range.hpp"
#include "hookfuse/estimator/run_config.hpp"
#include "hookfuse/estimator/warm_start_settings.hpp"
#include "hookfuse/hooks/checkpoint_saver_hook.hpp"
#include "hookfuse/hooks/logging_tensor_hook.hpp"
#include "hookfuse/hooks/nan_tensor_hook.hpp"
#include "hookfuse/hooks/stop_at_step_hook.hpp"
#include "hookfuse/hooks/summary_saver_hook.hpp"
#include "hookfuse/io/checkpoint_reader.hpp"
#include "hookfuse/io/checkpoint_state.hpp"
#include "hookfuse/io/init_from_checkpoint.hpp"
#include "hookfuse/io/saver.hpp"
#include "hookfuse/io/summary_writer_cache.hpp"
#include "hookfuse/metrics/metric_op.hpp"
#include "hookfuse/nn/variable_store.hpp"
#include "hookfuse/session/conditional_hook.hpp"
#include "hookfuse/session/evaluation_session.hpp"
#include "hookfuse/session/monitored_session.hpp"
#include "hookfuse/session/session_options.hpp"

namespace hookfuse {

/// No params (a model_fn without a params argument).
struct NoParams {};

/// tf.estimator.Estimator(model_fn, model_dir | config, params, warm_start_from):
///
///     auto model_fn = [](X x, Y y, auto mode, const Params& params, auto& vars) {
///       auto& W = nn::get_variable<"W", float, 1, 1>(vars);
///       auto& b = nn::get_variable<"b", float, 1, 1, 1>(vars);
///       auto predictions = named<"predictions">(matmul(x, W) + b);
///       auto loss = named<"loss">(mean_squared_error(y, predictions));
///       return EstimatorSpec{.mode = mode, .predictions = predictions, .loss = loss,
///           .train_op = GradientDescentOptimizer(params.learning_rate)
///                           .minimize(loss, vars.global_step())};
///     };
///     Estimator estimator(model_fn, RunConfig{.model_dir = "d"}, Params{0.01});
///     estimator.train(numpy_input_fn<X, Y>(xs, 4, ys, {...}), {.steps = 1000});
///     EvalResult r = estimator.evaluate(eval_input_fn);
///
/// The model_fn is called as model_fn(features, labels, mode, params, vars), or without params
/// (model_fn(features, labels, mode, vars)) when it takes four arguments: `features` and
/// `labels` are the placeholders the input_fn's EstimatorInput names (labels is NoField in
/// predict), `mode` is ModeKeys::TRAIN, EVAL or PREDICT (a type per mode), and `vars` is the
/// store that owns every variable of this model (nn/variable_store.hpp): an nn::VariableStore
/// in TRAIN; in EVAL and PREDICT an nn::ForwardVariableStore (variables without gradient
/// matrices) when the model_fn takes it as `auto& vars`, else an nn::VariableStore. A
/// variable the model's tensors refer to that the store does not own (a local of the model_fn)
/// is refused with ValueError naming it before any value is read. It returns an EstimatorSpec.
/// `warm_start_from` (WarmStartFrom: a checkpoint path, WarmStartSettings or io::WarmStart)
/// applies only when model_dir has no checkpoint (estimator/warm_start_settings.hpp).
/// Construction checks the config (RunConfig::validate) and creates nothing on disk.
template <class ModelFn, class Params = NoParams, Clock C = SteadyClock, Logger L = StderrLogger>
class Estimator {
 public:
  Estimator(ModelFn model_fn, RunConfig<C, L> config, Params params = {},
            std::optional<WarmStartFrom> warm_start_from = std::nullopt)
      : model_fn_(std::move(model_fn)),
        config_(std::move(config)),
        params_(std::move(params)),
        warm_start_(std::move(warm_start_from)) {
    config_.validate();
  }

  const RunConfig<C, L>& config() const { return config_; }
  const std::string& model_dir() const { return config_.model_dir; }
  const Params& params() const { return params_; }
  L& logger() { return config_.logger; }

  /// Trains the model (tf.estimator.Estimator.train(input_fn, hooks, steps, max_steps,
  /// saving_listeners)). `input_fn()` returns an EstimatorInput (numpy_input_fn<X, Y>(...)).
  /// With max_steps already reached by model_dir's checkpoint, logs "Skipping training since
  /// max_steps has already saved." and returns without calling input_fn, the model_fn or any
  /// hook. Otherwise runs a MonitoredTrainingSession whose hooks are, in TensorFlow's order
  /// (estimator.py _train_with_estimator_spec and MonitoredTrainingSession): the
  /// CheckpointSaverHook (RunConfig's cadence, `saving_listeners` attached; none when the
  /// cadence is <= 0), the StepCounterHook and SummarySaverHook (every log_step_count_steps and
  /// save_summary_steps, into model_dir; the loss is written as "loss"), the caller's `hooks`,
  /// StopAtStepHook(steps or max_steps), NanTensorHook on the loss, LoggingTensorHook "loss =
  /// ..., step = ..." every log_step_count_steps runs, then the spec's training_hooks. Restores
  /// model_dir's latest checkpoint (warm_start_from applies only when there is none), logs
  /// "Loss for final step: X." and, through the saver hook's end(), saves the last step. The
  /// spec's training_tensors are bound with the loss, so every hook here may fetch them by name.
  /// Errors: ValueError for bad steps / max_steps ("Must specify steps > 0, given: 0", "Can not
  /// provide both steps and max_steps."), for a model_dir that exists and is not a directory
  /// (nothing written), for saving_listeners without a checkpoint cadence (RunConfig's
  /// save_checkpoints_steps or _secs <= 0: "There should be a CheckpointSaverHook to use
  /// saving_listeners. ..."), for a model variable the VariableStore does not own,
  /// or a train_op not made with vars.global_step(); the session's and saver's errors. An error
  /// from a hook's end() reaches the caller after every hook's end() has run (the final
  /// checkpoint is still saved); later ones are logged at ERROR through the config's logger
  /// (MonitoredTrainingSession::close(logger)). A non-chief (RunConfig::is_chief false) restores
  /// read-only and writes nothing; with a cross_replica_sum, train returns once every replica
  /// has ended, after the chief's last save (data-parallel ranks: docs/distributed.md).
  template <class InputFn, class Hooks = boost::hana::tuple<>,
            class Listeners = boost::hana::tuple<>>
  Estimator& train(InputFn&& input_fn, TrainArgs args = {}, Hooks hooks = {},
                   Listeners saving_listeners = {}) {
    args.validate();
    detail::check_model_dir(config_.model_dir, "Estimator.train");
    if (args.max_steps) {
      const std::int64_t start = detail::checkpoint_global_step(config_.model_dir);
      if (*args.max_steps <= start) {
        config_.logger.log(Severity::info, "Skipping training since max_steps has already saved.");
        return *this;
      }
    }
    const std::optional<double> ckpt_secs = config_.checkpoint_secs();
    const bool saves = (ckpt_secs && *ckpt_secs > 0) ||
                       (config_.save_checkpoints_steps && *config_.save_checkpoints_steps > 0);
    if (decltype(boost::hana::length(saving_listeners))::value > 0 && !saves)
      detail::fail<ValueError>(
          "Estimator.train: There should be a CheckpointSaverHook to use saving_listeners. "
          "Please set one of the RunConfig.save_checkpoints_steps or "
          "RunConfig.save_checkpoints_secs.");
    auto in = detail::call_input_fn(input_fn);
    nn::VariableStore vars;
    if (config_.tf_random_seed) vars.seed = static_cast<std::uint64_t>(*config_.tf_random_seed);
    auto spec = call_model_fn(in, ModeKeys::TRAIN, vars);
    auto train_op = detail::with_loss_summary(spec.train_op);
    if (train_op.global_step != &vars.global_step())
      detail::fail<ValueError>(
          "Estimator.train: the train_op's global step is not the model's: make it with "
          "optimizer.minimize(loss, vars.global_step()) on the VariableStore the model_fn "
          "received");
    auto extras = std::move(spec.training_tensors);
    {
      detail::ModelVariables owned(vars);
      owned.add(train_op.loss);
      owned.add_tuple(extras);
    }
    using LossT = decltype(detail::named_loss(spec.train_op.loss));
    constexpr auto loss_name = LossT::name;

    io::Saver saver(
        SaverOptions{.max_to_keep = config_.keep_checkpoint_max,
                     .keep_checkpoint_every_n_hours = config_.keep_checkpoint_every_n_hours});
    const detail::SaverRef saver_ref{&saver};
    using CkptHook = CheckpointSaverHook<detail::SaverRef, Listeners, C, L>;
    ConditionalHook<CkptHook> ckpt_hook;
    if (saves)
      ckpt_hook.emplace(config_.model_dir,
                        typename CkptHook::Options{.save_secs = ckpt_secs,
                                                   .save_steps = config_.save_checkpoints_steps},
                        saver_ref, std::move(saving_listeners), config_.clock, config_.logger);

    ConditionalHook<StopAtStepHook> stop_hook;
    if (args.steps || args.max_steps)
      stop_hook.emplace(
          StopAtStepHook::Options{.num_steps = args.steps, .last_step = args.max_steps});
    using LogHook = BasicLoggingTensorHook<LoggingPolicies<C, L, TensorTags<"loss", "step">>,
                                           loss_name, "global_step">;
    ConditionalHook<LogHook> log_hook;
    if (config_.log_step_count_steps > 0)
      log_hook.emplace(typename LogHook::Options{.every_n_iter = config_.log_step_count_steps},
                       TensorTags<"loss", "step">{}, config_.clock, config_.logger);

    auto worker_hooks = boost::hana::concat(
        boost::hana::concat(std::move(hooks),
                            boost::hana::make_tuple(std::move(stop_hook),
                                                    NanTensorHook<loss_name, L>({}, config_.logger),
                                                    std::move(log_hook))),
        detail::as_hook_tuple(std::move(spec.training_hooks)));

    SessionOptions<detail::SaverRef, C, L> options{
        .is_chief = config_.is_chief,  // a non-chief restores from model_dir, writes nothing
        .checkpoint_dir = config_.model_dir,
        .save_checkpoint_secs = 0.0,  // saving is the chief-only CheckpointSaverHook's
        .save_summaries_steps = config_.save_summary_steps,
        .log_step_count_steps = config_.log_step_count_steps,
        .saver = saver_ref,
        // TF warm-starts only when model_dir has no checkpoint (_train_with_estimator_spec)
        .warm_start_from = io::latest_checkpoint(std::filesystem::path(config_.model_dir))
                               ? std::nullopt
                               : warm_start_,
        .clock = config_.clock,
        .logger = config_.logger};
    auto input = detail::estimator_feeds<decltype(in)>::make(in.input);
    std::optional<float> last_loss;
    boost::hana::unpack(std::move(extras), [&](auto&&... tensors) {
      MonitoredTrainingSession session(
          std::move(train_op), input, std::move(options), std::move(worker_hooks),
          ChiefOnlyHooks<ConditionalHook<CkptHook>>{boost::hana::make_tuple(std::move(ckpt_hook))},
          std::move(tensors)...);
      while (!session.should_stop()) {
        auto values = session.template run<loss_name>();
        if (!values) break;
        last_loss = static_cast<float>((*values).template get<loss_name>().item());
      }
      session.close(config_.logger);
    });
    detail::wait_for_replicas(config_);  // the chief's last checkpoint is on disk for every rank
    if (!last_loss)
      config_.logger.log(Severity::warning,
                         "Training with estimator made no steps. Perhaps input is empty or "
                         "misspecified.");
    config_.logger.log(Severity::info,
                       "Loss for final step: " +
                           (last_loss ? detail::float32_str(*last_loss) : std::string("None")) +
                           ".");
    return *this;
  }

  /// Evaluates the model (tf.estimator.Estimator.evaluate(input_fn, steps, hooks,
  /// checkpoint_path, name)): restores the checkpoint (args.checkpoint_path, else model_dir's
  /// latest; neither but warm_start_from: the warm start's values at global step 0; neither at
  /// all: ValueError "Could not find trained model in model_dir: <dir>."), runs a
  /// MonitoredSession (forward only: no gradient buffer, no optimizer slot) with the caller's
  /// `hooks` then the spec's evaluation_hooks over at most args.steps batches or until the
  /// input ends, and streams every metric of eval_metric_ops, plus "loss": the mean of the
  /// per-batch losses, each batch counted once whatever its size (TF: estimator.py
  /// _verify_and_create_loss_metric, `loss_metric = tf.compat.v1.metrics.mean(loss)` of the
  /// scalar loss). Logs "Saving dict for global step N: a = ..., global_step = N, loss = ..."
  /// (keys sorted, values as numpy prints float32) and writes one event at step N with every
  /// metric (simple_value; not global_step) into model_dir/eval or model_dir/eval_<name>,
  /// through that directory's shared writer (io::SummaryWriterCache), flushed. Returns the
  /// metrics and the global step. Errors: ValueError for steps <= 0 and a missing model; the
  /// restore's errors (io::NotFoundError for a checkpoint_path that does not exist, naming it)
  /// before any hook runs or any file is written. An error from a hook's end() reaches the
  /// caller after every hook's end() has run, later ones logged through the config's logger.
  /// With RunConfig::cross_replica_sum every replica evaluates its shard and returns the metrics
  /// of all shards, the local variables summed first (metrics/reduce.hpp; ValueError naming a
  /// metric without them); only the chief (is_chief) logs the dict and writes the eval dir.
  template <class InputFn, class Hooks = boost::hana::tuple<>>
  EvalResult evaluate(InputFn&& input_fn, EvalArgs args = {}, Hooks hooks = {}) {
    if (args.steps && *args.steps <= 0)
      detail::fail<ValueError>("Estimator.evaluate: Must specify steps > 0, given: " +
                               std::to_string(*args.steps));
    const std::string checkpoint = checkpoint_to_restore(args.checkpoint_path, "evaluate");
    auto in = detail::call_input_fn(input_fn);
    store_for<decltype(in), ModeKey<Mode::eval>> vars;
    if (config_.tf_random_seed) vars.seed = static_cast<std::uint64_t>(*config_.tf_random_seed);
    auto spec = call_model_fn(in, ModeKeys::EVAL, vars);
    auto loss = detail::named_loss(spec.loss);
    auto ops = detail::as_hook_tuple(std::move(spec.eval_metric_ops));
    detail::ModelVariables owned(vars);
    owned.add(loss);
    boost::hana::for_each(ops, [&](const auto& op) { owned.add_tuple(op.inputs); });
    restore_or_warm_start(owned, vars, checkpoint);

    auto inputs =
        boost::hana::flatten(boost::hana::transform(ops, [](const auto& op) { return op.inputs; }));
    auto tensors = boost::hana::concat(boost::hana::make_tuple(loss), inputs);
    auto all_hooks = boost::hana::concat(std::move(hooks),
                                         detail::as_hook_tuple(std::move(spec.evaluation_hooks)));
    auto feed = detail::estimator_feeds<decltype(in)>::make(in.input);
    const auto names = detail::names_of(tensors);

    metrics::Mean loss_mean;  // TF's metrics.mean(loss): float32 total and count
    boost::hana::for_each(ops, [](auto& op) {
      if constexpr (requires { op.metric.reset(); }) op.metric.reset();
    });
    detail::check_replica_metrics(config_, ops);
    config_.logger.log(Severity::info, "Starting evaluation");
    const double started = config_.clock.now();
    std::int64_t evals = 0;
    boost::hana::unpack(std::move(tensors), [&](auto&&... ts) {
      MonitoredSession session(vars.global_step(), feed, std::move(all_hooks), std::move(ts)...);
      const std::int64_t log_every = (!args.steps || *args.steps < 20) ? 1 : *args.steps / 10;
      [&]<fixed_string... Ns>(detail::FetchNames<Ns...>) {
        while (!session.should_stop() && !(args.steps && evals >= *args.steps)) {
          auto values = session.template run<Ns...>();
          if (!values) break;
          ++evals;
          const TensorValue* results = (*values).results;
          loss_mean.update(Eigen::Matrix<float, 1, 1>::Constant(
              static_cast<float>(results[0].item())));
          std::size_t k = 1;
          boost::hana::for_each(ops, [&](auto& op) {
            constexpr std::size_t n = decltype(boost::hana::length(op.inputs))::value;
            [&]<std::size_t... I>(std::index_sequence<I...>) {
              op.metric.update(
                  detail::value_map<typename std::remove_cvref_t<decltype(boost::hana::at_c<I>(
                      op.inputs))>::scalar>(results[k + I])...);
            }
            (std::make_index_sequence<n>{});
            k += n;
          });
          if (evals % log_every == 0 || (args.steps && evals == *args.steps))
            config_.logger.log(Severity::info, args.steps
                                                   ? "Evaluation [" + std::to_string(evals) + "/" +
                                                         std::to_string(*args.steps) + "]"
                                                   : "Evaluation [" + std::to_string(evals) + "]");
        }
      }
      (names);
      session.close(config_.logger);
    });
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.5f", config_.clock.now() - started);
    config_.logger.log(Severity::info, std::string("Inference Time : ") + secs + "s");
    config_.logger.log(Severity::info, "Finished evaluation");

    if (config_.cross_replica_sum) detail::sum_across_replicas(config_, loss_mean, ops);
    EvalResult result;
    result.global_step = vars.global_step().value;
    result.metrics["loss"] = loss_mean.value();
    boost::hana::for_each(ops, [&](auto& op) {
      result.metrics[std::string(std::remove_cvref_t<decltype(op)>::name.view())] =
          static_cast<float>(op.metric.value());
    });
    if (config_.is_chief)
      detail::write_eval_summary(config_.logger, config_.model_dir, result, args.name);
    return result;
  }

  /// Predicts (tf.estimator.Estimator.predict(input_fn, predict_keys, hooks, checkpoint_path,
  /// yield_single_examples)): a PredictionRange over the input's examples (or batches), each
  /// element giving the named predictions, `get<"probabilities">()`. `Keys` selects predictions
  /// by name (none: all); a name the spec does not have is a compile error. The input_fn's
  /// features are fed, its labels (if any) are not; the model_fn receives NoField labels.
  /// Restores the checkpoint as evaluate() does (its errors are thrown here, before any hook
  /// runs); binds forward only; writes nothing.
  template <fixed_string... Keys, class InputFn, class Hooks = boost::hana::tuple<>>
  auto predict(InputFn&& input_fn, PredictArgs args = {}, Hooks hooks = {}) {
    using EI = std::remove_cvref_t<decltype(detail::call_input_fn(input_fn))>;
    using Store = store_for<EI, ModeKey<Mode::predict>>;
    using Spec = decltype(call_model_fn(std::declval<const EI&>(), ModeKeys::PREDICT,
                                        std::declval<Store&>()));
    if constexpr (!detail::predict_keys<decltype(detail::prediction_tuple(
                                            std::declval<Spec&>().predictions)),
                                        Keys...>::value) {
      return detail::NoPredictions{};  // after the compile error naming the key
    } else {
      auto in = detail::call_input_fn(input_fn);
      return PredictionRange<Estimator, EI, Hooks, Keys...>(*this, std::move(in), std::move(hooks),
                                                            args);
    }
  }

  /// The store a model_fn receives in `ModeT` for input `In`: ForwardVariableStore (variables
  /// without gradient matrices) in EVAL and PREDICT when the model_fn accepts one (it takes
  /// `auto& vars`), VariableStore otherwise.
  template <class In, class ModeT>
  using store_for = std::conditional_t<
      ModeT::value != Mode::train &&
          (std::is_invocable_v<ModelFn&, typename In::features_type, typename In::labels_type,
                               ModeT, const Params&, nn::ForwardVariableStore&> ||
           std::is_invocable_v<ModelFn&, typename In::features_type, typename In::labels_type,
                               ModeT, nn::ForwardVariableStore&>),
      nn::ForwardVariableStore, nn::VariableStore>;

  /// The model_fn called for `mode` with a fresh store of store_for<In, ModeT> (predict uses
  /// it too).
  template <class In, class ModeT, bool G>
  auto call_model_fn(const In&, ModeT mode, nn::BasicVariableStore<G>& vars) {
    using F = typename In::features_type;
    using Lb = typename In::labels_type;
    using Store = nn::BasicVariableStore<G>;
    if constexpr (std::is_invocable_v<ModelFn&, F, Lb, ModeT, const Params&, Store&>)
      return checked_spec(model_fn_(F{}, Lb{}, mode, std::as_const(params_), vars));
    else if constexpr (std::is_invocable_v<ModelFn&, F, Lb, ModeT, Store&>)
      return checked_spec(model_fn_(F{}, Lb{}, mode, vars));
    else
      static_assert(std::is_invocable_v<ModelFn&, F, Lb, ModeT, const Params&, Store&>,
                    "hookfuse: the model_fn cannot be called as model_fn(features, labels, mode, "
                    "params, vars) or model_fn(features, labels, mode, vars): features and labels "
                    "are the placeholders the input_fn's EstimatorInput names, mode a ModeKey, "
                    "vars a variable store (take it as `auto& vars`). An input without labels "
                    "(numpy_input_fn<X>) passes labels as NoField: take them as `auto labels`, or "
                    "name the labels placeholder without data, numpy_input_fn<X, Y>(x, n, "
                    "nullptr, options)");
  }

  /// The model_fn's result, which must be an EstimatorSpec.
  template <class S>
  static S checked_spec(S spec) {
    static_assert(detail::is_estimator_spec_v<S>,
                  "hookfuse: the model_fn returns something other than an EstimatorSpec (the "
                  "type 'S' in the instantiation above): return EstimatorSpec{.mode = mode, ...}");
    return spec;
  }

  /// The checkpoint a forward-only call restores: `given` (checked to exist) or model_dir's
  /// latest; empty when there is none and a warm start is set; otherwise TensorFlow's
  /// ValueError.
  std::string checkpoint_to_restore(const std::string& given, const char* who) const {
    if (!given.empty()) {
      (void)io::CheckpointReader(given);  // NotFoundError / DataLossError naming the path
      return given;
    }
    const auto latest = io::latest_checkpoint(std::filesystem::path(config_.model_dir));
    if (latest) return latest->string();
    if (warm_start_) return {};
    detail::fail<ValueError>(std::string("Estimator.") + who +
                             ": Could not find trained model in model_dir: " + config_.model_dir +
                             ".");
  }

  /// Restores the variables `owned` lists (and the global step) from `checkpoint`, or applies
  /// the warm start when it is empty.
  void restore_or_warm_start(const detail::ModelVariables& owned, nn::VariableStoreBase& vars,
                             const std::string& checkpoint) {
    if (!checkpoint.empty()) {
      const auto list = owned.list(&vars.global_step());
      io::Saver().restore(VariableList(list.data(), list.size()), checkpoint);
      config_.logger.log(Severity::info, "Restoring parameters from " + checkpoint);
    } else {
      const auto list = owned.list();
      warm_start_->apply(VariableList(list.data(), list.size()), config_.logger);
    }
  }

 private:
  ModelFn model_fn_;
  RunConfig<C, L> config_;
  Params params_;
  std::optional<WarmStartFrom> warm_start_;
};

template <class M, class C, class L>
Estimator(M, RunConfig<C, L>) -> Estimator<M, NoParams, C, L>;
template <class M, class C, class L, class P>
Estimator(M, RunConfig<C, L>, P) -> Estimator<M, P, C, L>;
template <class M, class C, class L, class P>
Estimator(M, RunConfig<C, L>, P, std::optional<WarmStartFrom>) -> Estimator<M, P, C, L>;

}  // namespace hookfuse
