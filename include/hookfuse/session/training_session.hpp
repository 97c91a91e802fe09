// hookfuse/session/training_session.hpp: the class MonitoredTrainingSession (the fused training
// loop, tf.compat.v1.train.MonitoredTrainingSession): its constructors, public interface and
// members. Its step functions are defined in session/training_step.hpp; include
// session/monitored_session.hpp, which brings both and the deduction guides.
#pragma once

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <array>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/feeds.hpp"
#include "hookfuse/autodiff/graph.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/compile_error.hpp"
#include "hookfuse/detail/denormal.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/step_timeline.hpp"
#include "hookfuse/logging.hpp"
#include "hookfuse/optim/gradient_descent.hpp"
#include "hookfuse/session/gradient_event.hpp"
#include "hookfuse/session/hook_calls.hpp"
#include "hookfuse/session/hook_feeds.hpp"
#include "hookfuse/session/hook_state.hpp"
#include "hookfuse/session/hook_tuple.hpp"
#include "hookfuse/session/optimizer_slots.hpp"
#include "hookfuse/session/phase_timing.hpp"
#include "hookfuse/session/session_checks.hpp"
#include "hookfuse/session/session_interface.hpp"
#include "hookfuse/session/session_options.hpp"
#include "hookfuse/session/step_context.hpp"

