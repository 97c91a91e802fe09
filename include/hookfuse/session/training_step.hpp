// hookfuse/session/training_step.hpp: the runs of a MonitoredTrainingSession, as one fused
// function each: the training step (step), the step in which every hook is idle (idle_step),
// the hooked run that does not train (step_no_train), and the auxiliary evaluation
// (evaluate). A friend of the session, which forwards to these: the session header holds its
// state and API, this one the order of a run's events.
#pragma once

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/feeds.hpp"
#include "hookfuse/autodiff/fusion_policy.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/denormal.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/session/gradient_event.hpp"
#include "hookfuse/session/hook_calls.hpp"
#include "hookfuse/session/hook_feeds.hpp"
#include "hookfuse/session/phase_timing.hpp"

namespace hookfuse::detail {

/// The runs of `Session` (a MonitoredTrainingSession), which declares this a friend.
template <class Session>
struct TrainingStep {
  /// The backward pass with the optimizer's update folded in for the variables update_fused
  /// names (`fuse` false: none, every gradient stored). For Momentum the fused variables'
  /// values are updated from their slots right here too, so that an exception from a later
  /// fetch never leaves a slot updated and its variable not. apply_unfused does the rest.
  template <class Pin>
  static void backward_update(Session& s, bool fuse) {
    if constexpr (Session::optimizer_slots_type::fuses_into_slot) {
      if (!fuse) {
        s.graph_.template backward<detail::FuseNone>(
            s.optimizer_slots_.bind(s.train_op_.optimizer));
        return;
      }
      s.graph_.template backward<Pin>(s.optimizer_slots_.bind(s.train_op_.optimizer));
      s.graph_.template apply_fused_slots<Pin>(s.optimizer_slots_.bind(s.train_op_.optimizer));
    } else {
      (void)fuse;
      s.graph_.template backward<Pin>(s.optimizer_slots_.bind(s.train_op_.optimizer));
    }
  }
  template <class Pin>
  static void apply_unfused(Session& s, bool fuse) {
    if constexpr (Session::optimizer_slots_type::fuses_into_slot) {
      if (!fuse) {
        s.graph_.template apply_unfused<detail::FuseNone>(
            s.optimizer_slots_.bind(s.train_op_.optimizer));
        s.optimizer_slots_.finish(s.train_op_.optimizer);
        return;
      }
    }
    (void)fuse;
    s.graph_.template apply_unfused<Pin>(s.optimizer_slots_.bind(s.train_op_.optimizer));
    s.optimizer_slots_.finish(s.train_op_.optimizer);
  }

  template <class H, class Marks>
  static auto timed_before_run(Session& s, H& h, SessionRunContext& ctx, Marks& marks) {
    auto a = detail::call_before_run(h, ctx);
    if constexpr (HandlesBeforeRun<H>) mark(s, marks);
    return a;
  }
  /// The end of a phase: one clock reading in a timed step, nothing otherwise.
  template <class Marks>
  static void mark(Session& s, Marks& marks) {
    if constexpr (Session::step_phases::timed) {
      if (marks.active) marks.t[marks.k++] = timing_now(s.hooks_, marks.clock_hook);
    } else {
      (void)s;
      (void)marks;
    }
  }

