// hookfuse/session/training_step.hpp: the step functions of MonitoredTrainingSession
// (session/training_session.hpp): the training step every run() calls, its idle fast path, the
// hooked run that does not train, and the backward pass with the optimizer's update. Member
// functions defined out of the class, `inline` as if defined in it. Include
// session/monitored_session.hpp.
#pragma once

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <cstddef>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/denormal.hpp"
#include "hookfuse/session/training_session.hpp"

namespace hookfuse {

/// The backward pass with the optimizer's update folded in for the variables update_fused
/// names (`fuse` false: none, every gradient stored). For Momentum the fused variables'
/// values are updated from their slots right here too, so that an exception from a later
/// fetch never leaves a slot updated and its variable not. apply_unfused does the rest.
template <class TrainOpT, class Input, class Hooks, class... Extras>
template <class Pin>
inline void MonitoredTrainingSession<TrainOpT, Input, Hooks, Extras...>::backward_update(
    bool fuse) {
  if constexpr (optimizer_slots_type::fuses_into_slot) {
    if (!fuse) {
      graph_.template backward<detail::FuseNone>(optimizer_slots_.bind(train_op_.optimizer));
      return;
    }
    graph_.template backward<Pin>(optimizer_slots_.bind(train_op_.optimizer));
    graph_.template apply_fused_slots<Pin>(optimizer_slots_.bind(train_op_.optimizer));
  } else {
    (void)fuse;
    graph_.template backward<Pin>(optimizer_slots_.bind(train_op_.optimizer));
  }
}

template <class TrainOpT, class Input, class Hooks, class... Extras>
template <class Pin>
inline void MonitoredTrainingSession<TrainOpT, Input, Hooks, Extras...>::apply_unfused(
    bool fuse) {
  if constexpr (optimizer_slots_type::fuses_into_slot) {
    if (!fuse) {
      graph_.template apply_unfused<detail::FuseNone>(optimizer_slots_.bind(train_op_.optimizer));
      optimizer_slots_.finish(train_op_.optimizer);
      return;
    }
  }
  (void)fuse;
  graph_.template apply_unfused<Pin>(optimizer_slots_.bind(train_op_.optimizer));
  optimizer_slots_.finish(train_op_.optimizer);
}

/// The training step every run() overload calls: `caller` receives the caller's fetches
/// (none for plain run()); `feed_inputs()` feeds the graph and returns false at the end of
/// the input. Returns whether a step ran. When every hook can sit out idle runs
/// (skips_idle_runs) and all are idle in this one, idle_step() runs instead: no hook is called.
template <class TrainOpT, class Input, class Hooks, class... Extras>
template <fixed_string... Fetch, class FeedInputs>
inline bool MonitoredTrainingSession<TrainOpT, Input, Hooks, Extras...>::step(
    SessionRunValues<Fetch...>& caller, FeedInputs&& feed_inputs) {
  namespace hana = boost::hana;
  if constexpr (skips_idle_runs) {
    if (idle_left_ > 0) [[likely]]
      return idle_step(caller, std::forward<FeedInputs>(feed_inputs));
    sync_idle_hooks();
  }
  auto release_feeds = this->start_step();
  SessionRunContext ctx(&train_op_.global_step->value,
                        OriginalArgs{detail::fetch_names<Fetch...>},
                        train_op_.global_step_increment);
  // Phase timings (hooks/step_timeline.hpp): `marks` is an empty object and every mark() an
  // empty call unless a hook wants them; with one, the clock is read only when a hook asked
  // for this step, decided here, before the first before_run, so that every hook's before_run
  // is in the timeline.
  step_marks marks;
  if constexpr (step_phases::timed) timing::start(marks, hooks_, ctx);
  // The lambda is force-inlined (HOOKFUSE_ALWAYS_INLINE, config.hpp): it is one function
  // per hook type.
  auto args = detail::collect_before_run(
      hooks_, [&ctx, &marks, this](auto& h) HOOKFUSE_ALWAYS_INLINE {
        return timing::before_run(h, ctx, marks, hooks_);
      });
  // What each hook requests is kept in requests_ (the args without their feed_dicts), which
  // the fetch checks and fills below read: `args` is then dead after the hooks' feeds, where
  // GCC would otherwise keep it across the forward pass by packing every hook's flag into one
  // register (a shift and an OR per hook) and spilling it. hooks_fetch: whether any hook
  // requests a tensor this run (one OR per hook that can request one), so that a step in
  // which no hook fetches (every hook between its triggers) checks and fills nothing per hook.
  bool hooks_fetch = false;
  for_each_hook_index([&](auto i) {
    constexpr std::size_t k = decltype(i)::value;
    hana::at_c<k>(requests_) = hana::at_c<k>(args);
    hooks_fetch |= detail::requests_fetch(hana::at_c<k>(requests_));
  });
  // [[unlikely]]: the input ends once. Without it GCC guesses that the rest of the step runs
  // only about a third as often as the before_run calls, and gives inlining the hooks'
  // after_run bodies too low a priority (bench/README.md, "Hook overhead").
  if (!feed_inputs()) [[unlikely]] return this->finish_step(false, ctx);
  // The hooks' feed_dicts, after the input's: a hook's feed replaces the input's.
  hana::for_each(args, [this](const auto& a) { detail::apply_hook_feeds(graph_, a); });
  {  // before anything is computed or updated
    typename graph_type::read_set reads{};
    graph_.check_fed(reads);  // the forward pass's placeholders
    detail::check_step_feeds<Fetch...>(graph_, requests_, reads, hooks_fetch);
  }
  timing::mark(marks, hooks_);  // end of the input
  {  // The graph's arithmetic (forward, backward, gradient hooks, fetches, update) flushes
    // denormals to zero, as TensorFlow's CPU ops do (SessionOptions::flush_denormals).
    const detail::ScopedFlushDenormal flush(flush_denormals_);
    graph_.forward();
    timing::mark(marks, hooks_);
    // Fused updates happen here. Momentum fuses only without Nesterov (a run-time choice).
    const bool fuse = !optimizer_slots_type::fuses_into_slot ||
                      optimizer_slots_.fuse(train_op_.optimizer);
    backward_update<pins>(fuse);
    if constexpr (detail::has_gradient_hook<Hooks>) {
      detail::call_before_apply_gradients(hooks_, graph_, train_op_.global_step->value);
    }
    timing::mark(marks, hooks_);
    stale_global_step_ = train_op_.global_step->value;
    if (hooks_fetch || any_fetched_) {
      any_fetched_ = true;  // stays true if a fetch throws: the next run clears what was filled
      // One callable for every hook: a lambda written inside the per-hook loop would be a new
      // type per hook, and so a new fill_values per hook (code that counts against GCC's
      // inline-unit-growth budget, which the hooks' after_run bodies then miss).
      const auto fetch = [this]<fixed_string N>() { return fetch_stale<N>(); };
      for_each_hook_index([&](auto i) {
        constexpr std::size_t k = decltype(i)::value;
        detail::fill_values(hana::at_c<k>(values_), hana::at_c<k>(requests_), fetched_[k],
                            fetch);
      });
      any_fetched_ = hooks_fetch;  // fetched_[k] is now hook k's args.active
    }
    if constexpr (sizeof...(Fetch) > 0) {
      std::size_t k = 0;
      ((caller.results[k++] = fetch_stale<Fetch>()), ...);
    } else {
      (void)caller;
    }
    timing::mark(marks, hooks_);  // end of the fetches
    apply_unfused<pins>(fuse);
    if constexpr (detail::has_update_hook<Hooks>) {
      update_context updated(graph_, optimizer_slots_, train_op_.optimizer,
                             train_op_.global_step->value);
      detail::call_after_apply_gradients(hooks_, updated);
    }
  }
  train_op_.global_step->value += train_op_.global_step_increment;
  timing::mark(marks, hooks_);
  detail::call_after_run(hooks_, ctx, values_, [&] { timing::mark(marks, hooks_); });
  if constexpr (step_phases::timed) {
    if (marks.active) timing::finish(marks, hooks_, train_op_.global_step->value);
  }
  if constexpr (skips_idle_runs) idle_left_ = detail::min_idle_runs(hooks_);
  return this->finish_step(true, ctx);
}

/// A run in which every hook is idle (skips_idle_runs): step() without the hooks. The same
/// feeds, checks, computation, caller fetches and update; no hook is called, nothing is
/// requested for one. Counted for skip_runs only when it completes.
template <class TrainOpT, class Input, class Hooks, class... Extras>
template <fixed_string... Fetch, class FeedInputs>
inline bool MonitoredTrainingSession<TrainOpT, Input, Hooks, Extras...>::idle_step(
    SessionRunValues<Fetch...>& caller, FeedInputs&& feed_inputs) {
  auto release_feeds = this->start_step();
  SessionRunContext ctx(&train_op_.global_step->value,
                        OriginalArgs{detail::fetch_names<Fetch...>},
                        train_op_.global_step_increment);
  if (!feed_inputs()) [[unlikely]] return this->finish_step(false, ctx);
  {
    typename graph_type::read_set reads{};
    graph_.check_fed(reads);
    detail::check_step_feeds<Fetch...>(graph_, requests_, reads, /*hooks_fetch=*/false);
  }
  {
    const detail::ScopedFlushDenormal flush(flush_denormals_);
    graph_.forward();
    const bool fuse = !optimizer_slots_type::fuses_into_slot ||
                      optimizer_slots_.fuse(train_op_.optimizer);
    backward_update<pins>(fuse);
    stale_global_step_ = train_op_.global_step->value;
    if constexpr (sizeof...(Fetch) > 0) {
      std::size_t k = 0;
      ((caller.results[k++] = fetch_stale<Fetch>()), ...);
    } else {
      (void)caller;
    }
    apply_unfused<pins>(fuse);
  }
  train_op_.global_step->value += train_op_.global_step_increment;
  --idle_left_;
  ++idle_skipped_;
  return this->finish_step(true, ctx);
}

/// A hooked run that does not train (run(no_train, ...), session_interface.hpp): the
/// caller's and the hooks' fetches with every hook's before_run and after_run
/// (run_context.trains() false), as step() calls them, and no backward pass, no gradient
/// hook, no update, no global-step increment. The fetches compute only what they read (no
/// forward pass of the loss unless fetched), from the current variables; "global_step" is the
/// current step. Every hook is called (the idle fast path is synced first), and a profiling
/// hook that asks times the run with the training step's phases, "backward" and
/// "unfused_update" empty. Kept apart from step(), which has no branch for it.
template <class TrainOpT, class Input, class Hooks, class... Extras>
template <fixed_string... Fetch, class FeedInputs>
inline bool MonitoredTrainingSession<TrainOpT, Input, Hooks, Extras...>::step_no_train(
    SessionRunValues<Fetch...>& caller, FeedInputs&& feed_inputs) {
  namespace hana = boost::hana;
  detail::check_no_train_hooks<graph_type>(std::type_identity<Hooks>{});
  sync_hooks_for_caller();  // every hook sees this run: none may be skipped idle
  auto release_feeds = this->start_step();
  SessionRunContext ctx(&train_op_.global_step->value,
                        OriginalArgs{detail::fetch_names<Fetch...>},
                        train_op_.global_step_increment, /*trains=*/false);
  step_marks marks;
  if constexpr (step_phases::timed) timing::start(marks, hooks_, ctx);
  auto args = detail::collect_before_run(
      hooks_, [&ctx, &marks, this](auto& h) {
        return timing::before_run(h, ctx, marks, hooks_);
      });
  bool hooks_fetch = false;
  for_each_hook_index([&](auto i) {
    constexpr std::size_t k = decltype(i)::value;
    hana::at_c<k>(requests_) = hana::at_c<k>(args);
    hooks_fetch |= detail::requests_fetch(hana::at_c<k>(requests_));
  });
  if (!feed_inputs()) [[unlikely]] return this->finish_step(false, ctx);
  hana::for_each(args, [this](const auto& a) { detail::apply_hook_feeds(graph_, a); });
  {  // only what the run fetches must be fed (no forward pass of the loss)
    typename graph_type::read_set reads{};
    detail::check_step_feeds<Fetch...>(graph_, requests_, reads, hooks_fetch);
  }
  timing::mark(marks, hooks_);  // end of the input
  timing::mark(marks, hooks_);  // forward: none beyond the fetches
  timing::mark(marks, hooks_);  // backward: none
  {
    const detail::ScopedFlushDenormal flush(flush_denormals_);
    stale_global_step_ = train_op_.global_step->value;
    if (hooks_fetch || any_fetched_) {
      any_fetched_ = true;
      const auto fetch = [this]<fixed_string N>() { return fetch_stale<N>(); };
      for_each_hook_index([&](auto i) {
        constexpr std::size_t k = decltype(i)::value;
        detail::fill_values(hana::at_c<k>(values_), hana::at_c<k>(requests_), fetched_[k],
                            fetch);
      });
      any_fetched_ = hooks_fetch;
    }
    if constexpr (sizeof...(Fetch) > 0) {
      std::size_t k = 0;
      ((caller.results[k++] = fetch_stale<Fetch>()), ...);
    } else {
      (void)caller;
    }
  }
  timing::mark(marks, hooks_);  // end of the fetches
  timing::mark(marks, hooks_);  // no update, no increment
  detail::call_after_run(hooks_, ctx, values_, [&] { timing::mark(marks, hooks_); });
  if constexpr (step_phases::timed) {
    if (marks.active) timing::finish(marks, hooks_, train_op_.global_step->value);
  }
  if constexpr (skips_idle_runs) idle_left_ = detail::min_idle_runs(hooks_);
  return this->finish_step(true, ctx);
}

}  // namespace hookfuse
