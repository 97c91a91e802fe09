// hookfuse/hooks/step_timeline.hpp: the phases of a training step and their times, for hooks
// that profile steps (ProfilerHook, hooks/profiler_hook.hpp).
//
// The session times the phases of a step only when its hook tuple holds a hook that declares
// `static constexpr bool wants_phase_timings = true;` (WantsPhaseTimings). Without one, the
// step contains no timing code at all (every use is behind `if constexpr`); with one, the clock
// is read only in steps that such a hook asked to time. Core header: no I/O, no heap.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "hookfuse/detail/type_name.hpp"
#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"

namespace hookfuse {

/// A phase of the fused training step, in the order a step runs them: every hook's before_run
/// (hook order), the input (next() and feed(), or the caller's feeds, and the check that every
/// placeholder read is fed), the forward pass, the backward pass with the fused updates, the
/// fetches (what hooks and the caller asked for), the unfused updates (with the global step's
/// increment), then every hook's after_run.
enum class StepPhase { before_run, input, forward, backward, fetches, unfused_update, after_run };

/// "before_run", "input", "forward", "backward", "fetches", "unfused_update", "after_run".
constexpr std::string_view phase_name(StepPhase p) {
  switch (p) {
    case StepPhase::before_run:
      return "before_run";
    case StepPhase::input:
      return "input";
    case StepPhase::forward:
      return "forward";
    case StepPhase::backward:
      return "backward";
    case StepPhase::fetches:
      return "fetches";
    case StepPhase::unfused_update:
      return "unfused_update";
    case StepPhase::after_run:
      return "after_run";
  }
  return "";
}

/// What one timed interval of a step is: the phase and, for before_run and after_run, which
/// hook (its position in the session's hook tuple, counted as session.hook<I>() counts, and its
/// type name as the compiler writes it). Only hooks that handle the event have an interval.
struct StepPhaseInfo {
  StepPhase phase = StepPhase::input;
  std::size_t hook_index = 0;  // before_run / after_run only
  std::string_view hook{};     // before_run / after_run only: "hookfuse::StopAtStepHook", ...
};

/// The times of one step: phase i ran from marks[i] to marks[i + 1], in seconds of the
/// profiling hook's clock (marks.size() == phases.size() + 1, non-decreasing for a monotonic
/// clock). Valid only during the call that receives it (a view of the session's stack).
struct StepTimeline {
  std::span<const StepPhaseInfo> phases{};
  std::span<const double> marks{};
  /// The global step after this step (TensorFlow names the timeline file with it).
  std::int64_t global_step = 0;

  std::size_t size() const { return phases.size(); }
  /// Start of phase i, seconds.
  double start(std::size_t i) const { return marks[i]; }
  /// Length of phase i, seconds.
  double duration(std::size_t i) const { return marks[i + 1] - marks[i]; }
};

/// H asks the session for phase timings (`static constexpr bool wants_phase_timings = true;`).
template <class H>
concept WantsPhaseTimings = requires {
  requires bool(H::wants_phase_timings);
};

namespace detail {
/// A hook the session calls in every run, never left out by the idle fast path: a gradient hook,
/// an update hook, or one that wants phase timings (session/hook_calls.hpp, idle_capable;
/// ConditionalHook's idle-run forwarding).
template <class H>
inline constexpr bool called_every_run = DeclaresBeforeApplyGradients<H> ||
                                         DeclaresAfterApplyGradients<H> || WantsPhaseTimings<H>;
}  // namespace detail

/// What the session calls on a hook that wants phase timings:
///   should_time_step(run_context) at the start of every step, before the first before_run:
///       true to have this step timed (read run_context.global_step(): the step before the run);
///   now()  a clock reading in seconds (the session reads the clock of the first hook that
///       asked, at the start of the step and at the end of every phase);
///   after_timed_step(timeline)  after the last after_run of a step that any of these hooks
///       asked to time (called on each of them: one that did not ask ignores it).
template <class H>
concept PhaseTimingHook = WantsPhaseTimings<H> &&
    requires(H& h, const SessionRunContext& ctx, const StepTimeline& t) {
  { h.should_time_step(ctx) } -> std::same_as<bool>;
  { h.now() } -> std::convertible_to<double>;
  h.after_timed_step(t);
};

namespace detail {

template <class Hook>
constexpr bool check_phase_timing_hook() {
  static_assert(!WantsPhaseTimings<Hook> || PhaseTimingHook<Hook>,
                "hookfuse: this hook declares wants_phase_timings but lacks "
                "`bool should_time_step(const SessionRunContext&)`, `double now()` or "
                "`void after_timed_step(const StepTimeline&)` (the hook is 'Hook' in the "
                "instantiation above)");
  return true;
}

/// The timed intervals of a step for a hook tuple, fixed at compile time.
template <class Hooks>
struct StepPhases;
template <template <class...> class Tuple, class... Hs>
struct StepPhases<Tuple<Hs...>> {
  /// Some hook wants phase timings: the session compiles timing code at all. (A hook that
  /// declares wants_phase_timings without the methods is a compile error, check_phase_timing_hook.)
  static constexpr bool timed = (PhaseTimingHook<hook_t<Hs>> || ... || false);
  static constexpr std::size_t num_before = (std::size_t{HandlesBeforeRun<hook_t<Hs>>} + ... + 0);
  static constexpr std::size_t num_after =
      (std::size_t{HandlesAfterRun<hook_t<Hs>, run_values_t<hook_t<Hs>>>} + ... + 0);
  static constexpr std::size_t size = num_before + 5 + num_after;

  static constexpr std::array<StepPhaseInfo, size> infos = [] {
    std::array<StepPhaseInfo, size> out{};
    std::size_t k = 0, i = 0;
    ((HandlesBeforeRun<hook_t<Hs>>
          ? void(out[k++] = {StepPhase::before_run, i, type_name<hook_t<Hs>>("hook")})
          : void(),
      ++i),
     ...);
    for (StepPhase p : {StepPhase::input, StepPhase::forward, StepPhase::backward,
                        StepPhase::fetches, StepPhase::unfused_update})
      out[k++] = {p, 0, {}};
    i = 0;
    ((HandlesAfterRun<hook_t<Hs>, run_values_t<hook_t<Hs>>>
          ? void(out[k++] = {StepPhase::after_run, i, type_name<hook_t<Hs>>("hook")})
          : void(),
      ++i),
     ...);
    return out;
  }();
};

/// The clock readings of one step, on the step's stack; an empty object in a session without a
/// profiling hook.
template <bool Timed, std::size_t N>
struct StepMarks {
  static constexpr bool active = false;
};
template <std::size_t N>
struct StepMarks<true, N> {
  std::array<double, N> t;  // filled up to k, only when active
  std::size_t k = 0;
  std::size_t clock_hook = 0;  // the position of the hook whose clock is read
  bool active = false;
};

}  // namespace detail
}  // namespace hookfuse