  /// The training step every run() overload calls: `caller` receives the caller's fetches
  /// (none for plain run()); `feed_inputs()` feeds the graph and returns false at the end of
  /// the input. Returns whether a step ran. When every hook can sit out idle runs
  /// (Session::skips_idle_runs) and all are idle in this one, idle_step() runs instead: no hook is
  /// called.
  template <fixed_string... Fetch, class FeedInputs>
  static bool step(Session& s, SessionRunValues<Fetch...>& caller, FeedInputs&& feed_inputs) {
    namespace hana = boost::hana;
    if constexpr (Session::skips_idle_runs) {
      if (s.idle_left_ > 0) [[likely]]
        return idle_step(s, caller, std::forward<FeedInputs>(feed_inputs));
      s.sync_idle_hooks();
    }
    auto release_feeds = s.start_step();
    SessionRunContext ctx(&s.train_op_.global_step->value,
                          OriginalArgs{detail::fetch_names<Fetch...>},
                          s.train_op_.global_step_increment);
    // Phase timings (hooks/step_timeline.hpp): `marks` is an empty object and every mark() an
    // empty call unless a hook wants them; with one, the clock is read only when a hook asked
    // for this step, decided here, before the first before_run, so that every hook's before_run
    // is in the timeline.
    typename Session::step_marks marks;
    if constexpr (Session::step_phases::timed) start_timing(s.hooks_, marks, ctx);
    // The lambda is force-inlined (HOOKFUSE_ALWAYS_INLINE, config.hpp): it is one function
    // per hook type.
    auto args =
        detail::collect_before_run(s.hooks_, [&ctx, &marks, &s](auto& h) HOOKFUSE_ALWAYS_INLINE {
          return timed_before_run(s, h, ctx, marks);
        });
    // What each hook requests is kept in s.requests_ (the args without their feed_dicts), which
    // the fetch checks and fills below read: `args` is then dead after the hooks' feeds, where
    // GCC would otherwise keep it across the forward pass by packing every hook's flag into one
    // register (a shift and an OR per hook) and spilling it. hooks_fetch: whether any hook
    // requests a tensor this run (one OR per hook that can request one), so that a step in
    // which no hook fetches (every hook between its triggers) checks and fills nothing per hook.
    bool hooks_fetch = false;
    for_each_index<Session::num_hooks>([&](auto i) {
      constexpr std::size_t k = decltype(i)::value;
      hana::at_c<k>(s.requests_) = hana::at_c<k>(args);
      hooks_fetch |= detail::requests_fetch(hana::at_c<k>(s.requests_));
    });
    // [[unlikely]]: the input ends once. Without it GCC guesses that the rest of the step runs
    // only about a third as often as the before_run calls, and gives inlining the hooks'
    // after_run bodies too low a priority (bench/README.md, "Hook overhead").
    if (!feed_inputs()) [[unlikely]]
      return s.finish_step(false, ctx);
    // The hooks' feed_dicts, after the input's: a hook's feed replaces the input's.
    hana::for_each(args, [&s](const auto& a) { detail::apply_hook_feeds(s.graph_, a); });
    {  // before anything is computed or updated
      typename Session::graph_type::read_set reads{};
      s.graph_.check_fed(reads);  // the forward pass's placeholders
      detail::check_step_feeds<Fetch...>(s.graph_, s.requests_, reads, hooks_fetch);
    }
    mark(s, marks);  // end of the input
    {  // The graph's arithmetic (forward, backward, gradient hooks, fetches, update) flushes
      // denormals to zero, as TensorFlow's CPU ops do (SessionOptions::flush_denormals).
      const detail::ScopedFlushDenormal flush(s.flush_denormals_);
      s.graph_.forward();
      mark(s, marks);
      // Fused updates happen here. Momentum fuses only without Nesterov (a run-time choice).
      const bool fuse = !Session::optimizer_slots_type::fuses_into_slot ||
                        s.optimizer_slots_.fuse(s.train_op_.optimizer);
      backward_update<typename Session::pins>(s, fuse);
      if constexpr (detail::has_gradient_hook<typename Session::hooks_type>) {
        detail::call_before_apply_gradients(s.hooks_, s.graph_, s.train_op_.global_step->value);
      }
      mark(s, marks);
      s.stale_global_step_ = s.train_op_.global_step->value;
      if (hooks_fetch || s.any_fetched_) {
        s.any_fetched_ = true;  // stays true if a fetch throws: the next run clears what was filled
        // One callable for every hook: a lambda written inside the per-hook loop would be a new
        // type per hook, and so a new fill_values per hook (code that counts against GCC's
        // inline-unit-growth budget, which the hooks' after_run bodies then miss).
        const auto fetch = [&s]<fixed_string N>() { return s.template fetch_stale<N>(); };
        for_each_index<Session::num_hooks>([&](auto i) {
          constexpr std::size_t k = decltype(i)::value;
          detail::fill_values(hana::at_c<k>(s.values_), hana::at_c<k>(s.requests_), s.fetched_[k],
                              fetch);
        });
        s.any_fetched_ = hooks_fetch;  // s.fetched_[k] is now hook k's args.active
      }
      if constexpr (sizeof...(Fetch) > 0) {
        std::size_t k = 0;
        ((caller.results[k++] = s.template fetch_stale<Fetch>()), ...);
      } else {
        (void)caller;
      }
      mark(s, marks);  // end of the fetches
      apply_unfused<typename Session::pins>(s, fuse);
    }
    s.train_op_.global_step->value += s.train_op_.global_step_increment;
    mark(s, marks);
    detail::call_after_run(s.hooks_, ctx, s.values_, [&] { mark(s, marks); });
    if constexpr (Session::step_phases::timed) {
      if (marks.active)
        finish_timing<typename Session::step_phases>(s.hooks_, marks,
                                                     s.train_op_.global_step->value);
    }
    if constexpr (Session::skips_idle_runs) s.idle_left_ = detail::min_idle_runs(s.hooks_);
    return s.finish_step(true, ctx);
  }

