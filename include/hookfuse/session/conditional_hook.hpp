// hookfuse/session/conditional_hook.hpp: a hook slot decided at run time (a chief-only hook on
// a non-chief, the checkpoint saver without a checkpoint_dir).
//
// The session's hook list is a compile-time tuple, but whether TensorFlow's
// MonitoredTrainingSession installs a chief-only hook or its CheckpointSaverHook depends on
// run-time options (is_chief, checkpoint_dir). ConditionalHook<H> holds an optional H and declares
// exactly the events H declares (so the hook protocol checks see H's events), forwarding each
// only when the hook is present: an absent hook gets no event and requests nothing.
#pragma once

#include <cassert>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "hookfuse/hooks/concepts.hpp"
#include "hookfuse/hooks/resumable_state.hpp"
#include "hookfuse/hooks/step_timeline.hpp"

namespace hookfuse {
namespace detail {

// One base per event, declaring the event only when the hook H declares it (Probe in
// hooks/concepts.hpp tells declared from absent by name).
template <class D, class H, bool = DeclaresBegin<H>>
struct ForwardBegin {};
template <class D, class H>
struct ForwardBegin<D, H, true> {
  void begin()
    requires HandlesBegin<H>
  {
    if (auto* h = static_cast<D*>(this)->get_if()) h->begin();
  }
};

template <class D, class H, bool = DeclaresAfterCreateSession<H>>
struct ForwardAfterCreateSession {};
template <class D, class H>
struct ForwardAfterCreateSession<D, H, true> {
  template <class Session>
    requires HandlesAfterCreateSession<H, Session>
  void after_create_session(Session& session) {
    if (auto* h = static_cast<D*>(this)->get_if()) h->after_create_session(session);
  }
};

template <class D, class H, bool = DeclaresBeforeRun<H>>
struct ForwardBeforeRun {};
template <class D, class H>
struct ForwardBeforeRun<D, H, true> {
  run_args_t<H> before_run(SessionRunContext& ctx)
    requires HandlesBeforeRun<H>
  {
    if (auto* h = static_cast<D*>(this)->get_if()) return h->before_run(ctx);
    run_args_t<H> none{};  // TensorFlow's `return None`: nothing fetched (or fed)
    none.active = false;
    return none;
  }
};

template <class D, class H, bool = DeclaresBeforeApplyGradients<H>>
struct ForwardBeforeApplyGradients {};
template <class D, class H>
struct ForwardBeforeApplyGradients<D, H, true> {
  template <class Context>
    requires HandlesBeforeApplyGradients<H, Context>
  void before_apply_gradients(Context& gradients) {
    if (auto* h = static_cast<D*>(this)->get_if()) h->before_apply_gradients(gradients);
  }
};

template <class D, class H, bool = DeclaresAfterApplyGradients<H>>
struct ForwardAfterApplyGradients {};
template <class D, class H>
struct ForwardAfterApplyGradients<D, H, true> {
  template <class Context>
    requires HandlesAfterApplyGradients<H, Context>
  void after_apply_gradients(Context& updated) {
    if (auto* h = static_cast<D*>(this)->get_if()) h->after_apply_gradients(updated);
  }
};

template <class D, class H, bool = DeclaresAfterRun<H>>
struct ForwardAfterRun {};
template <class D, class H>
struct ForwardAfterRun<D, H, true> {
  void after_run(SessionRunContext& ctx, const run_values_t<H>& values)
    requires HandlesAfterRun<H, run_values_t<H>>
  {
    if (auto* h = static_cast<D*>(this)->get_if()) h->after_run(ctx, values);
  }
};

template <class D, class H, bool = DeclaresEnd<H>>
struct ForwardEnd {};
template <class D, class H>
struct ForwardEnd<D, H, true> {
  template <class Session>
    requires HandlesEnd<H, Session>
  void end(Session& session) {
    if (auto* h = static_cast<D*>(this)->get_if()) h->end(session);
  }
};

// A hook that wants phase timings (hooks/step_timeline.hpp) keeps them inside the slot; an
// absent one never asks for a timed step.
template <class D, class H, bool = WantsPhaseTimings<H>>
struct ForwardPhaseTimings {};
template <class D, class H>
struct ForwardPhaseTimings<D, H, true> {
  static constexpr bool wants_phase_timings = true;
  bool should_time_step(const SessionRunContext& ctx)
    requires PhaseTimingHook<H>
  {
    auto* h = static_cast<D*>(this)->get_if();
    return h != nullptr && h->should_time_step(ctx);
  }
  double now()
    requires PhaseTimingHook<H>
  {
    auto* h = static_cast<D*>(this)->get_if();
    return h != nullptr ? static_cast<double>(h->now()) : 0.0;
  }
  void after_timed_step(const StepTimeline& timeline)
    requires PhaseTimingHook<H>
  {
    if (auto* h = static_cast<D*>(this)->get_if()) h->after_timed_step(timeline);
  }
};

// A hook with resumable state (hooks/resumable_state.hpp) keeps its checkpoint keys inside the
// slot; when absent, checkpoint_state_present() is false and the session leaves its fields out
// (session/hook_state.hpp).
template <class D, class H, bool = HasCheckpointState<H>>
struct ForwardCheckpointState {};
template <class D, class H>
struct ForwardCheckpointState<D, H, true> {
  static constexpr auto checkpoint_name = H::checkpoint_name;
  bool checkpoint_state_present() const { return static_cast<const D*>(this)->has_value(); }
  /// The hook's fields; only when checkpoint_state_present().
  auto checkpoint_state() {
    assert(checkpoint_state_present());
    return static_cast<D*>(this)->get_if()->checkpoint_state();
  }
};

// Idle runs (SkipsIdleRuns): an absent hook is idle for good; a present one says what the hook
// says, or, when the hook cannot say, that no run is idle (so it is called every run). This
// lets a session whose options install empty default-hook slots take the idle fast path. A
// hook with no run event declares none here either; a gradient or phase-timing hook is never
// left out (session/hook_calls.hpp, idle_capable).
// `Skips`: the hook says when it is idle, is held by value (a std::ref(h) the caller keeps
// would see its counts lag) and has no checkpoint state (idle_capable's rules).
template <class D, class H, bool Skips,
          bool = (DeclaresBeforeRun<H> || DeclaresAfterRun<H>)&&!called_every_run<H>>
struct ForwardIdleRuns {};
template <class D, class H, bool Skips>
struct ForwardIdleRuns<D, H, Skips, true> {
  std::int64_t idle_runs() const {
    const auto* h = static_cast<const D*>(this)->get_if();
    if (h == nullptr) return std::numeric_limits<std::int64_t>::max();
    if constexpr (Skips) return h->idle_runs();
    else return 0;
  }
  void skip_runs(std::int64_t n) {
    if constexpr (Skips) {
      if (auto* h = static_cast<D*>(this)->get_if()) h->skip_runs(n);
    } else {
      (void)n;  // only an absent hook sits out runs
    }
  }
};

}  // namespace detail

/// A hook present or not, decided when the session is made: `Stored` is a hook or a
/// std::reference_wrapper to one (std::ref(h)). Declares the events the hook declares and
/// forwards them when present; when absent, before_run requests nothing
/// (SessionRunArgs<...>::none()) and no other event reaches anything. A hook with checkpoint
/// state (EarlyStoppingHook, ...) saves and restores it under the same keys as outside the slot
/// when present, and nothing when absent.
template <class Stored>
class ConditionalHook
    : public detail::ForwardBegin<ConditionalHook<Stored>, hook_t<Stored>>,
      public detail::ForwardAfterCreateSession<ConditionalHook<Stored>, hook_t<Stored>>,
      public detail::ForwardBeforeRun<ConditionalHook<Stored>, hook_t<Stored>>,
      public detail::ForwardBeforeApplyGradients<ConditionalHook<Stored>, hook_t<Stored>>,
      public detail::ForwardAfterApplyGradients<ConditionalHook<Stored>, hook_t<Stored>>,
      public detail::ForwardAfterRun<ConditionalHook<Stored>, hook_t<Stored>>,
      public detail::ForwardEnd<ConditionalHook<Stored>, hook_t<Stored>>,
      public detail::ForwardPhaseTimings<ConditionalHook<Stored>, hook_t<Stored>>,
      public detail::ForwardCheckpointState<ConditionalHook<Stored>, hook_t<Stored>>,
      public detail::ForwardIdleRuns<ConditionalHook<Stored>, hook_t<Stored>,
                                     SkipsIdleRuns<hook_t<Stored>> &&
                                         std::is_same_v<Stored, hook_t<Stored>> &&
                                         !HasCheckpointState<hook_t<Stored>>> {
 public:
  using hook_type = hook_t<Stored>;
  /// Pins gradients like the hook it may hold (decided at compile time, present or not).
  static constexpr bool reads_gradients = ReadsGradients<hook_type>;
  /// The variables the hook touches in before_apply_gradients (every one by default).
  using gradient_variables = gradient_variables_t<hook_type>;

  /// Absent.
  ConditionalHook() = default;
  /// Present when `present` (the hook is dropped otherwise).
  ConditionalHook(Stored hook, bool present) {
    if (present) hook_.emplace(std::move(hook));
  }
  template <class... Args>
  void emplace(Args&&... args) {
    hook_.emplace(std::forward<Args>(args)...);
  }

  bool has_value() const { return hook_.has_value(); }
  /// The hook, or nullptr when absent.
  hook_type* get_if() { return hook_ ? &hook_ref(*hook_) : nullptr; }
  const hook_type* get_if() const { return hook_ ? &hook_ref(*hook_) : nullptr; }

 private:
  std::optional<Stored> hook_;
};

}  // namespace hookfuse
