// hookfuse/session/hook_pins.hpp: the session's fusion policy (autodiff/fusion_policy.hpp):
// which variables keep a stored gradient because a hook could see it.
#pragma once

#include <boost/hana/tuple.hpp>
#include <string_view>

#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/session/gradient_event.hpp"

namespace hookfuse::detail {

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

}  // namespace hookfuse::detail