  /// A run in which every hook is idle (Session::skips_idle_runs): step() without the hooks. The
  /// same feeds, checks, computation, caller fetches and update; no hook is called, nothing is
  /// requested for one. Counted for skip_runs only when it completes.
  template <fixed_string... Fetch, class FeedInputs>
  static bool idle_step(Session& s, SessionRunValues<Fetch...>& caller, FeedInputs&& feed_inputs) {
    auto release_feeds = s.start_step();
    SessionRunContext ctx(&s.train_op_.global_step->value,
                          OriginalArgs{detail::fetch_names<Fetch...>},
                          s.train_op_.global_step_increment);
    if (!feed_inputs()) [[unlikely]]
      return s.finish_step(false, ctx);
    {
      typename Session::graph_type::read_set reads{};
      s.graph_.check_fed(reads);
      detail::check_step_feeds<Fetch...>(s.graph_, s.requests_, reads, /*hooks_fetch=*/false);
    }
    {
      const detail::ScopedFlushDenormal flush(s.flush_denormals_);
      s.graph_.forward();
      const bool fuse = !Session::optimizer_slots_type::fuses_into_slot ||
                        s.optimizer_slots_.fuse(s.train_op_.optimizer);
      backward_update<typename Session::pins>(s, fuse);
      s.stale_global_step_ = s.train_op_.global_step->value;
      if constexpr (sizeof...(Fetch) > 0) {
        std::size_t k = 0;
        ((caller.results[k++] = s.template fetch_stale<Fetch>()), ...);
      } else {
        (void)caller;
      }
      apply_unfused<typename Session::pins>(s, fuse);
    }
    s.train_op_.global_step->value += s.train_op_.global_step_increment;
    --s.idle_left_;
    ++s.idle_skipped_;
    return s.finish_step(true, ctx);
  }

