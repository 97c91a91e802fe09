// hookfuse/hooks/concepts.hpp: what a hook is, event by event (tf.compat.v1.train.SessionRunHook).
//
// A hook is any class. Each of the seven events is optional; the session calls a method only if
// the hook declares it:
//   begin()                            once, before the graph is bound
//   after_create_session(session)      once, after the graph is bound and variables initialised
//   before_run(run_context)            every run; returns SessionRunArgs<names...> (what to fetch),
//                                      or with_feeds(SessionRunArgs<...>{}, feed<"x">(...), ...)
//   before_apply_gradients(gradients)  every run, between the backward pass and the update: the
//                                      hook may read or change the gradients (a gradient hook,
//                                      session/gradient_event.hpp; not a TensorFlow hook event)
//   after_apply_gradients(updated)     every run, right after the update: the hook may read or
//                                      change what the update wrote (the variables and their
//                                      optimizer slots; an update hook, session/gradient_event.hpp;
//                                      not a TensorFlow hook event)
//   after_run(run_context, run_values) every run that completes; run_values holds the fetches
//   end(session)                       once, when the session closes normally or input runs out
// A method that has one of these names but cannot be called this way is a compile error naming
// the hook and the method, and a class that declares none of the seven (every name misspelt) is
// a compile error naming the class: a hook never silently misses an event. A session declares
// which events it emits (`using emitted_events = SessionEvents<...>;`): MonitoredTrainingSession
// all seven, the evaluation session MonitoredSession all but the two gradient events. A hook that
// declares an event its session never emits (a gradient hook in an evaluation session) is a
// compile error naming the hook, the session and the event.
//
// A hook the user keeps is passed as std::ref(h): the session stores the reference_wrapper and
// calls the events on h itself (hook_t and hook_ref unwrap it).
#pragma once

#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "hookfuse/detail/compile_error.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"

