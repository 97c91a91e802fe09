// hookfuse/session/hook_tuple.hpp: a session's hooks, a boost::hana::tuple, and what the
// session reads off their types at compile time. hooks(...) builds the tuple (a std::ref(h)
// element stands for h; std::cref(h) is a compile error); detail::HookPins<Hooks> is the fusion
// policy the session's graph consults: which variables keep a stored gradient because a hook can
// see it (session/monitored_session.hpp, update_fused).
#pragma once

#include <boost/hana/tuple.hpp>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/session/gradient_event.hpp"

namespace hookfuse {

namespace detail {
/// T is std::reference_wrapper<const H> (std::cref(h)); named through <type_traits> only.
template <class T>
inline constexpr bool const_reference_wrapper_v =
    !std::is_same_v<std::unwrap_reference_t<T>, T> &&
    std::is_const_v<std::remove_reference_t<std::unwrap_reference_t<T>>>;
/// Fails to compile for std::cref(h): the session calls a hook's events, which may change it
/// (counters, timers, the last values), so it needs a non-const hook.
template <class Hook>
constexpr bool check_not_cref() {
  static_assert(!const_reference_wrapper_v<Hook>,
                "hookfuse: hooks(std::cref(h)): the session calls the hook's events on it, and "
                "they may change it, so it cannot be const (the hook is 'Hook' in the "
                "instantiation above): pass std::ref(h) to keep the hook and read it "
                "afterwards, or pass it by value");
  return !const_reference_wrapper_v<Hook>;
}
}  // namespace detail

/// The hooks of a session, in the order their events are called. Each is copied into the
/// session, except one passed as std::ref(h): the session then calls h itself, which must
/// outlive the session, and h can be read afterwards (session.hook<I>() reaches either kind).
/// std::cref(h) does not compile: events are called on a non-const hook.
template <class... Hooks>
constexpr auto hooks(Hooks&&... hs) {
  [[maybe_unused]] constexpr bool checked =
      (detail::check_not_cref<std::remove_cvref_t<Hooks>>() && ... && true);
  return boost::hana::make_tuple(std::forward<Hooks>(hs)...);
}

namespace detail {
/// The session's fusion policy: a variable is pinned (its gradient stored) when a hook could see
/// its gradient: it requests "gradients/<variable>", declares reads_gradients, or is a gradient
/// hook touching it (every variable unless it declares gradient_variables).
template <class Hooks>
struct HookPins;
template <class... Hs>
struct HookPins<boost::hana::tuple<Hs...>> {
  template <fixed_string... Ns>
  static constexpr bool requested(SessionRunArgs<Ns...>, std::string_view var) {
    (void)var;  // unused when the hook requests nothing
    return ((gradient_target(Ns.view()) == var) || ...);
  }
  static constexpr bool pinned(std::string_view var) {
    (void)var;  // unused in a session without hooks
    return ((ReadsGradients<hook_t<Hs>> ||
             (GradientHook<hook_t<Hs>> && gradient_variables_t<hook_t<Hs>>::contains(var)) ||
             requested(run_args_t<hook_t<Hs>>{}, var)) ||
            ...);
  }
};
}  // namespace detail

}  // namespace hookfuse
