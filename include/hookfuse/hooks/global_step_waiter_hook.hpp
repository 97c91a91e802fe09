// hookfuse/hooks/global_step_waiter_hook.hpp: GlobalStepWaiterHook
// (tf.compat.v1.train.GlobalStepWaiterHook).
//
// TensorFlow's hook delays a worker's first run until the chief's training has moved the shared
// global step to wait_until_step: before_run polls the global step every 0.5 s. In one process
// the session's global step moves only by that session's own runs, which a blocked before_run
// stops, so here the step comes from a *step source*: a callable returning the step another
// worker moves (an atomic counter another thread trains, the step of the latest checkpoint in a
// directory another process writes), or, by default, the session's own global step, which can
// only already be there (restored from a checkpoint).
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/check.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/log_line.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/logging.hpp"

#ifndef HOOKFUSE_EMBEDDED
#include <time.h>  // nanosleep (POSIX)

#include <cerrno>
#include <cmath>
#include <ctime>
#endif

namespace hookfuse {

/// The default step source of GlobalStepWaiterHook: the session's own global step
/// (run_context.global_step()). `moves_by_itself` is false: nothing else moves it while the
/// hook waits.
struct SessionGlobalStep {
  static constexpr bool moves_by_itself = false;
  std::int64_t operator()(const SessionRunContext& ctx) const { return ctx.global_step(); }
};

#ifndef HOOKFUSE_EMBEDDED
/// The default sleep of GlobalStepWaiterHook: blocks the calling thread for `seconds` (what
/// std::this_thread::sleep_for does; POSIX nanosleep, resumed after a signal, so that this header
/// does not pull <thread> into every translation unit of the umbrella header). Returns at once
/// for 0, a negative value or NaN; sleeps at most 10^9 s.
struct ThreadSleep {
  void operator()(double seconds) const {
    if (!(seconds > 0.0)) return;
    constexpr double max_seconds = 1e9;
    const double whole = std::floor(seconds);
    ::timespec left{};
    if (whole >= max_seconds) {
      left.tv_sec = static_cast<std::time_t>(max_seconds);
    } else {
      left.tv_sec = static_cast<std::time_t>(whole);
      const double nanos = std::floor((seconds - whole) * 1e9);
      left.tv_nsec = nanos > 999'999'999.0 ? 999'999'999L : static_cast<long>(nanos);
    }
    while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
};
#else
/// Bare-metal builds have no thread sleep: pass GlobalStepWaiterHook a sleep of your own.
struct ThreadSleep;
#endif

/// Blocks the first run of a session (in before_run) until the global step reaches
/// `wait_until_step`, as TensorFlow's GlobalStepWaiterHook(wait_until_step): with
/// wait_until_step <= 0 it never waits; otherwise it logs at INFO "Waiting for global step
/// <N> before starting training.", then reads the step from `source` every `poll_secs` seconds
/// (TF: 0.5), calling `sleep(poll_secs)` between reads, and logs "Waiting for global step <N>
/// before starting training. Current step is <M>." whenever the step has moved more than 1000
/// past the last logged one (TF's cadence). Once the step is reached it never waits again in
/// that session (begin() starts over). Fetches nothing.
///
/// `source` is a callable returning the current global step (int64), called with the run
/// context or with no argument; see the file comment. With the default SessionGlobalStep
/// nothing but this session moves the step, so where TensorFlow would wait forever, a step below
/// wait_until_step throws RuntimeError naming both steps, without sleeping. A source whose
/// type declares `static constexpr bool moves_by_itself = false` gets the same treatment.
/// `sleep` is a callable taking seconds (double): ThreadSleep by default, a fake in tests.
/// Throws std::invalid_argument unless poll_secs is in [0, 3600] (NaN and infinity included).
template <class StepSource = SessionGlobalStep, class Sleep = ThreadSleep, Logger L = StderrLogger>
class GlobalStepWaiterHook {
 public:
  struct Options {
    std::int64_t wait_until_step = 0;
    double poll_secs = 0.5;
  };

  explicit GlobalStepWaiterHook(Options options, StepSource source = StepSource{},
                                Sleep sleep = Sleep{}, L logger = L{})
      : wait_until_step_(options.wait_until_step),
        poll_secs_(options.poll_secs),
        source_(std::move(source)),
        sleep_(std::move(sleep)),
        logger_(std::move(logger)) {
    // Bounded: an infinite interval would overflow the conversion inside sleep_for (UB).
    detail::check_argument(poll_secs_ >= 0.0 && poll_secs_ <= 3600.0, "GlobalStepWaiterHook",
                           "poll_secs", "in [0, 3600] seconds (TensorFlow polls every 0.5)",
                           poll_secs_);
  }

  /// Starts a session: its first run waits again (TF: `_worker_is_started = False`).
  void begin() { worker_is_started_ = false; }

  SessionRunArgs<> before_run(SessionRunContext& ctx) {
    if (worker_is_started_) return SessionRunArgs<>::none();
    if (wait_until_step_ <= 0) {
      worker_is_started_ = true;
      return SessionRunArgs<>::none();
    }
    log_waiting(nullptr);
    std::int64_t last_logged_step = 0;
    for (;;) {
      const std::int64_t current = read_step(ctx);
      if (current >= wait_until_step_) {
        worker_is_started_ = true;
        return SessionRunArgs<>::none();
      }
      if constexpr (!moves_by_itself) {
        detail::fail<RuntimeError>(
            (detail::ErrorMessage()
             << "GlobalStepWaiterHook: waiting for global step "
             << static_cast<long long>(wait_until_step_) << ", but the global step is "
             << static_cast<long long>(current)
             << " and nothing but this session moves it (give the hook a step source that "
                "another worker moves)")
                .str());
      }
      if (current - last_logged_step > 1000) {
        log_waiting(&current);
        last_logged_step = current;
      }
      sleep_(poll_secs_);
    }
  }

  std::int64_t wait_until_step() const { return wait_until_step_; }
  /// True once the step was reached in this session.
  bool worker_is_started() const { return worker_is_started_; }
  StepSource& source() { return source_; }
  Sleep& sleep() { return sleep_; }
  L& logger() { return logger_; }

 private:
  static constexpr bool moves_by_itself = [] {
    if constexpr (requires { StepSource::moves_by_itself; })
      return bool(StepSource::moves_by_itself);
    else
      return true;
  }();

  std::int64_t read_step(const SessionRunContext& ctx) {
    if constexpr (std::is_invocable_v<StepSource&, const SessionRunContext&>)
      return static_cast<std::int64_t>(source_(ctx));
    else
      return static_cast<std::int64_t>(source_());
  }

  void log_waiting(const std::int64_t* current) {
    detail::LogLine<160> line;
    line.append("Waiting for global step ").append(wait_until_step_);
    line.append(" before starting training.");
    if (current != nullptr) line.append(" Current step is ").append(*current).append(".");
    logger_.log(Severity::info, line.view());
  }

  std::int64_t wait_until_step_;
  double poll_secs_;
  StepSource source_;
  Sleep sleep_;
  L logger_;
  bool worker_is_started_ = false;
};

}  // namespace hookfuse
