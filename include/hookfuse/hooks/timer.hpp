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

/// Fires every `every_steps` steps or every `every_secs` seconds (exactly one of them). Fires the
/// first time it is asked; never twice for the same step. Time comes from the clock policy.
/// Throws std::invalid_argument when both or neither interval is given (TensorFlow: ValueError).
template <Clock C = SteadyClock>
class SecondOrStepTimer {
 public:
  SecondOrStepTimer(std::optional<double> every_secs, std::optional<std::int64_t> every_steps,
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
    last_time_ = 0.0;
    not_before_ = std::numeric_limits<std::int64_t>::min();
  }

  bool should_trigger_for_step(std::int64_t step) const {
    // A step timer between triggers: one comparison, no clock read (the hot path of a hook
    // that does not fire). not_before_ is last + every_steps, or the lowest step before the
    // first trigger and for a time-based timer.
    if (step < not_before_) return false;
    if (!last_step_) return true;
    if (*last_step_ == step) return false;
    if (every_secs_ && clock_.now() >= last_time_ + *every_secs_) return true;
    if (every_steps_ && step >= *last_step_ + *every_steps_) return true;
    return false;
  }

  /// Seconds and steps since the previous trigger (both empty at the first trigger).
  struct Elapsed {
    std::optional<double> secs = std::nullopt;
    std::optional<std::int64_t> steps = std::nullopt;
  };

  /// Records a trigger at `step` now.
  Elapsed update_last_triggered_step(std::int64_t step) {
    const double now = clock_.now();
    Elapsed e;
    if (last_step_) {
      e.secs = now - last_time_;
      e.steps = step - *last_step_;
    }
    last_time_ = now;
    last_step_ = step;
    if (every_steps_) not_before_ = step + *every_steps_;
    return e;
  }

  std::optional<std::int64_t> last_triggered_step() const { return last_step_; }

 private:
  std::optional<double> every_secs_;
  std::optional<std::int64_t> every_steps_;
  C clock_;
  std::optional<std::int64_t> last_step_;
  double last_time_ = 0.0;
  std::int64_t not_before_ = std::numeric_limits<std::int64_t>::min();
};

}  // namespace hookfuse