namespace hookfuse {
namespace detail {

struct ProtocolNames {
  void begin();
  void after_create_session();
  void before_run();
  void after_run();
  void end();
  void before_apply_gradients();
  void after_apply_gradients();
};
// Taking &Probe<H>::name is ambiguous exactly when H has a member of that name, whatever its
// signature: that is how a misdeclared method is told apart from an absent one.
template <class H>
struct Probe : H, ProtocolNames {};

template <class T>
struct is_session_run_args : std::false_type {};
template <fixed_string... Ns>
struct is_session_run_args<SessionRunArgs<Ns...>> : std::true_type {};
template <fixed_string... Ns, class... Fs>
struct is_session_run_args<SessionRunArgsWithFeeds<SessionRunArgs<Ns...>, Fs...>>
    : std::true_type {};

template <class Args>
struct values_of;
template <fixed_string... Ns>
struct values_of<SessionRunArgs<Ns...>> {
  using type = SessionRunValues<Ns...>;
};
template <fixed_string... Ns, class... Fs>
struct values_of<SessionRunArgsWithFeeds<SessionRunArgs<Ns...>, Fs...>> {
  using type = SessionRunValues<Ns...>;
};

}  // namespace detail

/// The hook type a stored element stands for: H for H and for std::reference_wrapper<H>.
template <class T>
using hook_t = std::remove_cvref_t<std::unwrap_reference_t<std::remove_cvref_t<T>>>;

/// The hook a stored element stands for: the element itself, or the object a
/// std::reference_wrapper refers to.
template <class T>
constexpr auto& hook_ref(T& stored) {
  if constexpr (std::is_same_v<std::unwrap_reference_t<std::remove_cv_t<T>>, std::remove_cv_t<T>>)
    return stored;
  else
    return stored.get();
}

namespace detail {
/// Where the hook type H sits among the stored hooks of a tuple type (std::ref(h) counts as H),
/// and how often it occurs.
template <class H, class Tuple>
struct hook_position;
template <class H, template <class...> class Tuple, class... Hs>
struct hook_position<H, Tuple<Hs...>> {
  static constexpr std::size_t count = (std::size_t{std::is_same_v<H, hook_t<Hs>>} + ... + 0);
  static constexpr std::size_t index = [] {
    std::size_t i = 0, found = sizeof...(Hs);
    (void)((std::is_same_v<H, hook_t<Hs>> ? (found = i, true) : (++i, false)) || ...);
    return found;
  }();
};
}  // namespace detail

/// H declares a member with the protocol name (any signature).
template <class H>
concept DeclaresBegin = std::is_class_v<H> && !requires { &detail::Probe<H>::begin; };
template <class H>
concept DeclaresAfterCreateSession =
    std::is_class_v<H> && !requires { &detail::Probe<H>::after_create_session; };
template <class H>
concept DeclaresBeforeRun = std::is_class_v<H> && !requires { &detail::Probe<H>::before_run; };
template <class H>
concept DeclaresAfterRun = std::is_class_v<H> && !requires { &detail::Probe<H>::after_run; };
template <class H>
concept DeclaresEnd = std::is_class_v<H> && !requires { &detail::Probe<H>::end; };
template <class H>
concept DeclaresBeforeApplyGradients =
    std::is_class_v<H> && !requires { &detail::Probe<H>::before_apply_gradients; };
template <class H>
concept DeclaresAfterApplyGradients =
    std::is_class_v<H> && !requires { &detail::Probe<H>::after_apply_gradients; };
/// H declares at least one of the seven protocol methods.
template <class H>
concept DeclaresAnyEvent = DeclaresBegin<H> || DeclaresAfterCreateSession<H> ||
                           DeclaresBeforeRun<H> || DeclaresAfterRun<H> || DeclaresEnd<H> ||
                           DeclaresBeforeApplyGradients<H> || DeclaresAfterApplyGradients<H>;

/// H handles the event with a usable signature.
template <class H>
concept HandlesBegin = requires(H& h) { h.begin(); };
template <class H, class Session>
concept HandlesAfterCreateSession = requires(H& h, Session& s) { h.after_create_session(s); };
template <class H>
concept HandlesBeforeRun = requires(H& h, SessionRunContext& ctx) {
  { h.before_run(ctx) };
  requires detail::is_session_run_args<std::remove_cvref_t<decltype(h.before_run(ctx))>>::value;
};
template <class H, class Values>
concept HandlesAfterRun = requires(H& h, SessionRunContext& ctx, const Values& v) {
  h.after_run(ctx, v);
};
template <class H, class Session>
concept HandlesEnd = requires(H& h, Session& s) { h.end(s); };
/// `Context` is the session's GradientContext (session/gradient_event.hpp); a method taking
/// `const auto&` (an observer) is callable too, and then sees read-only views.
template <class H, class Context>
concept HandlesBeforeApplyGradients = requires(H& h, Context& gradients) {
  h.before_apply_gradients(gradients);
};
/// `Context` is the session's UpdateContext (session/gradient_event.hpp).
template <class H, class Context>
concept HandlesAfterApplyGradients = requires(H& h, Context& updated) {
  h.after_apply_gradients(updated);
};

/// A gradient hook: declares before_apply_gradients. The session stores the gradients of the
/// variables it touches (no fused update for them): every variable, unless the hook declares
/// `using gradient_variables = GradientVariables<"dense/kernel", ...>;` (Variables' own names).
template <class H>
concept GradientHook = DeclaresBeforeApplyGradients<H>;

/// A hook that can sit out the runs in which it would do nothing: the training session's idle
/// fast path (session/monitored_session.hpp). Two members:
///   `std::int64_t idle_runs() const`, asked after every after_run the hook receives: how many of
///     the following runs are idle for it: in each, before_run would request nothing, feed
///     nothing and change nothing, and after_run would change nothing but the hook's own run
///     count (LoggingTensorHook's iter_count between its every_n_iter triggers). 0: the next run
///     is not idle. std::numeric_limits<std::int64_t>::max(): none will need it.
///   `void skip_runs(std::int64_t n)`, called before the next event the hook receives after it
///     sat out n >= 1 completed runs (and before session.hook<...>(), session.hooks(),
///     session.variables() and close() hand the hook out): advances its run count by n, as n
///     idle runs would have. A run that ends the input or throws is not counted (after_run
///     would not have been called).
/// When every hook of a session is SkipsIdleRuns, or has no run event at all, a run in which
/// every hook is idle calls no hook: the step is the graph's work alone. TensorFlow has no
/// counterpart: its hooks are called every run.
template <class H>
concept SkipsIdleRuns = requires(H& h, const H& c, std::int64_t n) {
  { c.idle_runs() } -> std::convertible_to<std::int64_t>;
  h.skip_runs(n);
};

/// The variables a gradient hook touches, by their own names (see GradientHook).
template <fixed_string... Names>
struct GradientVariables {
  static constexpr bool contains(std::string_view name) {
    (void)name;  // unused for an empty list
    return ((Names.view() == name) || ... || false);
  }
};
namespace detail {
/// Every variable: what a gradient hook touches unless it declares gradient_variables.
struct AllGradientVariables {
  static constexpr bool contains(std::string_view) { return true; }
};
template <class H>
struct gradient_variables_of {
  using type = AllGradientVariables;
};
template <class H>
  requires requires { typename H::gradient_variables; }
struct gradient_variables_of<H> {
  using type = typename H::gradient_variables;
};
}  // namespace detail
/// H::gradient_variables, or every variable.
template <class H>
using gradient_variables_t = typename detail::gradient_variables_of<H>::type;

/// The events of the hook protocol, in the order a step calls them.
enum class SessionEvent {
  begin,
  after_create_session,
  before_run,
  before_apply_gradients,
  after_apply_gradients,
  after_run,
  end
};

/// The events a session emits: a session type declares
/// `using emitted_events = SessionEvents<SessionEvent::begin, ...>;`, and check_hook refuses a
/// hook that declares an event outside it.
template <SessionEvent... Events>
struct SessionEvents {
  static constexpr bool contains(SessionEvent e) { return ((e == Events) || ... || false); }
};
/// Every event: what a training session (MonitoredTrainingSession) emits.
using AllSessionEvents =
    SessionEvents<SessionEvent::begin, SessionEvent::after_create_session,
                  SessionEvent::before_run, SessionEvent::before_apply_gradients,
                  SessionEvent::after_apply_gradients, SessionEvent::after_run,
                  SessionEvent::end>;

namespace detail {
/// The gradient context a session type hands to hook H's before_apply_gradients (void for a
/// session that never emits the event).
template <class Session, class H>
struct gradient_context_of {
  using type = void;
};
template <class Session, class H>
  requires requires { typename Session::template gradient_context_for<H>; }
struct gradient_context_of<Session, H> {
  using type = typename Session::template gradient_context_for<H>;
};
/// The update context a session type hands to after_apply_gradients (void for a session that
/// never emits the event).
template <class Session>
struct update_context_of {
  using type = void;
};
template <class Session>
  requires requires { typename Session::update_context; }
struct update_context_of<Session> {
  using type = typename Session::update_context;
};

/// The name of an event's method ("before_apply_gradients"), for messages.
constexpr std::string_view event_name(SessionEvent e) {
  constexpr std::string_view names[] = {"begin",
                                        "after_create_session",
                                        "before_run",
                                        "before_apply_gradients",
                                        "after_apply_gradients",
                                        "after_run",
                                        "end"};
  return names[static_cast<std::size_t>(e)];
}
/// The name of a class template without its arguments ("hookfuse::MonitoredSession"): a
/// session's arguments spell the whole model.
template <class T>
constexpr std::string_view template_name() {
  const std::string_view name = type_name<T>("this session");
  return name.substr(0, name.find('<'));
}

/// Fails to compile unless Session emits Event, with an error naming the hook, the session and
/// the event.
template <class Hook, class Session, SessionEvent Event>
constexpr bool check_event_emitted() {
  constexpr bool emitted = Session::emitted_events::contains(Event);
  if constexpr (!emitted) {
    constexpr message_text m = [] {
      message_text t;
      t << "hook `" << message_type_name<Hook>() << "` declares " << event_name(Event)
        << ", an event that a `" << template_name<Session>()
        << "` never emits, so the hook would never receive it";
      if (Event == SessionEvent::before_apply_gradients)
        t << ": a gradient hook needs a training session (MonitoredTrainingSession); an "
             "evaluation session (MonitoredSession) runs no backward pass";
      if (Event == SessionEvent::after_apply_gradients)
        t << ": an update hook needs a training session (MonitoredTrainingSession); an "
             "evaluation session (MonitoredSession) updates nothing";
      return t;
    }();
    (void)raise_compile_error<message_string<m.size>(m)>::value;
  }
  return emitted;
}
/// Whether the hook declares the event (`Declared`) and the session emits it; a declared event
/// the session never emits fails to compile (check_event_emitted).
template <class Hook, class Session, SessionEvent Event, bool Declared>
constexpr bool declared_and_emitted() {
  if constexpr (Declared) return check_event_emitted<Hook, Session, Event>();
  else return false;
}
}  // namespace detail

/// The SessionRunArgs type a hook's before_run returns (SessionRunArgs<> without before_run).
template <class H>
struct run_args {
  using type = SessionRunArgs<>;
};
template <HandlesBeforeRun H>
struct run_args<H> {
  using type = std::remove_cvref_t<decltype(std::declval<H&>().before_run(
      std::declval<SessionRunContext&>()))>;
};
template <class H>
using run_args_t = typename run_args<H>::type;
template <class H>
using run_values_t = typename detail::values_of<run_args_t<H>>::type;

namespace detail {
/// The error for a hook whose after_run cannot be called with `Values` (the
/// SessionRunValues<names...> of the names its before_run requests).
template <class Hook, fixed_string... Names>
constexpr message_text after_run_message(SessionRunValues<Names...>*) {
  message_text t;
  t << "hook `" << message_type_name<Hook>()
    << "` declares after_run, but it cannot be called as after_run(SessionRunContext&, "
       "const SessionRunValues<names...>&) with the names its before_run requests (";
  if constexpr (sizeof...(Names) == 0) t << "none";
  std::size_t i = 0;
  ((t << (i++ == 0 ? "" : ", ") << Names.view()), ...);
  t << ")";
  return t;
}
}  // namespace detail

/// A hook that reads variables' gradients itself (through session.graph(), not through a
/// "gradients/<name>" fetch) declares `static constexpr bool reads_gradients = true;`. The
/// session then stores every gradient instead of folding the update into the backward pass.
template <class H>
concept ReadsGradients = requires { requires bool(H::reads_gradients); };

/// Checks one hook against the protocol for a session type; fails to compile, naming the hook
/// (in the instantiation context, `Hook = ...`) and the method, when a declared method is not
/// callable as the protocol calls it, or when the class declares none of the seven methods.
/// A method the session never calls (SessionEvents) is a compile error naming the hook, the
/// session and the event (detail::check_event_emitted); its signature is then not checked.
template <class Hook, class Session>
constexpr bool check_hook() {
  static_assert(std::is_class_v<Hook>, "hookfuse: a hook must be a class type");
  static_assert(requires { Session::emitted_events::contains(SessionEvent::begin); },
                "hookfuse: a session type declares the events it emits: "
                "`using emitted_events = SessionEvents<SessionEvent::begin, ...>;`");
  // A class that only declares reads_gradients changes how the session stores gradients, so
  // it does something without any event.
  static_assert(!std::is_class_v<Hook> || DeclaresAnyEvent<Hook> || ReadsGradients<Hook>,
                "hookfuse: this hook declares none of the protocol methods begin, "
                "after_create_session, before_run, before_apply_gradients, "
                "after_apply_gradients, after_run, end (check their spelling), so it "
                "would receive no event (the hook is 'Hook' in the instantiation above; a hook "
                "kept by reference is passed as hooks(std::ref(h)))");
  if constexpr (detail::declared_and_emitted<Hook, Session, SessionEvent::begin,
                                             DeclaresBegin<Hook>>())
    static_assert(HandlesBegin<Hook>,
                  "hookfuse: this hook declares begin, but it cannot be called as begin()");
  if constexpr (detail::declared_and_emitted<Hook, Session, SessionEvent::after_create_session,
                                             DeclaresAfterCreateSession<Hook>>())
    static_assert(HandlesAfterCreateSession<Hook, Session>,
                  "hookfuse: this hook declares after_create_session, but it cannot be called as "
                  "after_create_session(session)");
  if constexpr (detail::declared_and_emitted<Hook, Session, SessionEvent::before_run,
                                             DeclaresBeforeRun<Hook>>())
    static_assert(HandlesBeforeRun<Hook>,
                  "hookfuse: this hook declares before_run, but it cannot be called as "
                  "before_run(SessionRunContext&) returning SessionRunArgs<names...> (or "
                  "with_feeds(SessionRunArgs<names...>{}, feed<\"x\">(...), ...))");
  if constexpr (detail::declared_and_emitted<Hook, Session, SessionEvent::after_run,
                                             DeclaresAfterRun<Hook>>())
    if constexpr (!HandlesAfterRun<Hook, run_values_t<Hook>>) {
      constexpr detail::message_text m =
          detail::after_run_message<Hook>(static_cast<run_values_t<Hook>*>(nullptr));
      (void)sizeof(compile_error<detail::message_string<m.size>(m)>);
    }
  if constexpr (detail::declared_and_emitted<Hook, Session, SessionEvent::end,
                                             DeclaresEnd<Hook>>())
    static_assert(HandlesEnd<Hook, Session>,
                  "hookfuse: this hook declares end, but it cannot be called as end(session)");
  if constexpr (detail::declared_and_emitted<Hook, Session, SessionEvent::before_apply_gradients,
                                             DeclaresBeforeApplyGradients<Hook>>()) {
    using Context = typename detail::gradient_context_of<Session, Hook>::type;
    static_assert(!std::is_void_v<Context>,
                  "hookfuse: a session that emits before_apply_gradients declares "
                  "`template <class H> using gradient_context_for = GradientContext<...>;`");
    if constexpr (!std::is_void_v<Context>)
      static_assert(HandlesBeforeApplyGradients<Hook, Context>,
                    "hookfuse: this hook declares before_apply_gradients, but it cannot be called "
                    "as before_apply_gradients(GradientContext<...>&) (take `auto& gradients` to "
                    "change them, `const auto& gradients` to read them)");
  }
  if constexpr (detail::declared_and_emitted<Hook, Session, SessionEvent::after_apply_gradients,
                                             DeclaresAfterApplyGradients<Hook>>()) {
    using Context = typename detail::update_context_of<Session>::type;
    static_assert(!std::is_void_v<Context>,
                  "hookfuse: a session that emits after_apply_gradients declares "
                  "`using update_context = UpdateContext<...>;`");
    if constexpr (!std::is_void_v<Context>)
      static_assert(HandlesAfterApplyGradients<Hook, Context>,
                    "hookfuse: this hook declares after_apply_gradients, but it cannot be called "
                    "as after_apply_gradients(UpdateContext<...>&) (take `auto& updated` to "
                    "change the values, `const auto& updated` to read them)");
  }
  return true;
}

}  // namespace hookfuse
