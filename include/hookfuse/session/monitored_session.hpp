// hookfuse/session/monitored_session.hpp: MonitoredTrainingSession, the fused training loop
// (tf.compat.v1.train.MonitoredTrainingSession).
//
// Hooks live in a boost::hana::tuple (hooks(...), session/hook_tuple.hpp). Every event is a
// compile-time fold over that tuple, and a step is one function (step(), behind run() and
// run<names...>()): the should_stop check, every hook's before_run, the next batch, forward,
// backward, every gradient hook's before_apply_gradients (session/gradient_event.hpp), the
// fetches some hook or the caller asked for, the update, every update hook's
// after_apply_gradients, every hook's after_run, the stop check.
// No virtual calls, no std::function, no heap allocation. With SGD (and Momentum without
// Nesterov) the update of every variable whose gradient no hook can see (detail::HookPins) is
// folded into the backward pass, decided at compile time (update_fused; docs/hooks.md, "The
// fused update and when gradients are stored").
//
// The parts: the class (session/training_session.hpp), its step functions
// (session/training_step.hpp), the compile-time checks of the hooks and fetches
// (session/session_checks.hpp), the phase timings that a hook with wants_phase_timings
// (ProfilerHook) receives (session/phase_timing.hpp). This header brings them all, with the
// class's deduction guides and fetch<Name>(session).
#pragma once

#include <boost/hana/tuple.hpp>

#include "hookfuse/session/session_options.hpp"
#include "hookfuse/session/training_session.hpp"
#include "hookfuse/session/training_step.hpp"

namespace hookfuse {

template <class T, class I, class H, class... E>
MonitoredTrainingSession(T, I, H, E...) -> MonitoredTrainingSession<T, I, H, E...>;
template <class T, class I, class S, class C, class L, class... Us, class... E>
  requires(!detail::is_chief_only_hooks<E>::value && ...)
MonitoredTrainingSession(T, I, SessionOptions<S, C, L>, boost::hana::tuple<Us...>, E...)
    -> MonitoredTrainingSession<
        T, I,
        detail::session_hooks_t<SessionOptions<S, C, L>, ChiefOnlyHooks<>,
                                boost::hana::tuple<Us...>, T, E...>,
        E...>;
template <class T, class I, class S, class C, class L, class... Us, class... Cs, class... E>
MonitoredTrainingSession(T, I, SessionOptions<S, C, L>, boost::hana::tuple<Us...>,
                         ChiefOnlyHooks<Cs...>, E...)
    -> MonitoredTrainingSession<
        T, I,
        detail::session_hooks_t<SessionOptions<S, C, L>, ChiefOnlyHooks<Cs...>,
                                boost::hana::tuple<Us...>, T, E...>,
        E...>;

/// The value of a named tensor from a session, `fetch<"loss">(session)` (no `template` keyword
/// needed in generic hook code).
template <fixed_string Name, class Session>
TensorValue fetch(Session& session) {
  return session.template fetch<Name>();
}

}  // namespace hookfuse
