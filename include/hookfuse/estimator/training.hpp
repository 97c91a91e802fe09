// hookfuse/estimator/training.hpp: train_and_evaluate, TensorFlow's local (non-distributed)
// executor (tf.estimator.train_and_evaluate; training.py _TrainingExecutor.run_local,
// _NewCheckpointListenerForEvaluate, _TrainingExecutor._Evaluator).
//
// One Estimator::train call does all the training; evaluation is driven by a checkpoint-saving
// listener attached to that train's CheckpointSaverHook:
//   begin       starts the throttle timer (SecondOrStepTimer(every_secs = throttle_secs) on
//               RunConfig's clock);
//   after_save  skips the first save (the one written when the session is created: the model
//               is not trained yet), then evaluates the new checkpoint when the timer fires,
//               else logs "Skip the current checkpoint eval due to throttle secs (600 secs).";
//   end         evaluates the last step unless that checkpoint was the last evaluated.
// An evaluation restores the newest checkpoint into a model of its own; the training session
// and its input go on where they were.
#pragma once

#include <boost/hana/concat.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/estimator/estimator.hpp"
#include "hookfuse/estimator/exporter.hpp"
#include "hookfuse/estimator/train_spec.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/timer.hpp"
#include "hookfuse/io/checkpoint_state.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// One EvalSpec's outcome in train_and_evaluate: its name, its last evaluation (nullopt when
/// none ran) and, per exporter in order, the directory that evaluation exported or nullopt.
struct EvalSpecResult {
  std::string name;
  std::optional<EvalResult> eval_result;
  std::vector<std::optional<std::string>> export_results;
};

/// What train_and_evaluate returns (TF: the tuple (eval_result metrics, export_results)):
/// the first EvalSpec's last evaluation and its exporters' results, and every spec's in
/// `per_spec` (several evaluation sets). Empty (eval_result nullopt, no export result) when
/// training was skipped because max_steps had already been reached (TF: (None, None)).
struct TrainAndEvaluateResult {
  std::optional<EvalResult> eval_result;
  std::vector<std::optional<std::string>> export_results;
  std::vector<EvalSpecResult> per_spec;
};

namespace detail {

template <class T>
inline constexpr bool is_std_vector_v = false;
template <class T, class A>
inline constexpr bool is_std_vector_v<std::vector<T, A>> = true;
template <class T>
inline constexpr bool is_eval_spec_v = false;
template <class I, class H, class E>
inline constexpr bool is_eval_spec_v<EvalSpec<I, H, E>> = true;

/// Calls f(spec, index) for each EvalSpec of a hana tuple or a std::vector.
template <class Specs, class F>
void for_each_eval_spec(Specs& specs, F&& f) {
  if constexpr (is_std_vector_v<Specs>) {
    for (std::size_t i = 0; i < specs.size(); ++i) f(specs[i], i);
  } else {
    std::size_t i = 0;
    boost::hana::for_each(specs, [&](auto& s) { f(s, i++); });
  }
}

/// _NewCheckpointListenerForEvaluate with one _Evaluator per EvalSpec (each spec has its own
/// throttle timer and last checkpoint). Held by std::ref in the train's listener tuple.
template <class Est, class Specs, Clock C, class Lg>
class EvaluateListener {
 public:
  EvaluateListener(Est& estimator, Specs& specs, std::optional<std::int64_t> max_steps, C clock,
                   Lg& logger)
      : estimator_(&estimator),
        specs_(&specs),
        max_steps_(max_steps),
        clock_(clock),
        logger_(&logger) {
    for_each_eval_spec(specs, [&](auto& spec, std::size_t) {
      states_.push_back(State{spec.name, spec.throttle_secs});
    });
  }

  void begin() {
    for (State& s : states_) s.timer.emplace(s.throttle_secs, std::nullopt, clock_);
    is_first_run_ = true;
  }

  template <class Session>
  void after_save(Session&, std::int64_t global_step_value) {
    if (is_first_run_) {  // the model is not trained yet
      is_first_run_ = false;
      return;
    }
    for_each_eval_spec(*specs_, [&](auto& spec, std::size_t i) {
      State& s = states_[i];
      if (s.timer->should_trigger_for_step(global_step_value))
        evaluate(spec, s, global_step_value);
      else
        logger_->log(Severity::info, "Skip the current checkpoint eval due to throttle secs (" +
                                         number_str(s.throttle_secs) + " secs).");
    });
  }

