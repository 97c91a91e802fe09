// hookfuse/session/phase_timing.hpp: the phase timings of a session's step (hooks/
// step_timeline.hpp). When a hook declares wants_phase_timings (ProfilerHook), the step reads
// that hook's clock at the end of every phase, in steps the hook asked for, and hands it the
// timeline after the last after_run. detail::PhaseTiming<Hooks> is that code, for a session whose
// hooks are the boost::hana::tuple Hooks: static functions on the step's marks (a StepMarks on
// the step's stack) and the session's hooks. Without such a hook the marks are an empty object
// and every function an empty call: no timing code is compiled.
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

template <class Hooks>
struct PhaseTiming {
  /// The timed intervals of a step: `timed` when a hook wants phase timings, and which there are.
  using phases = StepPhases<Hooks>;
  /// A step's clock readings: one at the start and one per phase (empty unless phases::timed).
  using marks_type = StepMarks<phases::timed, phases::size + 1>;
  static constexpr std::size_t num_hooks =
      decltype(boost::hana::length(std::declval<Hooks>()))::value;

  /// Hook h's before_run (call_before_run), then the end of its phase.
  template <class H>
  static auto before_run(H& h, SessionRunContext& ctx, marks_type& marks, Hooks& hooks) {
    auto a = call_before_run(h, ctx);
    if constexpr (HandlesBeforeRun<H>) mark(marks, hooks);
    return a;
  }
  /// The end of a phase: one clock reading in a timed step, nothing otherwise.
  static void mark(marks_type& marks, Hooks& hooks) {
    if constexpr (phases::timed) {
      if (marks.active) marks.t[marks.k++] = now(hooks, marks.clock_hook);
    } else {
      (void)marks;
      (void)hooks;
    }
  }
  /// Asks every hook that wants phase timings whether to time this step (each is asked, in hook
  /// order); the first that says yes provides the clock, read once here for the start.
  static void start(marks_type& marks, Hooks& hooks, const SessionRunContext& ctx) {
    for_each_hook_index([&](auto i) {
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
      marks.t[marks.k++] = now(hooks, marks.clock_hook);
    }
  }
  /// A reading of the clock of hook `index` (one that wants phase timings), in seconds.
  static double now(Hooks& hooks, std::size_t index) {
    double t = 0.0;
    for_each_hook_index([&](auto i) {
      auto& h = hook_ref(boost::hana::at_c<decltype(i)::value>(hooks));
      if constexpr (PhaseTimingHook<std::remove_cvref_t<decltype(h)>>) {
        if (decltype(i)::value == index) t = static_cast<double>(h.now());
      }
    });
    return t;
  }
  /// After the last after_run of a timed step: every hook that wants phase timings receives
  /// the timeline (one that did not ask for this step ignores it); `global_step` is the step's
  /// global step after its increment.
  static void finish(marks_type& marks, Hooks& hooks, std::int64_t global_step) {
    const StepTimeline timeline{std::span<const StepPhaseInfo>(phases::infos),
                                std::span<const double>(marks.t.data(), marks.k), global_step};
    for_each_hook_index([&](auto i) {
      auto& h = hook_ref(boost::hana::at_c<decltype(i)::value>(hooks));
      if constexpr (PhaseTimingHook<std::remove_cvref_t<decltype(h)>>)
        h.after_timed_step(timeline);
    });
  }

 private:
  template <class F>
  static void for_each_hook_index(F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (f(std::integral_constant<std::size_t, I>{}), ...);
    }(std::make_index_sequence<num_hooks>{});
  }
};

}  // namespace hookfuse::detail
