// hookfuse/hooks/timer.hpp: SecondOrStepTimer, the trigger every periodic hook shares
// (tf.compat.v1.train.SecondOrStepTimer).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>

#include "hookfuse/clock.hpp"
#include "hookfuse/config.hpp"

namespace hookfuse {
namespace detail {

/// a + b, clamped to [INT64_MIN, INT64_MAX] instead of overflowing (undefined behaviour).
/// `*clamped` says whether it was clamped.
constexpr std::int64_t saturating_add(std::int64_t a, std::int64_t b, bool* clamped = nullptr) {
  constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  const bool over = b > 0 && a > hi - b;
  const bool under = b < 0 && a < lo - b;
  if (clamped != nullptr) *clamped = over || under;
  if (over) return hi;
  if (under) return lo;
  return a + b;
}

/// a - b, clamped like saturating_add (b == INT64_MIN included).
constexpr std::int64_t saturating_sub(std::int64_t a, std::int64_t b) {
  constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  if (b == lo) return a >= 0 ? hi : a - b;  // a - INT64_MIN = a + 2^63: fits only for a < 0
  return saturating_add(a, -b);
}

}  // namespace detail

/// Fires every `every_steps` steps or every `every_secs` seconds (exactly one of them). Fires the
/// first time it is asked; never twice for the same step. Time comes from the clock policy.
/// Throws std::invalid_argument when both or neither interval is given (TensorFlow: ValueError).
/// Steps are exact over the whole int64 range: a next trigger past INT64_MAX (a step near the
/// limit, or a huge every_steps) never comes, as with Python's unbounded integers in TensorFlow,
/// and nothing overflows. Seconds are host_float (double; float in embedded builds, where a
/// clock counting from start-up keeps 1 ms resolution for the first 2.3 hours).
template <Clock C = SteadyClock>
class SecondOrStepTimer {
 public:
  SecondOrStepTimer(std::optional<host_float> every_secs, std::optional<std::int64_t> every_steps,
                    C clock = C{})
      : every_secs_(every_secs), every_steps_(every_steps), clock_(clock) {
    if (!every_secs_ && !every_steps_)
      detail::fail<std::invalid_argument>(
          "SecondOrStepTimer: either every_secs or every_steps should be provided");
    if (every_secs_ && every_steps_)
      detail::fail<std::invalid_argument>(
          "SecondOrStepTimer: can not provide both every_secs and every_steps");
  }

  /// Forgets the last trigger: the next should_trigger_for_step is true.
  void reset() {
    last_step_.reset();
    last_time_ = 0;
    not_before_ = std::numeric_limits<std::int64_t>::min();
    beyond_int64_ = false;
  }

  bool should_trigger_for_step(std::int64_t step) const {
    // A step timer between triggers: one comparison, no clock read (the hot path of a hook
    // that does not fire, laid out as the fall-through: [[likely]] keeps the cost per
    // non-firing hook flat from 10 to 20 hooks in bench/hooks_cost.sh). not_before_ is
    // last + every_steps (clamped to the int64 range), or the lowest step before the first
    // trigger and for a time-based timer.
    if (step < not_before_) [[likely]]
      return false;
    return should_trigger_past(step);
  }

  /// How many steps from `step` on (step, step + 1, ...) certainly do not trigger: 0 when
  /// `step` may (before the first trigger, for a time-based timer, once the interval has
  /// passed); INT64_MAX when no int64 step will. What a hook's idle_runs() is made of
  /// (SkipsIdleRuns, hooks/concepts.hpp). Reads no clock.
  std::int64_t steps_before_trigger(std::int64_t step) const {
    if (!every_steps_ || !last_step_) return 0;
    if (beyond_int64_) return std::numeric_limits<std::int64_t>::max();
    if (step >= not_before_) return 0;
    return detail::saturating_sub(not_before_, step);
  }
  /// Seconds and steps since the previous trigger (both empty at the first trigger). `steps` is
  /// clamped to the int64 range (only reachable with negative steps).
  struct Elapsed {
    std::optional<host_float> secs = std::nullopt;
    std::optional<std::int64_t> steps = std::nullopt;
  };

  /// Records a trigger at `step` now. Out of line and marked rare (HOOKFUSE_COLD): a hook calls
  /// it only when it fires, and inlined it would make the hook's after_run too large to inline
  /// into the fused step, on every step, firing or not.
  HOOKFUSE_COLD Elapsed update_last_triggered_step(std::int64_t step) {
    const auto now = static_cast<host_float>(clock_.now());
    Elapsed e;
    if (last_step_) {
      e.secs = now - last_time_;
      e.steps = detail::saturating_sub(step, *last_step_);
    }
    last_time_ = now;
    last_step_ = step;
    if (every_steps_) {
      bool clamped = false;
      not_before_ = detail::saturating_add(step, *every_steps_, &clamped);
      // Clamped up: unreachable. Clamped down (a negative every_steps): every step qualifies.
      beyond_int64_ = clamped && *every_steps_ > 0;
    }
    return e;
  }

  std::optional<std::int64_t> last_triggered_step() const { return last_step_; }

 private:
  /// should_trigger_for_step at or past not_before_: the first trigger, a time-based timer, a
  /// step timer whose interval has passed. (Kept apart from the one-comparison path above,
  /// which GCC then lays out better, as bench/hooks_cost.sh counts.)
  bool should_trigger_past(std::int64_t step) const {
    if (!last_step_) return true;
    if (*last_step_ == step) return false;
    if (every_secs_) return static_cast<host_float>(clock_.now()) >= last_time_ + *every_secs_;
    // every_steps: step >= last + every_steps holds (step >= not_before_), unless that sum was
    // past INT64_MAX and clamped, which no int64 step reaches.
    return !beyond_int64_;
  }

  std::optional<host_float> every_secs_;
  std::optional<std::int64_t> every_steps_;
  C clock_;
  std::optional<std::int64_t> last_step_;
  host_float last_time_ = 0;
  std::int64_t not_before_ = std::numeric_limits<std::int64_t>::min();
  bool beyond_int64_ = false;  // the next step trigger is past INT64_MAX
};

}  // namespace hookfuse