namespace hookfuse {

namespace detail {
struct create_session_tag {};
}  // namespace detail

/// Runs a train op with hooks, like tf.compat.v1.train.MonitoredTrainingSession:
///
///     MonitoredTrainingSession session(train_op, feeds<"x", "labels">(input_fn),
///                                      hooks(StopAtStepHook({.num_steps = 1000})), accuracy);
///     while (!session.should_stop()) session.run();
///
/// `input` is an input object (feeds<"x", "labels">(input_fn), or any type with next(),
/// batch_size() and feed(graph): see InputFor and docs/inputs.md), checked against the graph
/// here (a tensor the input lacks, a wrong column count: std::invalid_argument / ShapeError), or
/// caller_feeds(max_batch_size): the caller then feeds every run,
///
///     MonitoredTrainingSession session(train_op, caller_feeds(32), hooks());
///     session.run(feed<"x">(xs, rows), feed<"labels">(ys, rows));
///
/// `extras` are further named tensors that hooks may fetch (metrics); they are computed only in
/// runs where a hook (or the caller, run<"accuracy">()) asks for them. The graph is bound for
/// input batches of up to input.batch_size() rows. Construction calls every hook's begin(), binds
/// the graph, then calls after_create_session(*this). Closing (close() or the destructor) calls
/// every hook's end(*this) once. TensorFlow's rules: run() once should_stop() is true (a stop
/// request, the end of the input, close()) throws RuntimeError; if run() exits with an
/// exception, end() is not called; the destructor does not call end() while an exception
/// unwinds the stack, and logs (at ERROR, to stderr) instead of throwing an exception from
/// end(), which close() propagates. Before each forward pass, every placeholder that the loss,
/// the caller's fetches or this step's hook fetches read must be fed, all with the same rows
/// (ShapeError otherwise, before anything is computed or any variable updated). (An exception
/// that a fetched metric throws while it is computed, a label out of range, comes after the
/// backward pass: the variables whose update is fused are then already updated, the others and
/// global_step not.) A hook's before_run may also feed placeholders (with_feeds, FeedFnHook;
/// see session/hook_feeds.hpp for the rules). Each run adds train_op.global_step_increment
/// (default 1) to the global step. run_step_fn(step_fn) runs a user step function with
/// TensorFlow's StepContext (session/step_context.hpp).
template <class TrainOpT, class Input, class Hooks, class... Extras>
class MonitoredTrainingSession
    : public detail::SessionInterface<MonitoredTrainingSession<TrainOpT, Input, Hooks, Extras...>> {
  friend class detail::SessionInterface<MonitoredTrainingSession>;
  using loss_type = decltype(std::declval<TrainOpT&>().loss);

 public:
  using graph_type = decltype(bind(Index{}, std::declval<loss_type&>(), std::declval<Extras&>()...));
  using optimizer_type = decltype(std::declval<TrainOpT&>().optimizer);
  /// The optimizer's slot variables for this graph (empty for SGD), created at bind time.
  using optimizer_slots_type = detail::OptimizerSlots<optimizer_type, graph_type>;
  /// Which variables keep a stored gradient (detail::HookPins): what update_fused consults.
  using pins = detail::HookPins<Hooks>;
  /// What gradient hook H's before_apply_gradients receives (session/gradient_event.hpp).
  template <class H>
  using gradient_context_for = GradientContext<graph_type, gradient_variables_t<H>>;
  /// The optimizer's update is linear in the gradient (SGD; Momentum, which accumulates into a
  /// slot): what the backward pass can fold in (update_fused), and what UpdateContext reports.
  static constexpr bool update_linear_in_gradient =
      detail::LinearUpdate<optimizer_type> || optimizer_slots_type::fuses_into_slot;
  /// What an update hook's after_apply_gradients receives (session/gradient_event.hpp).
  using update_context = UpdateContext<graph_type, optimizer_slots_type, optimizer_type,
                                       update_linear_in_gradient>;
  /// A training session emits every event of the hook protocol (hooks/concepts.hpp).
  using emitted_events = AllSessionEvents;
  static constexpr std::size_t num_hooks = decltype(boost::hana::length(std::declval<Hooks>()))::value;
  /// Every hook can sit out idle runs (SkipsIdleRuns, hooks/concepts.hpp) or has no run event,
  /// and at least one has run events: a run in which all are idle calls no hook.
  static constexpr bool skips_idle_runs =
      detail::all_idle_capable<Hooks> && detail::any_skips_idle_runs<Hooks>;
  /// The timed intervals of a step (detail::StepPhases): `timed` when a hook wants phase
  /// timings (WantsPhaseTimings, hooks/step_timeline.hpp), and then which phases there are.
  using step_phases = detail::StepPhases<Hooks>;

  MonitoredTrainingSession(TrainOpT train_op, Input input, Hooks hooks, Extras... extras)
      : MonitoredTrainingSession(detail::create_session_tag{}, [](MonitoredTrainingSession&) {},
                                 std::move(train_op), std::move(input), std::move(hooks),
                                 std::move(extras)...) {}

  /// A session with TensorFlow's checkpointing options (tf.compat.v1.train.
  /// MonitoredTrainingSession(is_chief, checkpoint_dir, hooks, chief_only_hooks,
  /// save_checkpoint_secs, save_checkpoint_steps)):
  ///
  ///     MonitoredTrainingSession session(
  ///         train_op, feeds<"x", "labels">(input_fn),
  ///         SessionOptions<Saver>{.checkpoint_dir = "d", .save_checkpoint_steps = 50,
  ///                               .saver = Saver(...)},
  ///         hooks(StopAtStepHook({.num_steps = 1000})),        // the user's hooks
  ///         chief_only_hooks(MyChiefHook()),                    // optional
  ///         accuracy);
  ///
  /// Hooks run in TensorFlow's order: the chief-only hooks (only when options.is_chief), the
  /// StepCounterHook and the SummarySaverHook (a chief with a summary_dir or checkpoint_dir, in
  /// hosted builds; they write the model's summaries and "global_step/sec" into one event file),
  /// the CheckpointSaverHook (a chief with a checkpoint_dir; see SessionOptions for the
  /// cadences), then the user's hooks; session.hook<I>() counts them in that order, a chief-only
  /// hook and each default hook as a ConditionalHook slot. A session with a checkpoint_dir,
  /// chief or not, restores the latest checkpoint there (the saver's restore_latest: every
  /// variable and the global step; a non-chief only reads the directory, as data-parallel ranks
  /// restoring the chief's checkpoint) after binding the graph and before any hook's
  /// after_create_session, so
  /// StopAtStepHook(num_steps) counts from the restored step and the saver hook's first save is at
  /// that step. A checkpoint that cannot be restored (its files missing or damaged: see
  /// SessionOptions::restore_fallback) throws from here, and nothing is written. Otherwise
  /// nothing is restored or written.
  template <class Saver, class C, class L, class... Us>
  MonitoredTrainingSession(TrainOpT train_op, Input input, SessionOptions<Saver, C, L> options,
                           boost::hana::tuple<Us...> user_hooks, Extras... extras)
      : MonitoredTrainingSession(std::move(train_op), std::move(input), std::move(options),
                                 std::move(user_hooks), ChiefOnlyHooks<>{}, std::move(extras)...) {}
  template <class Saver, class C, class L, class... Us, class... Cs>
  MonitoredTrainingSession(TrainOpT train_op, Input input, SessionOptions<Saver, C, L> options,
                           boost::hana::tuple<Us...> user_hooks, ChiefOnlyHooks<Cs...> chief_hooks,
                           Extras... extras)
      : MonitoredTrainingSession(
            detail::create_session_tag{},
            [&options](MonitoredTrainingSession& s) {
              const auto vars = s.variables();
              const VariableList list(vars.data(), vars.size());
              // A warm start sets the model's variables only, not the optimizer's slots
              // (Estimator warm-starts trainable variables).
              const auto model_vars = graph_variables(s.graph_);
              detail::warm_start(options, VariableList(model_vars.data(), model_vars.size()));
              s.flush_denormals_ = options.flush_denormals;
              s.restored_ = detail::restore_latest(
                  boost::hana::at_c<detail::checkpoint_slot_index<sizeof...(Cs)>>(s.hooks_),
                  options, list);
              // After the restore, so that a failed one leaves no event file.
              detail::create_summary_hooks<sizeof...(Cs)>(s.hooks_, options);
            },
            std::move(train_op), std::move(input),
            detail::make_session_hooks<TrainOpT, Extras...>(options, std::move(chief_hooks),
                                                            std::move(user_hooks)),
            std::move(extras)...) {}

 private:
  /// Every constructor: begin(), bind, `restore(*this)`, after_create_session.
  template <class Restore>
  MonitoredTrainingSession(detail::create_session_tag, Restore restore, TrainOpT train_op,
                           Input input, Hooks hooks, Extras... extras)
      : train_op_(std::move(train_op)),
        input_(std::move(input)),
        hooks_(std::move(hooks)),
        graph_((detail::call_begin(hooks_), bind(input_.batch_size(), train_op_.loss, extras...))),
        optimizer_slots_(train_op_.optimizer, graph_) {
    static_assert(caller_fed || InputFor<Input, graph_type>,
                  "hookfuse: the input must provide next(), batch_size() and feed(graph), or be "
                  "caller_feeds(max_batch_size)");
    if constexpr (requires { input_.check(graph_); }) input_.check(graph_);
    if (train_op_.global_step_increment < 0)
      detail::fail<std::invalid_argument>(
          (detail::ErrorMessage() << "hookfuse: TrainOp::global_step_increment must be >= 0, got "
                                  << static_cast<long long>(train_op_.global_step_increment))
              .str());
    detail::check_session_hooks<MonitoredTrainingSession, graph_type>(
        std::type_identity<Hooks>{});
    restore(*this);
    detail::call_after_create_session(hooks_, *this);
  }

 public:
  MonitoredTrainingSession(const MonitoredTrainingSession&) = delete;
  MonitoredTrainingSession& operator=(const MonitoredTrainingSession&) = delete;

  /// Closes the session like close(), except that hooks' end() is not called while an exception
  /// unwinds the stack (std::uncaught_exceptions() above its count at construction), as
  /// TensorFlow's `with MonitoredTrainingSession(...)` exits, and that an exception from end() is
  /// logged at ERROR (StderrLogger) instead of escaping.
  ~MonitoredTrainingSession() {
    this->close_from_destructor();
  }

  /// True when run() may fold the optimizer's update of the Variable `Name` into the backward
  /// pass (its gradient is never stored; Variable::grad keeps its old contents). See
  /// docs/hooks.md ("The fused update") for when a variable stays unfused. Momentum decides at
  /// run time: with use_nesterov it stores every gradient although this says true;
  /// update_fused_now<Name>() gives the answer for this session's optimizer.
  template <fixed_string Name>
  static constexpr bool update_fused =
      update_linear_in_gradient && graph_type::template update_fused<pins, Name>();

  /// Whether the next run() folds the update of the Variable `Name` into the backward pass:
  /// update_fused<Name>, and the optimizer allows it now (MomentumOptimizer: not with
  /// use_nesterov).
  template <fixed_string Name>
  bool update_fused_now() const {
    if constexpr (!update_fused<Name>) return false;
    else return !optimizer_slots_type::fuses_into_slot || optimizer_slots_.fuse(train_op_.optimizer);
  }

  // run(), run(feeds...), run<names...>(feeds...), should_stop(), close(), hook<I>(),
  // hook<H>(), graph(), hooks(), input(): detail::SessionInterface
  // (session/session_interface.hpp). A run is one training step (step(),
  // session/training_step.hpp). run<names...>() fetches "global_step", any named tensor or
  // extra, and "gradients/<name>" of a gradient that is stored (one a hook requests or reads,
  // see update_fused; the caller's fetch does not keep it, and a fused one is a compile error
  // saying so). The values are those hooks see: this step's forward pass, before the update; a
  // Variable is a view of the variable (already updated); "global_step" is the value before
  // this step's increment. run(no_train, ...) and run<names...>(no_train, ...) are hooked runs
  // that do not train (step_no_train).

  /// Runs a user step function, as TensorFlow's MonitoredSession.run_step_fn(step_fn):
  /// `step_fn(step_context)` receives a StepContext<MonitoredTrainingSession>
  /// (session/step_context.hpp) whose run_with_hooks(...) is run(...) (hook iterations),
  /// session() this session for auxiliary evaluate<...>() calls (not hook iterations), and
  /// request_stop() makes should_stop() true once step_fn returns. Returns what step_fn
  /// returns (void included). Exceptions from step_fn propagate, as from run().
  template <class StepFn>
    requires std::is_invocable_v<StepFn&, StepContext<MonitoredTrainingSession>&>
  decltype(auto) run_step_fn(StepFn&& step_fn) {
    StepContext<MonitoredTrainingSession> context(*this);
    struct StopAfter {  // applies a stop request however step_fn returns
      StepContext<MonitoredTrainingSession>& c;
      bool& stop;
      ~StopAfter() { stop = stop || c.stop_requested(); }
    } stop_after{context, should_stop_};
    return step_fn(context);
  }

  /// Computes the named tensors without a training step: no hook event, no backward pass, no
  /// update, no global-step increment (TF: `step_context.session.run(fetches, feed_dict)`, an
  /// auxiliary evaluation). With `feeds`, the placeholders are fed anew (the feeds of the last
  /// step are dropped, as each run feeds afresh); without, the tensors read the last batch fed.
  /// Names as in run<...>() except "gradients/<name>" (evaluation has no backward pass: a
  /// compile error). Throws ShapeError, before computing, when a placeholder a name reads is not
  /// fed or the feeds' rows differ; RuntimeError after close(). The values stay valid until the
  /// next run or evaluation.
  template <fixed_string First, fixed_string... Rest, class... Fs>
    requires((detail::is_feed<Fs>::value && ...))
  SessionRunValues<First, Rest...> evaluate(const Fs&... feeds) {
    check_run_fetches<First, Rest...>();
    static_assert(!(detail::is_gradient_fetch<graph_type, First>() || ... ||
                    detail::is_gradient_fetch<graph_type, Rest>()),
                  "hookfuse: session.evaluate<...>() computes no gradient: fetch "
                  "\"gradients/<name>\" in a training run (run<...>()) instead");
    if (closed_) detail::fail<RuntimeError>("hookfuse: evaluate() called after close()");
    // The caller's feeds last for this evaluation only (TF's feed_dict): the values computed
    // here stay readable, and nothing later reads the caller's memory.
    detail::ReleaseFeeds<graph_type> release{sizeof...(Fs) > 0 ? &graph_ : nullptr};
    if constexpr (sizeof...(Fs) > 0) {
      graph_.clear_feeds();
      (feeds.apply(graph_), ...);
    }
    typename graph_type::read_set reads{};
    detail::check_step_feeds<First, Rest...>(graph_, boost::hana::make_tuple(), reads);
    SessionRunValues<First, Rest...> values;
    std::size_t k = 0;
    values.results[k++] = fetch<First>();  // "global_step": the current step
    ((values.results[k++] = fetch<Rest>()), ...);
    return values;
  }

  /// The current global step.
  std::int64_t global_step() const { return train_op_.global_step->value; }

  /// True when this session restored its variables from a checkpoint of
  /// SessionOptions::checkpoint_dir at creation (a restarted run). VariableInitializationHook
  /// then leaves them alone: the restore wins over a warm start.
  bool restored_from_checkpoint() const { return restored_; }

  /// What a checkpoint of this session holds (checkpoint_variables): every Variable of the model
  /// (the loss's graph and the extras), each once, in tape order, then the optimizer's slots
  /// ("<var>/Adam", ..., variable by variable) and non-slot variables ("beta1_power", ...), if
  /// it has any, then "global_step" (int64, shape []), then the hooks' state fields
  /// ("hooks/<hook name>/<field>", session/hook_state.hpp); names, dtypes, TensorFlow shapes and
  /// pointers into the variables. No heap.
  auto variables() {
    sync_hooks_for_caller();
    // Filled in place (one array of stack): what with_hook_state(checkpoint_variables(...)) gives.
    using S = detail::HookState<Hooks>;
    VariableArray<num_variables_v<graph_type> + optimizer_slots_type::num_checkpoint_variables + 1 +
                  S::size>
        out;
    append_checkpoint_variables(out.items, out.count, graph_, optimizer_slots_,
                                *train_op_.global_step);
    if constexpr (S::size > 0) S::append_variables(hooks_, out);
    return out;
  }

  /// The train op's optimizer: set_learning_rate(lr) changes the rate of the following steps.
  optimizer_type& optimizer() { return train_op_.optimizer; }
  /// The optimizer's slot variables (detail::OptimizerSlots): slots_of<V>(), non_slot.
  optimizer_slots_type& optimizer_slots() { return optimizer_slots_; }

  /// The value of a named tensor for the last batch fed (computing it if no run did), or the
  /// current global step for "global_step", or the last stored gradient for "gradients/<name>".
  /// Like session.run(tensor) inside end(). Before any step (or after an empty input) a tensor
  /// is computed when it reads no placeholder; one that reads a placeholder not fed throws
  /// ShapeError naming the tensor and the placeholder (no unfed input is read).
  template <fixed_string Name>
  TensorValue fetch() {
    if constexpr (Name == detail::global_step_name) {
      return {&train_op_.global_step->value, 1, 1, 1, 1, DType::int64};
    } else if constexpr (detail::is_gradient_fetch<graph_type, Name>()) {
      static_assert(!update_fused<detail::gradient_target_name<Name>()>,
                    "hookfuse: this variable's gradient is never stored (its update is fused "
                    "into the backward pass): request \"gradients/<name>\" in a hook's "
                    "before_run, or declare reads_gradients in a hook, to keep it");
      return detail::tensor_value(
          graph_.template adjoint<detail::gradient_target_name<Name>()>());
    } else {
      static_assert(detail::check_tensor_name<"session.fetch<name>() asks for", Name,
                                              graph_type::template has<Name>,
                                              typename graph_type::names_type>());
      // Guarded so that an unknown name gives the message above and nothing else.
      if constexpr (graph_type::template has<Name>) {
        const detail::ScopedFlushDenormal flush(flush_denormals_);
        return detail::tensor_value(graph_.template compute<Name>());
      } else {
        return TensorValue{};
      }
    }
  }

 private:
  static constexpr bool caller_fed = std::is_same_v<Input, CallerFeeds>;
  /// The compile-time checks of the hooks' feed_dicts (session/hook_feeds.hpp).
  using hook_feed_checks = typename detail::hook_feeds_of<Hooks>::type;

  // --- phase timings (session/phase_timing.hpp; only instantiated when step_phases::timed) ---
  using timing = detail::PhaseTiming<Hooks>;
  using step_marks = typename timing::marks_type;

  /// Calls f(std::integral_constant<std::size_t, I>{}) for I = 0, 1, ..., num_hooks - 1, in
  /// order: a fold expression, which compiles faster than hana::for_each over a hana::range.
  template <class F>
  static void for_each_hook_index(F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (f(std::integral_constant<std::size_t, I>{}), ...);
    }(std::make_index_sequence<num_hooks>{});
  }

