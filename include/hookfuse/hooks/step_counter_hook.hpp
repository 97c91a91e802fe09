// hookfuse/hooks/step_counter_hook.hpp: StepCounterHook (tf.compat.v1.train.StepCounterHook).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>

#include "hookfuse/clock.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/hooks/timer.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// Logs training speed, "global_step/sec: <steps per second>" (printf %g), every
/// `every_n_steps` global steps or every `every_n_secs` seconds. The first trigger (global step
/// 1 in a fresh run) only sets the baseline, so with every_n_steps = 10 the first report is at
/// global step 11. Exactly one interval must be given (std::invalid_argument otherwise); when
/// neither is, every_n_steps = 100 as in TensorFlow.
template <Clock C = SteadyClock, Logger L = StderrLogger>
class StepCounterHook {
 public:
  struct Options {
    std::optional<std::int64_t> every_n_steps = std::nullopt;
    std::optional<double> every_n_secs = std::nullopt;
  };
  explicit StepCounterHook(Options options = {}, C clock = C{}, L logger = L{})
      : timer_(options.every_n_secs,
               (!options.every_n_steps && !options.every_n_secs) ? std::optional<std::int64_t>(100)
                                                                 : options.every_n_steps,
               clock),
        logger_(logger) {}

  void begin() { timer_.reset(); }

  SessionRunArgs<"global_step"> before_run(SessionRunContext&) { return {}; }

  void after_run(SessionRunContext& ctx, const SessionRunValues<"global_step">& values) {
    const std::int64_t stale = values.get<"global_step">().item_int();
    if (timer_.should_trigger_for_step(stale + 1)) {
      const std::int64_t global_step = ctx.global_step();
      if (timer_.should_trigger_for_step(global_step)) {
        auto elapsed = timer_.update_last_triggered_step(global_step);
        if (elapsed.secs) {
          last_rate_ = static_cast<double>(*elapsed.steps) / *elapsed.secs;
          char line[64];
          char* out = line;
          detail::append_text(out, line + sizeof line, "global_step/sec: ");
          detail::append_g(out, line + sizeof line, *last_rate_);
          logger_.log(Severity::info, std::string_view(line, static_cast<std::size_t>(out - line)));
        }
      }
    }
    if (last_global_step_ && stale == *last_global_step_ && warnings_ < 5) {
      ++warnings_;
      logger_.log(Severity::warning,
                  "It seems that global step has not been increased. Pass the global step to "
                  "the optimizer's minimize().");
    }
    last_global_step_ = stale;
  }

  /// The last reported rate in global steps per second.
  std::optional<double> last_rate() const { return last_rate_; }
  L& logger() { return logger_; }

 private:
  SecondOrStepTimer<C> timer_;
  L logger_;
  std::optional<double> last_rate_;
  std::optional<std::int64_t> last_global_step_;
  int warnings_ = 0;
};

}  // namespace hookfuse
