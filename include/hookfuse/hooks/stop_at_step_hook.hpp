// hookfuse/hooks/stop_at_step_hook.hpp: StopAtStepHook (tf.compat.v1.train.StopAtStepHook).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>

#include "hookfuse/config.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/hooks/timer.hpp"

namespace hookfuse {

/// Requests a stop once the global step reaches a limit.
///   num_steps: train this many steps from the global step at session creation
///   last_step: stop when the global step reaches this value
/// Exactly one must be given; otherwise std::invalid_argument is thrown (TensorFlow: ValueError).
/// At least one step runs even when the global step is already past last_step, as in TensorFlow.
/// The stop comes after the run whose global step (after its increment) is >= the limit: with a
/// train op that adds 2 per run (TrainOp::global_step_increment), num_steps = 100 from step 0
/// stops after 50 runs at step 100, and last_step = 101 after 51 runs at step 102.
class StopAtStepHook {
 public:
  struct Options {
    std::optional<std::int64_t> num_steps = std::nullopt;
    std::optional<std::int64_t> last_step = std::nullopt;
  };

  explicit StopAtStepHook(Options options)
      : num_steps_(options.num_steps), last_step_(options.last_step) {
    if (num_steps_.has_value() == last_step_.has_value())
      detail::fail<std::invalid_argument>(
          "StopAtStepHook: exactly one of num_steps and last_step should be provided");
    if (num_steps_ && *num_steps_ < 0)
      detail::fail<std::invalid_argument>("StopAtStepHook: num_steps must be >= 0");
  }

  template <class Session>
  void after_create_session(Session& session) {
    if (!last_step_) last_step_ = session.global_step() + *num_steps_;
  }

  SessionRunArgs<"global_step"> before_run(SessionRunContext&) { return {}; }

  void after_run(SessionRunContext& ctx, const SessionRunValues<"global_step">& values) {
    // The fetched global step is the value before this run's increment; TF adds 1 and then
    // re-reads the step, here the run context knows both the increment and the step after it.
    const std::int64_t global_step = detail::saturating_add(
        values.get<"global_step">().item_int(), ctx.global_step_increment());
    if (global_step >= *last_step_ && ctx.global_step() >= *last_step_) ctx.request_stop();
  }

  /// The global step at which training stops (known after session creation).
  std::optional<std::int64_t> last_step() const { return last_step_; }

 private:
  std::optional<std::int64_t> num_steps_;
  std::optional<std::int64_t> last_step_;
};

}  // namespace hookfuse