  // The step and its parts, defined in session/training_step.hpp (documented there): the
  // backward pass with the fused updates and the unfused updates after the fetches, for the
  // variables Pin keeps unfused; the training step every run() overload calls, the step in
  // which every hook is idle, and a hooked run that does not train (run(no_train, ...)).
  template <class Pin>
  void backward_update(bool fuse);
  template <class Pin>
  void apply_unfused(bool fuse);
  template <fixed_string... Fetch, class FeedInputs>
  bool step(SessionRunValues<Fetch...>& caller, FeedInputs&& feed_inputs);
  template <fixed_string... Fetch, class FeedInputs>
  bool idle_step(SessionRunValues<Fetch...>& caller, FeedInputs&& feed_inputs);
  template <fixed_string... Fetch, class FeedInputs>
  bool step_no_train(SessionRunValues<Fetch...>& caller, FeedInputs&& feed_inputs);

  /// Tells the hooks how many runs they sat out (skip_runs), before they receive an event.
  void sync_idle_hooks() {
    if constexpr (skips_idle_runs) {
      if (idle_skipped_ > 0) {
        detail::call_skip_runs(hooks_, idle_skipped_);
        idle_skipped_ = 0;
      }
    }
  }
  /// Before the caller gets hold of the hooks (hook<...>(), hooks(), variables(), close()):
  /// synced, and the next run calls every hook (the caller may change one; it is asked again).
  void sync_hooks_for_caller() {
    if constexpr (skips_idle_runs) {
      sync_idle_hooks();
      idle_left_ = 0;
    }
  }

