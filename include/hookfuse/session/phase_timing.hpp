// hookfuse/session/phase_timing.hpp: phase timings of a training step for the hooks that
// want them (WantsPhaseTimings, hooks/step_timeline.hpp): which hook's clock times this step,
// its readings, and the timeline every such hook receives after the last after_run. Only
// instantiated in a session with such a hook.
#pragma once

#include <boost/hana/at.hpp>
#include <boost/hana/length.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/hooks/step_timeline.hpp"
#include "hookfuse/session/hook_calls.hpp"

namespace hookfuse::detail {

/// Calls f(std::integral_constant<std::size_t, I>{}) for I = 0, 1, ..., N - 1, in order: a fold
/// expression, which compiles faster than hana::for_each over a hana::range.
template <std::size_t N, class F>
void for_each_index(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(std::integral_constant<std::size_t, I>{}), ...);
  }
  (std::make_index_sequence<N>{});
}

/// The number of hooks in a hana::tuple of hooks.
template <class Hooks>
inline constexpr std::size_t hook_count =
    decltype(boost::hana::length(std::declval<const Hooks&>()))::value;

/// A reading of the clock of hook `index` (one that wants phase timings), in seconds.
template <class Hooks>
double timing_now(Hooks& hooks, std::size_t index) {
  double t = 0.0;
  for_each_index<hook_count<Hooks>>([&](auto i) {
    auto& h = hook_ref(boost::hana::at_c<decltype(i)::value>(hooks));
    if constexpr (PhaseTimingHook<std::remove_cvref_t<decltype(h)>>) {
      if (decltype(i)::value == index) t = static_cast<double>(h.now());
    }
  });
  return t;
}

/// Asks every hook that wants phase timings whether to time this step (each is asked, in hook
/// order); the first that says yes provides the clock, read once here for the start.
template <class Hooks, class Marks>
void start_timing(Hooks& hooks, Marks& marks, const SessionRunContext& ctx) {
  for_each_index<hook_count<Hooks>>([&](auto i) {
    auto& h = hook_ref(boost::hana::at_c<decltype(i)::value>(hooks));
    if constexpr (PhaseTimingHook<std::remove_cvref_t<decltype(h)>>) {
      if (h.should_time_step(ctx) && !marks.active) {
        marks.active = true;
        marks.clock_hook = decltype(i)::value;
      }
    }
  });
  if (marks.active) {
    marks.k = 0;
    marks.t[marks.k++] = timing_now(hooks, marks.clock_hook);
  }
}

/// After the last after_run of a timed step: every hook that wants phase timings receives
/// the timeline of `Phases` (detail::StepPhases) at `global_step` (one that did not ask for
/// this step ignores it).
template <class Phases, class Hooks, class Marks>
void finish_timing(Hooks& hooks, Marks& marks, std::int64_t global_step) {
  const StepTimeline timeline{std::span<const StepPhaseInfo>(Phases::infos),
                              std::span<const double>(marks.t.data(), marks.k), global_step};
  for_each_index<hook_count<Hooks>>([&](auto i) {
    auto& h = hook_ref(boost::hana::at_c<decltype(i)::value>(hooks));
    if constexpr (PhaseTimingHook<std::remove_cvref_t<decltype(h)>>) h.after_timed_step(timeline);
  });
}

}  // namespace hookfuse::detail
