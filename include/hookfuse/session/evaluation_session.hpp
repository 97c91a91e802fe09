// hookfuse/session/evaluation_session.hpp: MonitoredSession, a session with hooks that trains
// nothing (tf.compat.v1.train.MonitoredSession, which TensorFlow's evaluation loop uses:
// tf.compat.v1.train.evaluate_once, Estimator.evaluate).
//
// Each run feeds the next batch and computes the tensors the caller and the hooks fetch, with
// the hook events begin, after_create_session, before_run, after_run and end called as
// MonitoredTrainingSession calls them (the shared folds are in session/hook_calls.hpp). It has
// no backward pass, no optimizer and no update, and it never changes the global step: it emits
// no before_apply_gradients, so a gradient hook in it is a compile error naming the hook, the
// session and the event (SessionEvents, hooks/concepts.hpp), as is a hook that reads gradients
// (reads_gradients) or wants a training step's phase timings (ProfilerHook).
#pragma once

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/tuple.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/feeds.hpp"
#include "hookfuse/autodiff/graph.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/denormal.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/step_timeline.hpp"
#include "hookfuse/optim/global_step.hpp"
#include "hookfuse/session/hook_calls.hpp"
#include "hookfuse/session/hook_feeds.hpp"
#include "hookfuse/session/session_interface.hpp"

namespace hookfuse {

namespace detail {
/// Fails to compile for a hook that would do nothing in an evaluation session although it
/// declares something: reads_gradients (there are none) or wants_phase_timings (a training
/// step's phases).
template <class Hook, class Session>
constexpr bool check_evaluation_hook() {
  static_assert(!ReadsGradients<Hook>,
                "hookfuse: this hook reads gradients (reads_gradients), but an evaluation "
                "session computes none (the hook is 'Hook' and the session 'Session' in the "
                "instantiation above): use it in a MonitoredTrainingSession");
  static_assert(!WantsPhaseTimings<Hook>,
                "hookfuse: this hook wants a training step's phase timings "
                "(wants_phase_timings), but an evaluation session runs no training step (the "
                "hook is 'Hook' and the session 'Session' in the instantiation above): use it "
                "in a MonitoredTrainingSession");
  return true;
}
template <class Hook, fixed_string Name, bool Known>
constexpr bool check_evaluation_fetch() {
  static_assert(Known,
                "hookfuse: a hook or the caller fetches a tensor name that this evaluation "
                "session does not have (it has the tensors it was built with, what they read, "
                "and \"global_step\"; no gradients) (the hook is 'Hook' and the name 'Name' in "
                "the instantiation above; Hook = void for the caller)");
  return Known;
}
}  // namespace detail

/// Runs a model's forward pass with hooks and trains nothing, like
/// tf.compat.v1.train.MonitoredSession in TensorFlow's evaluation loop:
///
///     MonitoredSession session(global_step, feeds<"x", "labels">(test_input_fn),
///                              hooks(FinalOpsHook<"accuracy">()), loss, accuracy);
///     while (!session.should_stop()) session.run();
///
/// `global_step` is the model's GlobalStep (the training step a restored checkpoint holds): the
/// session reads it and never changes it, as TensorFlow's evaluation does (hooks see it in
/// run_context.global_step(), run_context.global_step_increment() is 0 and trains() false; a
/// StopAtStepHook(num_steps) therefore never stops an evaluation, as in TensorFlow: the input's
/// end or a hook's request_stop() does). `input` is as for MonitoredTrainingSession (an input
/// object, or caller_feeds(max_batch_size) and run(feed<"x">(...), ...)). `tensors` (at least
/// one) are the named tensors the caller and the hooks may fetch (the loss, logits, metrics); a
/// run computes only the ones fetched in it, and what they read. The graph is bound for batches
/// of up to input.batch_size() rows, forward only (bind_forward: value buffers, no adjoint
/// buffers, so a large evaluation batch pays nothing for gradients).
///
/// Hook events and TensorFlow's rules as in MonitoredTrainingSession: construction calls every
/// hook's begin(), binds the graph, then after_create_session(*this); every run calls
/// before_run (a hook may feed placeholders, session/hook_feeds.hpp), feeds the next batch
/// (none left: no after_run, should_stop() becomes true, run() returns false), checks that
/// every placeholder the run's fetches read was fed with one row count (ShapeError otherwise,
/// before computing anything), computes the fetches, then calls after_run; a run once
/// should_stop() is true throws RuntimeError; close() or the destructor calls every hook's
/// end(*this) once (not after a run that threw, nor while an exception unwinds the stack).
/// No hook event is virtual; a step allocates nothing.
template <class Input, class Hooks, class... Tensors>
class MonitoredSession
    : public detail::SessionInterface<MonitoredSession<Input, Hooks, Tensors...>> {
  friend class detail::SessionInterface<MonitoredSession>;
  static_assert(sizeof...(Tensors) > 0,
                "hookfuse: MonitoredSession(global_step, input, hooks(...), tensors...) needs at "
                "least one named tensor to evaluate");

 public:
  using graph_type = decltype(bind(Index{}, std::declval<Tensors&>()...));
  /// Every event but before_apply_gradients: there is no backward pass.
  using emitted_events =
      SessionEvents<SessionEvent::begin, SessionEvent::after_create_session,
                    SessionEvent::before_run, SessionEvent::after_run, SessionEvent::end>;
  static constexpr std::size_t num_hooks =
      decltype(boost::hana::length(std::declval<Hooks>()))::value;

  MonitoredSession(const GlobalStep& global_step, Input input, Hooks hooks, Tensors... tensors)
      : global_step_(&global_step),
        input_(std::move(input)),
        hooks_(std::move(hooks)),
        graph_((detail::call_begin(hooks_), bind_forward(input_.batch_size(), tensors...))) {
    static_assert(caller_fed || InputFor<Input, graph_type>,
                  "hookfuse: the input must provide next(), batch_size() and feed(graph), or be "
                  "caller_feeds(max_batch_size)");
    if constexpr (requires { input_.check(graph_); }) input_.check(graph_);
    check_hooks(std::type_identity<Hooks>{});
    detail::call_after_create_session(hooks_, *this);
  }
  MonitoredSession(const MonitoredSession&) = delete;
  MonitoredSession& operator=(const MonitoredSession&) = delete;

  /// Closes the session like close(), as MonitoredTrainingSession's destructor does.
  ~MonitoredSession() { this->close_from_destructor(); }

  // run(), run(feeds...), run<names...>(feeds...), should_stop(), close(), hook<I>(),
  // hook<H>(), graph(), hooks(), input(): detail::SessionInterface
  // (session/session_interface.hpp). A run is one evaluation step (step() below), TensorFlow's
  // `sess.run(eval_ops)`; run<names...>() fetches the session's tensors, what they read, and
  // "global_step".

  /// The global step (never changed by this session).
  std::int64_t global_step() const { return global_step_->value; }

  /// The value of a named tensor for the last batch fed (computed if no run did), or the
  /// global step for "global_step". Throws ShapeError naming the tensor and the placeholder when
  /// it reads a placeholder not fed.
  template <fixed_string Name>
  TensorValue fetch() {
    check_names<void>(SessionRunArgs<Name>{});
    if constexpr (Name == detail::global_step_name)
      return {&global_step_->value, 1, 1, 1, 1, DType::int64};
    else if constexpr (graph_type::template has<Name>) {
      const detail::ScopedFlushDenormal flush(true);  // as in a run
      return detail::tensor_value(graph_.template compute<Name>());
    } else {
      return TensorValue{};  // reported by check_names
    }
  }

 private:
  static constexpr bool caller_fed = std::is_same_v<Input, CallerFeeds>;
  using hook_feed_checks = typename detail::hook_feeds_of<Hooks>::type;
  template <fixed_string... Names>
  static constexpr void check_run_fetches() {
    check_names<void>(SessionRunArgs<Names...>{});
  }

  template <fixed_string... Fetch, class FeedInputs>
  bool step(SessionRunValues<Fetch...>& caller, FeedInputs&& feed_inputs) {
    namespace hana = boost::hana;
    auto release_feeds = this->start_step();
    SessionRunContext ctx(&global_step_->value, OriginalArgs{detail::fetch_names<Fetch...>}, 0,
                          /*trains=*/false);
    auto args = detail::collect_before_run(
        hooks_, [&ctx](auto& h) { return detail::call_before_run(h, ctx); });
    if (!feed_inputs()) [[unlikely]] return this->finish_step(false, ctx);  // see the training step
    hana::for_each(args, [this](const auto& a) { detail::apply_hook_feeds(graph_, a); });
    typename graph_type::read_set reads{};  // no forward pass: only what is fetched
    detail::check_step_feeds<Fetch...>(graph_, args, reads);
    {  // Denormals flushed to zero while the tensors are computed, as in the training session
       // (SessionOptions::flush_denormals; here always, as TensorFlow's CPU ops).
      const detail::ScopedFlushDenormal flush(true);
      // One callable for every hook (see MonitoredTrainingSession::step): one fill_values per
      // name list, not one per hook.
      const auto fetch_named = [this]<fixed_string N>() { return fetch<N>(); };
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (detail::fill_values(hana::at_c<I>(values_), hana::at_c<I>(args), fetched_[I],
                             fetch_named),
         ...);
      }(std::make_index_sequence<num_hooks>{});
      std::size_t k = 0;
      ((caller.results[k++] = fetch<Fetch>()), ...);
      (void)k;
    }
    detail::call_after_run(hooks_, ctx, values_, [] {});
    return this->finish_step(true, ctx);
  }