  /// The checks session_interface.hpp calls (session/session_checks.hpp).
  template <fixed_string... Names>
  static constexpr void check_run_fetches() {
    detail::check_session_run_fetches<graph_type, Names...>();
  }
  template <fixed_string... Names>
  static constexpr bool check_no_train_fetches() {
    return detail::check_no_train_fetches<graph_type, Names...>();
  }

  template <fixed_string Name>
  TensorValue fetch_stale() {
    if constexpr (Name == detail::global_step_name)
      return {&stale_global_step_, 1, 1, 1, 1, DType::int64};
    else if constexpr (detail::is_gradient_fetch<graph_type, Name>() ||
                       graph_type::template has<Name>)
      return fetch<Name>();  // a requested gradient is pinned, so always stored
    else
      return TensorValue{};  // unknown name: reported by check_fetch in the constructor
  }

  TrainOpT train_op_;
  Input input_;
  Hooks hooks_;
  graph_type graph_;
  optimizer_slots_type optimizer_slots_;
  typename detail::requests_of_hooks<Hooks>::type requests_{};  // this run's, see step()
  typename detail::values_of_hooks<Hooks>::type values_{};  // what each hook's after_run receives
  std::array<bool, num_hooks == 0 ? 1 : num_hooks> fetched_{};  // values_[i] holds fetches
  bool any_fetched_ = false;  // some fetched_[i] may be true
  std::int64_t stale_global_step_ = 0;
  bool should_stop_ = false;
  bool closed_ = false;
  bool in_run_ = false;
  bool restored_ = false;
  bool flush_denormals_ = true;  // SessionOptions::flush_denormals
  std::int64_t idle_left_ = 0;     // runs still idle for every hook (skips_idle_runs)
  std::int64_t idle_skipped_ = 0;  // idle runs the hooks have not been told of
#ifndef HOOKFUSE_NO_EXCEPTIONS
  int uncaught_at_construction_ = std::uncaught_exceptions();
#endif
};

}  // namespace hookfuse
