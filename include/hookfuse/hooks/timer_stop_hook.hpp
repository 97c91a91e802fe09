// hookfuse/hooks/timer_stop_hook.hpp: TimerStopHook, stops training after a wall-time budget
// (tfa.callbacks.TimeStopping, Lightning's Timer(duration)).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "hookfuse/clock.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/check.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/log_line.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/resumable_state.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// Requests a stop after the first run that ends `seconds` or more after the session was
/// created (the clock is read in after_create_session, then after every `every_n_iter`-th run),
/// and logs "Timed stopping at step <global step>: <elapsed> sec elapsed, limit <seconds> sec."
/// at INFO. Counterparts: tfa.callbacks.TimeStopping(seconds) (checked per epoch there) and
/// PyTorch Lightning's Timer(duration, interval="step"). Fetches nothing; between checks it
/// costs a counter decrement (every_n_iter > 1 saves the clock read of the other runs).
/// Time comes from the clock policy (FakeClock through ClockRef in tests). Throws
/// std::invalid_argument unless seconds is finite and >= 0 and every_n_iter > 0.
/// Checkpoint state (hooks/resumable_state.hpp): "hooks/TimerStopHook/elapsed" (float64,
/// seconds counted at the last check, previous processes included). A resumed run counts from
/// the restored value, as Lightning's Timer restores time_elapsed: the time the job was down and
/// the time since the last check before the save are not counted.
template <Clock C = SteadyClock, Logger L = StderrLogger>
class TimerStopHook {
 public:
  struct Options {
    double seconds = 0.0;
    std::int64_t every_n_iter = 1;
  };

  explicit TimerStopHook(Options options, C clock = C{}, L logger = L{})
      : seconds_(options.seconds),
        every_n_iter_(options.every_n_iter),
        clock_(clock),
        logger_(logger) {
    detail::check_argument(seconds_ >= 0.0 && std::isfinite(seconds_), "TimerStopHook", "seconds",
                           "finite and >= 0", seconds_);
    detail::check_argument(every_n_iter_ > 0, "TimerStopHook", "every_n_iter", "> 0",
                           every_n_iter_);
  }

  /// The <hook name> of this hook's checkpoint keys.
  static constexpr fixed_string checkpoint_name = "TimerStopHook";

  /// Forgets the time counted so far (a restore sets it again before after_create_session).
  void begin() { elapsed_ = 0.0; }

  template <class Session>
  void after_create_session(Session&) {
    start_ = clock_.now() - elapsed_;
    runs_to_check_ = every_n_iter_;
  }

  void after_run(SessionRunContext& ctx, const SessionRunValues<>&) {
    if (--runs_to_check_ != 0) return;
    runs_to_check_ = every_n_iter_;
    const double elapsed = clock_.now() - start_;
    elapsed_ = elapsed;
    if (elapsed < seconds_) return;
    stopped_at_ = ctx.global_step();
    ctx.request_stop();
    detail::LogLine<> line;
    line.append("Timed stopping at step ").append(*stopped_at_).append(": ");
    line.append_fixed(elapsed, 3).append(" sec elapsed, limit ");
    line.append_fixed(seconds_, 3).append(" sec.");
    logger_.log(Severity::info, line.view());
  }

  /// The global step (after its run) at which the time ran out, if it did.
  std::optional<std::int64_t> stopped_at() const { return stopped_at_; }
  L& logger() { return logger_; }
  /// Seconds counted at the last check (restored ones included).
  double elapsed() const { return elapsed_; }

  /// The resumable state, saved as "hooks/TimerStopHook/elapsed".
  auto checkpoint_state() { return std::tuple(state_field<"elapsed">(elapsed_)); }

 private:
  double seconds_;
  std::int64_t every_n_iter_;
  C clock_;
  L logger_;
  double start_ = 0.0;
  double elapsed_ = 0.0;
  std::int64_t runs_to_check_ = 1;
  std::optional<std::int64_t> stopped_at_;
};

}  // namespace hookfuse