  template <class Session>
  void end(Session&, std::int64_t global_step_value) {
    for_each_eval_spec(*specs_, [&](auto& spec, std::size_t i) {
      State& s = states_[i];
      if (s.timer->last_triggered_step() != global_step_value) evaluate(spec, s, global_step_value);
    });
  }

  std::vector<EvalSpecResult> results() const {
    std::vector<EvalSpecResult> out;
    for (const State& s : states_) out.push_back({s.name, s.eval_result, s.export_results});
    return out;
  }

 private:
  struct State {
    std::string name;
    double throttle_secs;
    std::optional<SecondOrStepTimer<C>> timer{};
    std::optional<std::string> previous_ckpt_path{};
    std::optional<double> last_warning_time{};
    std::optional<EvalResult> eval_result{};
    std::vector<std::optional<std::string>> export_results{};
  };

  /// _Evaluator._log_err_msg: a warning at most every 10 minutes.
  void log_err_msg(State& s, const std::string& message) {
    const double now = clock_.now();
    if (!s.last_warning_time || now - *s.last_warning_time > 600) {
      logger_->log(Severity::warning, message);
      s.last_warning_time = now;
    }
  }

  /// _NewCheckpointListenerForEvaluate._evaluate and _Evaluator.evaluate_and_export.
  template <class Spec>
  void evaluate(Spec& spec, State& s, std::int64_t global_step_value) {
    s.timer->update_last_triggered_step(global_step_value);
    const auto latest = io::latest_checkpoint(std::filesystem::path(estimator_->model_dir()));
    const char* status = nullptr;
    if (!latest) {
      log_err_msg(s,
                  "Estimator is not trained yet. Will start an evaluation when a checkpoint "
                  "is ready.");
      status = "missing checkpoint";
    } else if (s.previous_ckpt_path && *s.previous_ckpt_path == latest->string()) {
      log_err_msg(s,
                  "No new checkpoint ready for evaluation. Skip the current evaluation pass "
                  "as evaluation results are expected to be same for the same checkpoint.");
      status = "no new checkpoint";
    }
    if (status)  // local training always ends with a new checkpoint: unexpected
      fail<RuntimeError>(std::string("There was no new checkpoint after the training. Eval "
                                     "status: ") +
                         status);
    const std::string checkpoint_path = latest->string();
    EvalResult r = estimator_->evaluate(
        spec.input_fn,
        EvalArgs{.steps = spec.steps, .checkpoint_path = checkpoint_path, .name = spec.name},
        spec.hooks);
    const bool is_the_final_export = max_steps_ ? r.global_step >= *max_steps_ : false;
    const std::filesystem::path export_dir_base =
        std::filesystem::path(estimator_->model_dir()) / "export";
    std::vector<std::optional<std::string>> exports;
    boost::hana::for_each(spec.exporters, [&](auto& e) {
      auto& exporter = hook_ref(e);
      exports.push_back(exporter.export_(*estimator_, (export_dir_base / exporter.name()).string(),
                                         checkpoint_path, r, is_the_final_export));
    });
    s.last_warning_time.reset();
    s.previous_ckpt_path = checkpoint_path;
    s.eval_result = std::move(r);
    s.export_results = std::move(exports);
  }

  Est* estimator_;
  Specs* specs_;
  std::optional<std::int64_t> max_steps_;
  C clock_;
  Lg* logger_;
  std::vector<State> states_;
  bool is_first_run_ = true;
};

/// "100" or "None", as Python formats an optional RunConfig value.
template <class T>
std::string optional_str(const std::optional<T>& v) {
  if (!v) return "None";
  return number_str(static_cast<double>(*v));
}

}  // namespace detail

/// tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec), as TensorFlow's local
/// executor: logs "Running training and evaluation locally (non-distributed)." and "Start train
/// and evaluate loop. The evaluate will happen after every checkpoint. Checkpoint frequency is
/// determined based on RunConfig arguments: save_checkpoints_steps 100 or save_checkpoints_secs
/// None.", then makes ONE estimator.train(train_spec.input_fn, {.max_steps =
/// train_spec.max_steps}, train_spec.hooks, saving_listeners) call, whose saving listeners are
/// train_spec.saving_listeners then the evaluation listener (file comment): each new checkpoint
/// but the first is evaluated (Estimator::evaluate with the spec's steps, name and hooks, on
/// that checkpoint; throttled by throttle_secs against RunConfig's clock) and exported by the
/// spec's exporters into model_dir/export/<exporter name>; the last step is evaluated once at
/// the end unless it already was. Never two evaluations of one checkpoint.
///
/// `eval_spec` is one EvalSpec, or several (eval_specs(a, b), or a std::vector of EvalSpecs of
/// one type), each evaluated at every trigger into its own model_dir/eval_<name> with its own
/// throttle (beyond TensorFlow). Returns the last evaluation's metrics and the exporters'
/// results; an empty result when max_steps was already reached ("Skipping training since
/// max_steps has already saved.": nothing trained, evaluated or written).
///
/// Errors: ValueError from Estimator::train when RunConfig sets no checkpoint cadence
/// (save_checkpoints_steps or _secs <= 0): "Estimator.train: There should be a
/// CheckpointSaverHook to use saving_listeners. Please set one of the
/// RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs."; ValueError
/// "train_and_evaluate: eval_spec is an empty list of EvalSpecs" for an empty vector and
/// "train_and_evaluate: two EvalSpecs named 'a' would both evaluate into model_dir/eval_a" for
/// a repeated name (an empty tuple does not compile); ValueError "train_and_evaluate: runs
/// locally (non-distributed) only, ..." for a RunConfig of several replicas (num_worker_replicas
/// > 1 or a cross_replica_sum): its evaluations run in the chief's checkpoint listener, which
/// the other ranks do not have, so a summed evaluation would wait for them forever (call train
/// and evaluate on every rank instead); the errors of train, evaluate and the exporters, as they
/// happen.
template <class Est, class TS, class ES>
TrainAndEvaluateResult train_and_evaluate(Est& estimator, TS train_spec, ES eval_spec) {
  if (estimator.config().num_worker_replicas > 1 || estimator.config().cross_replica_sum)
    detail::fail<ValueError>(
        "train_and_evaluate: runs locally (non-distributed) only, but the RunConfig has " +
        std::to_string(estimator.config().num_worker_replicas) +
        " worker replicas or a cross_replica_sum; on data-parallel ranks call "
        "estimator.train and estimator.evaluate on every rank");
  if constexpr (detail::is_eval_spec_v<ES>) {
    auto specs = boost::hana::make_tuple(std::move(eval_spec));
    return train_and_evaluate(estimator, std::move(train_spec), std::move(specs));
  } else {
    if constexpr (!detail::is_std_vector_v<ES>)
      static_assert(decltype(boost::hana::length(eval_spec))::value > 0,
                    "hookfuse: train_and_evaluate: eval_specs() holds no EvalSpec");
    std::set<std::string> names;
    std::size_t count = 0;
    detail::for_each_eval_spec(eval_spec, [&](auto& spec, std::size_t) {
      ++count;
      if (!names.insert(spec.name).second)
        detail::fail<ValueError>("train_and_evaluate: two EvalSpecs named '" + spec.name +
                                 "' would both evaluate into model_dir/" +
                                 (spec.name.empty() ? std::string("eval") : "eval_" + spec.name));
    });
    if (count == 0)
      detail::fail<ValueError>("train_and_evaluate: eval_spec is an empty list of EvalSpecs");

    auto& logger = estimator.logger();
    const auto& config = estimator.config();
    logger.log(Severity::info, "Running training and evaluation locally (non-distributed).");
    logger.log(Severity::info,
               "Start train and evaluate loop. The evaluate will happen after every checkpoint. "
               "Checkpoint frequency is determined based on RunConfig arguments: "
               "save_checkpoints_steps " +
                   detail::optional_str(config.save_checkpoints_steps) +
                   " or save_checkpoints_secs " + detail::optional_str(config.checkpoint_secs()) +
                   ".");
    using Listener = detail::EvaluateListener<Est, ES, std::remove_cvref_t<decltype(config.clock)>,
                                              std::remove_cvref_t<decltype(logger)>>;
    Listener listener(estimator, eval_spec, train_spec.max_steps, config.clock, logger);
    estimator.train(train_spec.input_fn, TrainArgs{.max_steps = train_spec.max_steps},
                    std::move(train_spec.hooks),
                    boost::hana::concat(std::move(train_spec.saving_listeners),
                                        boost::hana::make_tuple(std::ref(listener))));
    TrainAndEvaluateResult result;
    result.per_spec = listener.results();
    result.eval_result = result.per_spec.front().eval_result;
    result.export_results = result.per_spec.front().export_results;
    return result;
  }
}

}  // namespace hookfuse