  /// A hooked run that does not train (run(no_train, ...), session_interface.hpp): the
  /// caller's and the hooks' fetches with every hook's before_run and after_run
  /// (run_context.trains() false), as step() calls them, and no backward pass, no gradient
  /// hook, no update, no global-step increment. The fetches compute only what they read (no
  /// forward pass of the loss unless fetched), from the current variables; "global_step" is the
  /// current step. Every hook is called (the idle fast path is synced first), and a profiling
  /// hook that asks times the run with the training step's phases, "backward" and
  /// "unfused_update" empty. Kept apart from step(), which has no branch for it.
  template <fixed_string... Fetch, class FeedInputs>
  static bool step_no_train(Session& s, SessionRunValues<Fetch...>& caller,
                            FeedInputs&& feed_inputs) {
    namespace hana = boost::hana;
    Session::fetch_checks::check_no_train_hooks(std::type_identity<typename Session::hooks_type>{});
    s.sync_hooks_for_caller();  // every hook sees this run: none may be skipped idle
    auto release_feeds = s.start_step();
    SessionRunContext ctx(&s.train_op_.global_step->value,
                          OriginalArgs{detail::fetch_names<Fetch...>},
                          s.train_op_.global_step_increment, /*trains=*/false);
    typename Session::step_marks marks;
    if constexpr (Session::step_phases::timed) start_timing(s.hooks_, marks, ctx);
    auto args = detail::collect_before_run(
        s.hooks_, [&ctx, &marks, &s](auto& h) { return timed_before_run(s, h, ctx, marks); });
    bool hooks_fetch = false;
    for_each_index<Session::num_hooks>([&](auto i) {
      constexpr std::size_t k = decltype(i)::value;
      hana::at_c<k>(s.requests_) = hana::at_c<k>(args);
      hooks_fetch |= detail::requests_fetch(hana::at_c<k>(s.requests_));
    });
    if (!feed_inputs()) [[unlikely]]
      return s.finish_step(false, ctx);
    hana::for_each(args, [&s](const auto& a) { detail::apply_hook_feeds(s.graph_, a); });
    {  // only what the run fetches must be fed (no forward pass of the loss)
      typename Session::graph_type::read_set reads{};
      detail::check_step_feeds<Fetch...>(s.graph_, s.requests_, reads, hooks_fetch);
    }
    mark(s, marks);  // end of the input
    mark(s, marks);  // forward: none beyond the fetches
    mark(s, marks);  // backward: none
    {
      const detail::ScopedFlushDenormal flush(s.flush_denormals_);
      s.stale_global_step_ = s.train_op_.global_step->value;
      if (hooks_fetch || s.any_fetched_) {
        s.any_fetched_ = true;
        const auto fetch = [&s]<fixed_string N>() { return s.template fetch_stale<N>(); };
        for_each_index<Session::num_hooks>([&](auto i) {
          constexpr std::size_t k = decltype(i)::value;
          detail::fill_values(hana::at_c<k>(s.values_), hana::at_c<k>(s.requests_), s.fetched_[k],
                              fetch);
        });
        s.any_fetched_ = hooks_fetch;
      }
      if constexpr (sizeof...(Fetch) > 0) {
        std::size_t k = 0;
        ((caller.results[k++] = s.template fetch_stale<Fetch>()), ...);
      } else {
        (void)caller;
      }
    }
    mark(s, marks);  // end of the fetches
    mark(s, marks);  // no update, no increment
    detail::call_after_run(s.hooks_, ctx, s.values_, [&] { mark(s, marks); });
    if constexpr (Session::step_phases::timed) {
      if (marks.active)
        finish_timing<typename Session::step_phases>(s.hooks_, marks,
                                                     s.train_op_.global_step->value);
    }
    if constexpr (Session::skips_idle_runs) s.idle_left_ = detail::min_idle_runs(s.hooks_);
    return s.finish_step(true, ctx);
  }
  /// Session::evaluate<First, Rest...>(feeds...): the named tensors without a training step.
  template <fixed_string First, fixed_string... Rest, class... Fs>
  static SessionRunValues<First, Rest...> evaluate(Session& s, const Fs&... feeds) {
    using graph_type = typename Session::graph_type;
    Session::template check_run_fetches<First, Rest...>();
    static_assert(!(Session::template is_gradient_fetch<First>() || ... ||
                    Session::template is_gradient_fetch<Rest>()),
                  "hookfuse: session.evaluate<...>() computes no gradient: fetch "
                  "\"gradients/<name>\" in a training run (run<...>()) instead");
    if (s.closed_) detail::fail<RuntimeError>("hookfuse: evaluate() called after close()");
    // The caller's feeds last for this evaluation only (TF's feed_dict): the values computed
    // here stay readable, and nothing later reads the caller's memory.
    detail::ReleaseFeeds<graph_type> release{sizeof...(Fs) > 0 ? &s.graph_ : nullptr};
    if constexpr (sizeof...(Fs) > 0) {
      s.graph_.clear_feeds();
      (feeds.apply(s.graph_), ...);
    }
    typename graph_type::read_set reads{};
    detail::check_step_feeds<First, Rest...>(s.graph_, boost::hana::make_tuple(), reads);
    SessionRunValues<First, Rest...> values;
    std::size_t k = 0;
    values.results[k++] = s.template fetch<First>();  // "global_step": the current step
    ((values.results[k++] = s.template fetch<Rest>()), ...);
    return values;
  }
};

}  // namespace hookfuse::detail
