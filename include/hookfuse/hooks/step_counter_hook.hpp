// hookfuse/hooks/step_counter_hook.hpp: StepCounterHook (tf.compat.v1.train.StepCounterHook).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "hookfuse/clock.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/log_line.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/hooks/summary_writer_ref.hpp"
#include "hookfuse/hooks/timer.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// Logs training speed, "global_step/sec: <steps per second>" (printf %g), every
/// `every_n_steps` global steps or every `every_n_secs` seconds. The first trigger (global step
/// 1 in a fresh run) only sets the baseline, so with every_n_steps = 10 the first report is at
/// global step 11. Exactly one interval must be given (std::invalid_argument otherwise); when
/// neither is, every_n_steps = 100 as in TensorFlow. Steps are global steps: with a train op that
/// adds 2 per run (TrainOp::global_step_increment; TF's steps_per_run) and every_n_steps = 10,
/// the baseline is at step 2 and reports at steps 12, 22, ..., each of 10 steps (5 runs).
/// When a run's global step (read before the run's increment) equals the previous run's, it
/// warns with TensorFlow's text, "It seems that global step (tf.train.get_global_step) has not
/// been increased. Current value (could be stable): 7 vs previous value: 7. You could increase
/// ...", at most 5 times per session (TensorFlow: 5 times per process; here begin() resets the
/// count).
///
/// With `output_dir` or `summary_writer` (hosted builds; TF's arguments of the same names) it
/// also writes each reported rate as the scalar summary "global_step/sec" (TF's tag,
/// `<global step name>/sec`) at the global step after the triggering run (TF reads the global
/// step again after the train op: global step 11 above), through the writer's add_scalar (its
/// ScalarForm; TF 1 writes `simple_value`, ScalarForm::simple_value). `summary_writer` wins when
/// both are given. Without either, nothing more happens: no allocation, one null check per
/// report.
template <Clock C = SteadyClock, Logger L = StderrLogger>
class StepCounterHook {
 public:
  struct Options {
    std::optional<std::int64_t> every_n_steps = std::nullopt;
    std::optional<double> every_n_secs = std::nullopt;
#ifndef HOOKFUSE_EMBEDDED
    /// The directory whose shared writer (io::SummaryWriterCache) gets "global_step/sec".
    SummaryWriterRef output_dir = {};
    /// The writer that gets "global_step/sec" (wins over output_dir).
    SummaryWriterRef summary_writer = {};
#endif
  };
  explicit StepCounterHook(Options options = {}, C clock = C{}, L logger = L{})
      : timer_(options.every_n_secs,
               (!options.every_n_steps && !options.every_n_secs) ? std::optional<std::int64_t>(100)
                                                                 : options.every_n_steps,
               clock),
        logger_(logger)
#ifndef HOOKFUSE_EMBEDDED
        ,
        writer_(options.summary_writer ? std::move(options.summary_writer)
                                       : std::move(options.output_dir))
#endif
  {
  }

  /// Starts a session: resets the interval timer, the stalled-step comparison and the count of
  /// stalled-step warnings.
  void begin() {
    timer_.reset();
    last_global_step_.reset();
    warnings_ = 0;
  }

  SessionRunArgs<"global_step"> before_run(SessionRunContext&) { return {}; }

  void after_run(SessionRunContext& ctx, const SessionRunValues<"global_step">& values) {
    const std::int64_t stale = values.get<"global_step">().item_int();
    // TF's pre-check with steps_per_run = the train op's increment: no clock read between
    // triggers of a step cadence.
    if (timer_.should_trigger_for_step(
            detail::saturating_add(stale, ctx.global_step_increment()))) {
      const std::int64_t global_step = ctx.global_step();
      if (timer_.should_trigger_for_step(global_step)) {
        auto elapsed = timer_.update_last_triggered_step(global_step);
        if (elapsed.secs) {
          last_rate_ = static_cast<double>(*elapsed.steps) / *elapsed.secs;
#ifndef HOOKFUSE_EMBEDDED
          writer_.add_scalar(summary_tag, *last_rate_, global_step);
#endif
          detail::LogLine<64> line;
          line.append("global_step/sec: ").append_g(*last_rate_);
          logger_.log(Severity::info, line.view());
        }
      }
    }
    if (last_global_step_ && stale == *last_global_step_ && warnings_ < max_stall_warnings) {
      ++warnings_;
      warn_stalled(stale, *last_global_step_);
    }
    last_global_step_ = stale;
  }

  /// How many stalled-step warnings a session logs at most (TensorFlow's log_first_n(.., 5)).
  static constexpr int max_stall_warnings = 5;
  /// The tag of the rate summary and log line (TF: the global step's op name + "/sec").
  static constexpr std::string_view summary_tag = "global_step/sec";

  /// The last reported rate in global steps per second.
  std::optional<double> last_rate() const { return last_rate_; }
  L& logger() { return logger_; }
#ifndef HOOKFUSE_EMBEDDED
  /// The writer "global_step/sec" goes to (empty without output_dir / summary_writer).
  const SummaryWriterRef& summary_writer() const { return writer_; }
#endif

 private:
  // TensorFlow's text, with the stale global step of this run and of the previous one ("%s" of
  // two int64 values).
  void warn_stalled(std::int64_t current, std::int64_t previous) {
    detail::LogLine<320> line;
    line.append(
        "It seems that global step (tf.train.get_global_step) has not been "
        "increased. Current value (could be stable): ");
    line.append(current).append(" vs previous value: ").append(previous);
    line.append(
        ". You could increase the global step by passing "
        "tf.train.get_global_step() to Optimizer.apply_gradients or "
        "Optimizer.minimize.");
    logger_.log(Severity::warning, line.view());
  }

  SecondOrStepTimer<C> timer_;
  L logger_;
  std::optional<double> last_rate_;
  std::optional<std::int64_t> last_global_step_;
  int warnings_ = 0;
#ifndef HOOKFUSE_EMBEDDED
  SummaryWriterRef writer_;
#endif
};

}  // namespace hookfuse
