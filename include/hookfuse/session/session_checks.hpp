// hookfuse/session/session_checks.hpp: the compile-time checks of a MonitoredTrainingSession
// (session/monitored_session.hpp): the hooks against the protocol, the names a hook or the caller
// fetches against the model (Graph: the session's bound graph type, with has<Name>,
// has_adjoint<Name> and names_type), and the fetches of a run that does not train. Each fails to
// compile with a message naming the hook (or `void`, the caller), the name and the model's
// tensors; each passing check is a constant expression and emits no code.
#pragma once

#include <boost/hana/tuple.hpp>
#include <string_view>
#include <type_traits>

#include "hookfuse/detail/compile_error.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/step_timeline.hpp"
#include "hookfuse/session/gradient_event.hpp"
#include "hookfuse/session/hook_calls.hpp"
#include "hookfuse/session/hook_feeds.hpp"

namespace hookfuse::detail {

/// Fails to compile, naming the hook, the name and the model's tensors (a "did you mean" for a
/// close one), when a hook fetches a name the model does not have (Names: the model's NameList).
template <class Hook, fixed_string Name, bool Known, class Names>
constexpr bool check_fetch() {
  if constexpr (!Known) {
    constexpr message_text m = [] {
      message_text t;
      t << "hook `" << message_type_name<Hook>() << "` fetches `" << Name.view() << "`";
      if (const std::string_view target = gradient_target(Name.view()); !target.empty())
        t << ", but the loss has no gradient for `" << target
          << "` (one that depends on a Variable and that the loss depends on)";
      else
        t << ", which is not a tensor of the model";
      append_list_names<Names, global_step_name>(t, Name.view());
      t << " Under an Estimator, a tensor that a training hook fetches is listed in "
           "EstimatorSpec::training_tensors.";
      return t;
    }();
    (void)sizeof(compile_error<message_string<m.size>(m)>);
  }
  return Known;
}
/// The same for the caller's session.run<names...>().
template <fixed_string Name, bool Known, class Names>
constexpr bool check_run_fetch() {
  if constexpr (!Known) {
    constexpr message_text m = [] {
      message_text t;
      t << "session.run<names...>() fetches `" << Name.view() << "`";
      if (const std::string_view target = gradient_target(Name.view()); !target.empty())
        t << ", but the loss has no gradient for `" << target
          << "` (one that depends on a Variable and that the loss depends on)";
      else
        t << ", which is not a tensor of the model";
      append_list_names<Names, global_step_name>(t, Name.view());
      return t;
    }();
    (void)sizeof(compile_error<message_string<m.size>(m)>);
  }
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

/// "gradients/<name>" where the loss depends on <name> and <name> on a variable of Graph.
template <class Graph, fixed_string Name>
constexpr bool is_gradient_fetch() {
  if constexpr (gradient_target(Name.view()).empty()) return false;
  else return Graph::template has_adjoint<gradient_target_name<Name>()>;
}
/// A name a session on Graph can fetch: the global step, a tensor of the model or a gradient.
template <class Graph, fixed_string Name>
constexpr bool fetchable() {
  return Name == global_step_name || Graph::template has<Name> ||
         is_gradient_fetch<Graph, Name>();
}
/// The model's names for a failing check's message, void when `Ok`: no symbol of a check that
/// passes spells them.
template <class Graph, bool Ok>
using names_if_not = std::conditional_t<Ok, void, typename Graph::names_type>;

/// Every name hook H requests in before_run is one the session can fetch.
template <class Graph, class H, fixed_string... Names>
constexpr void check_hook_fetches(SessionRunArgs<Names...>) {
  (check_fetch<H, Names, fetchable<Graph, Names>(),
               names_if_not<Graph, fetchable<Graph, Names>()>>(),
   ...);
}
/// Every hook of a session (Session, bound to Graph) against the protocol (check_hook), the
/// phase-timing and gradient-hook rules, its fetches, and the hooks' feed_dicts together.
template <class Session, class Graph, class... Hs>
constexpr void check_session_hooks(std::type_identity<boost::hana::tuple<Hs...>>) {
  ((check_hook<hook_t<Hs>, Session>(), check_phase_timing_hook<hook_t<Hs>>(),
    check_gradient_hook<hook_t<Hs>, Graph>(),
    check_hook_fetches<Graph, hook_t<Hs>>(run_args_t<hook_t<Hs>>{})),
   ...);
  static_assert(hook_feeds_of<boost::hana::tuple<Hs...>>::type::check());
}
/// The caller's session.run<names...>(): each name is one the session can fetch.
template <class Graph, fixed_string... Names>
constexpr void check_session_run_fetches() {
  (check_run_fetch<Names, fetchable<Graph, Names>(),
                   names_if_not<Graph, fetchable<Graph, Names>()>>(),
   ...);
}
/// run<names...>(no_train): no "gradients/<name>" (no backward pass in such a run).
template <class Graph, fixed_string... Names>
constexpr bool check_no_train_fetches() {
  return (check_no_train_fetch<void, Names, !is_gradient_fetch<Graph, Names>()>() && ...);
}
/// run(no_train): no hook may request "gradients/<name>" either.
template <class Graph, class H, fixed_string... Names>
constexpr void check_no_train_hook(SessionRunArgs<Names...>) {
  (check_no_train_fetch<H, Names, !is_gradient_fetch<Graph, Names>()>(), ...);
}
template <class Graph, class... Hs>
constexpr void check_no_train_hooks(std::type_identity<boost::hana::tuple<Hs...>>) {
  (check_no_train_hook<Graph, hook_t<Hs>>(run_args_t<hook_t<Hs>>{}), ...);
}

}  // namespace hookfuse::detail