  template <class... Hs>
  static constexpr void check_hooks(std::type_identity<boost::hana::tuple<Hs...>>) {
    ((check_hook<hook_t<Hs>, MonitoredSession>(),
      detail::check_evaluation_hook<hook_t<Hs>, MonitoredSession>(),
      check_names<hook_t<Hs>>(run_args_t<hook_t<Hs>>{})),
     ...);
    static_assert(hook_feed_checks::check());
  }
  template <class H, fixed_string... Names>
  static constexpr void check_names(SessionRunArgs<Names...>) {
    (detail::check_evaluation_fetch<
         H, Names, Names == detail::global_step_name || graph_type::template has<Names>>(),
     ...);
  }

  const GlobalStep* global_step_;
  Input input_;
  Hooks hooks_;
  graph_type graph_;
  typename detail::values_of_hooks<Hooks>::type values_{};  // what each hook's after_run receives
  std::array<bool, num_hooks == 0 ? 1 : num_hooks> fetched_{};  // values_[i] holds fetches
  bool should_stop_ = false;
  bool closed_ = false;
  bool in_run_ = false;
#ifndef HOOKFUSE_NO_EXCEPTIONS
  int uncaught_at_construction_ = std::uncaught_exceptions();
#endif
};

template <class I, class H, class... T>
MonitoredSession(const GlobalStep&, I, H, T...) -> MonitoredSession<I, H, T...>;

}  // namespace hookfuse
