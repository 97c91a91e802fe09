// hookfuse/session/session_checks.hpp: the compile-time checks of a session's hooks and
// fetches: no std::cref hook, every fetched name a tensor of the model (or "global_step", or
// "gradients/<name>" of a tensor the loss has a gradient for), no gradient in a run that does
// not train. Each fails with a static_assert whose instantiation names the hook and the name.
#pragma once

#include <boost/hana/tuple.hpp>
#include <functional>
#include <type_traits>

#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/session/hook_calls.hpp"

namespace hookfuse::detail {

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

template <class Hook, fixed_string Name, bool Known>
constexpr bool check_fetch() {
  static_assert(Known,
                "hookfuse: a hook fetches a tensor name that the model does not have, or "
                "'gradients/<name>' of a tensor the loss has no gradient for "
                "(the hook is 'Hook' and the name is 'Name' in the instantiation above); "
                "under an Estimator, a tensor that a training hook fetches is listed in "
                "EstimatorSpec::training_tensors");
  return Known;
}
template <fixed_string Name, bool Known>
constexpr bool check_run_fetch() {
  static_assert(Known,
                "hookfuse: session.run<names...>() fetches a tensor name that the model does not "
                "have, or 'gradients/<name>' of a tensor the loss has no gradient for (the name "
                "is 'Name' in the instantiation above)");
  return Known;
}
/// run(no_train) (Hook = void: the caller's fetch) fetches no gradient.
template <class Hook, fixed_string Name, bool NoGradient>
constexpr bool check_no_train_fetch() {
  static_assert(NoGradient,
                "hookfuse: session.run(no_train) computes no gradient (no backward pass), but "
                "the caller (Hook = void) or a hook may fetch 'gradients/<name>' in it (the hook "
                "is 'Hook' and the name is 'Name' in the instantiation above): fetch it in a "
                "training run");
  return NoGradient;
}

/// The fetch checks of a session over `Graph` (static: they run at compile time).
template <class Graph>
struct FetchChecks {
  using graph_type = Graph;
  template <fixed_string... Names>
  static constexpr void check_run_fetches() {
    (check_run_fetch < Names,
     Names == global_step_name || graph_type::template has<Names> ||
         is_gradient_fetch<Names>() > (),
     ...);
  }
  /// run<names...>(no_train): no "gradients/<name>" (no backward pass in such a run).
  template <fixed_string... Names>
  static constexpr bool check_no_train_fetches() {
    return (check_no_train_fetch<void, Names, !is_gradient_fetch<Names>()>() && ...);
  }
  /// run(no_train): no hook may request "gradients/<name>" either.
  template <class... Hs>
  static constexpr void check_no_train_hooks(std::type_identity<boost::hana::tuple<Hs...>>) {
    (check_no_train_hook<hook_t<Hs>>(run_args_t<hook_t<Hs>>{}), ...);
  }
  template <class H, fixed_string... Names>
  static constexpr void check_no_train_hook(SessionRunArgs<Names...>) {
    (check_no_train_fetch<H, Names, !is_gradient_fetch<Names>()>(), ...);
  }
  template <class H, fixed_string... Names>
  static constexpr void check_names(SessionRunArgs<Names...>) {
    (check_fetch < H, Names,
     Names == global_step_name || graph_type::template has<Names> ||
         is_gradient_fetch<Names>() > (),
     ...);
  }
  /// "gradients/<name>" where the loss depends on <name> and <name> on a variable.
  template <fixed_string Name>
  static constexpr bool is_gradient_fetch() {
    if constexpr (gradient_target(Name.view()).empty())
      return false;
    else
      return graph_type::template has_adjoint<gradient_target_name<Name>()>;
  }
};

}  // namespace hookfuse::detail
