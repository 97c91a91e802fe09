// hookfuse/hooks/learning_rate_scheduler_hook.hpp: LearningRateSchedulerHook, the optimizer's
// learning rate from a schedule of the global step (keras.callbacks.LearningRateScheduler).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/log_line.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/logging.hpp"
#include "hookfuse/optim/learning_rate_ref.hpp"
#include "hookfuse/optim/schedules.hpp"

namespace hookfuse {

/// Before every run, sets the session's optimizer's learning rate to schedule(global_step),
/// global_step being the value before this run's increment: the step with global step s trains
/// with schedule(s) (keras.callbacks.LearningRateScheduler, called per step instead of per
/// epoch; tf.compat.v1's decayed learning-rate tensors give the same rates). `schedule` is any
/// LearningRateSchedule (optim/schedules.hpp, a lambda, a function pointer). Fetches nothing.
///
/// The optimizer is reached in after_create_session through session.optimizer(). With
/// `verbose`, logs "Step <global step>: LearningRateScheduler setting learning rate to <lr>."
/// (printf %g) at INFO whenever the rate changes (Keras logs every epoch). A rate from the
/// schedule that is not finite or is negative throws std::invalid_argument naming the rate and
/// the step, before the step runs (Keras only checks that the schedule returns a float).
template <class S, Logger L = StderrLogger>
class LearningRateSchedulerHook {
  static_assert(LearningRateSchedule<S>,
                "hookfuse: LearningRateSchedulerHook needs a schedule, a callable "
                "schedule(std::int64_t global_step) returning the learning rate "
                "(hookfuse/optim/schedules.hpp: exponential_decay, piecewise_constant, "
                "cosine_decay, linear_warmup, or a lambda); a constant rate is the optimizer's "
                "own learning_rate");

 public:
  struct Options {
    bool verbose = false;
  };

  explicit LearningRateSchedulerHook(S schedule, Options options = {}, L logger = L{})
      : schedule_(std::move(schedule)), verbose_(options.verbose), logger_(logger) {}

  template <class Session>
  void after_create_session(Session& session) {
    optimizer_ = LearningRateRef(session.optimizer());
  }
  /// Forgets the session's optimizer (it is destroyed with the session).
  template <class Session>
  void end(Session&) {
    optimizer_ = LearningRateRef();
  }

  SessionRunArgs<> before_run(SessionRunContext& ctx) {
    const std::int64_t step = ctx.global_step();
    const double lr = static_cast<double>(schedule_(step));
    if (!(std::isfinite(lr) && lr >= 0))
      detail::fail<std::invalid_argument>(
          (detail::ErrorMessage() << "LearningRateSchedulerHook: the schedule returned " << lr
                                  << " at global step " << static_cast<long long>(step)
                                  << "; a learning rate must be finite and >= 0")
              .str());
    if (verbose_ && lr != optimizer_.get()) log(step, lr);
    optimizer_.set(lr);
    learning_rate_ = lr;
    return SessionRunArgs<>::none();
  }

  /// The rate set before the last run (NaN before the first run).
  double learning_rate() const { return learning_rate_; }
  const S& schedule() const { return schedule_; }
  L& logger() { return logger_; }

 private:
  void log(std::int64_t step, double lr) {
    if constexpr (std::is_same_v<L, NullLogger>) return;  // no line to format
    detail::LogLine<> line;
    line.append("Step ").append(step).append(": LearningRateScheduler setting learning rate to ");
    line.append_g(lr).append(".");
    logger_.log(Severity::info, line.view());
  }

  S schedule_;
  bool verbose_;
  L logger_;
  LearningRateRef optimizer_;
  double learning_rate_ = std::nan("");
};

}  // namespace hookfuse
