// hookfuse/hooks/reduce_lr_on_plateau_hook.hpp: ReduceLROnPlateauHook, divides the learning
// rate when a monitored tensor stops improving (keras.callbacks.ReduceLROnPlateau).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/check.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/log_line.hpp"
#ifndef HOOKFUSE_EMBEDDED
#include "hookfuse/detail/python_float.hpp"
#endif
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/monitor_mode.hpp"
#include "hookfuse/hooks/resumable_state.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/logging.hpp"
#include "hookfuse/optim/learning_rate_ref.hpp"

namespace hookfuse {

/// Watches the scalar tensor `Monitor` (a loss, a metric the session computes) every
/// `every_n_iter` runs (runs every_n_iter, 2 every_n_iter, ... of this session; each check is
/// one Keras "epoch end") and multiplies the optimizer's learning rate by `factor` when it has
/// not improved for `patience` checks, with the rules of ReduceLROnPlateau.on_epoch_end in
/// tf-keras 2.15.0 (tf_keras/callbacks.py, run with numpy 1.24 as its requirements.txt pins):
///   - improved: value < best - min_delta (mode min) or value > best + min_delta (mode max);
///     then best = value and the wait counter is 0; NaN never improves;
///   - during a cooldown (cooldown checks after a reduction) the counter stays 0;
///   - otherwise the counter grows; when it reaches patience and float32(lr) > float32(min_lr)
///     (Keras compares its float32 rate: `old_lr > np.float32(self.min_lr)`), the rate becomes
///     max(float32(lr) * factor, min_lr), multiplied in double (numpy 1.24 makes a float32
///     scalar times a Python float a float64), the counter restarts and the cooldown begins;
///     "Step <global step>: ReduceLROnPlateau reducing learning rate to <rate>." is logged at
///     INFO with the rate as Python prints that double ("0.010000000149011612" for 0.1 * 0.1;
///     %g in HOOKFUSE_EMBEDDED builds). Keras prints "Epoch <n>: ..." with verbose=1.
/// mode automatic is max when the name contains "acc" (AutoRule::contains_acc, Keras' "auto"
/// for this callback; EarlyStoppingHook's rule differs).
/// On the runs between checks it fetches nothing (SessionRunArgs::none()), so a metric outside
/// the loss's graph is not computed. Unlike Keras, the value checked is the fetched value of
/// that run, not an average over the runs since the previous check.
/// Checkpoint state (hooks/resumable_state.hpp), under "hooks/ReduceLROnPlateauHook/": "best"
/// and "lr" (float64), "wait", "cooldown_counter", "runs_to_check" (int64). "lr" is the rate as
/// of this hook's last check or reduction; a restored one (not NaN) is set on the optimizer in
/// after_create_session, so a resumed run continues with the reduced rate.
/// The optimizer is reached in after_create_session through session.optimizer(). Throws
/// std::invalid_argument for factor >= 1 (Keras' message) or < 0, patience, cooldown < 0,
/// min_delta, min_lr negative or not finite, every_n_iter <= 0, and, at a check, when the
/// monitored tensor is not a scalar.
template <fixed_string Monitor = "loss", Logger L = StderrLogger>
class ReduceLROnPlateauHook {
 public:
  struct Options {
    double factor = 0.1;
    std::int64_t patience = 10;
    MonitorMode mode = MonitorMode::automatic;
    double min_delta = 1e-4;
    std::int64_t cooldown = 0;
    double min_lr = 0.0;
    std::int64_t every_n_iter = 1;
  };

  /// The <hook name> of this hook's checkpoint keys.
  static constexpr fixed_string checkpoint_name = "ReduceLROnPlateauHook";

  explicit ReduceLROnPlateauHook(Options options = {}, L logger = L{})
      : o_(options),
        maximize_(maximizes(options.mode, Monitor.view(), AutoRule::contains_acc)),
        logger_(logger) {
    // Keras: "ReduceLROnPlateau does not support a factor >= 1.0."
    detail::check_argument(o_.factor >= 0.0 && o_.factor < 1.0, "ReduceLROnPlateauHook",
                           "factor", "in [0, 1) (Keras does not support a factor >= 1.0)",
                           o_.factor);
    detail::check_argument(o_.patience >= 0, "ReduceLROnPlateauHook", "patience", ">= 0",
                           o_.patience);
    detail::check_argument(o_.cooldown >= 0, "ReduceLROnPlateauHook", "cooldown", ">= 0",
                           o_.cooldown);
    detail::check_argument(o_.min_delta >= 0.0 && std::isfinite(o_.min_delta),
                           "ReduceLROnPlateauHook", "min_delta", "finite and >= 0", o_.min_delta);
    detail::check_argument(o_.min_lr >= 0.0 && std::isfinite(o_.min_lr), "ReduceLROnPlateauHook",
                           "min_lr", "finite and >= 0", o_.min_lr);
    detail::check_argument(o_.every_n_iter > 0, "ReduceLROnPlateauHook", "every_n_iter", "> 0",
                           o_.every_n_iter);
    check_monitor_mode("ReduceLROnPlateauHook", o_.mode);
    reset();
  }

  /// Keras' on_train_begin: forgets the best value, the wait counter and the cooldown.
  void begin() { reset(); }

  template <class Session>
  void after_create_session(Session& session) {
    optimizer_ = LearningRateRef(session.optimizer());
    if (std::isnan(lr_)) lr_ = optimizer_.get();  // nothing restored
    else optimizer_.set(lr_);                     // a restored rate
  }
  /// Forgets the session's optimizer: update() after the session ended throws
  /// std::logic_error instead of reaching a destroyed optimizer.
  template <class Session>
  void end(Session&) {
    optimizer_ = LearningRateRef();
  }

  SessionRunArgs<Monitor> before_run(SessionRunContext&) {
    check_ = --runs_to_check_ == 0;
    if (check_) runs_to_check_ = o_.every_n_iter;
    return {check_};
  }

  void after_run(SessionRunContext& ctx, const SessionRunValues<Monitor>& values) {
    if (!check_) return;
    update(monitored_scalar("ReduceLROnPlateauHook", values.template get<Monitor>()),
           ctx.global_step());
  }

  /// One check of the monitored value (Keras' on_epoch_end); `global_step` is for the log line.
  void update(double current, std::int64_t global_step) {
    if (cooldown_counter_ > 0) {
      --cooldown_counter_;
      wait_ = 0;
    }
    if (optimizer_.bound()) lr_ = optimizer_.get();
    const bool improved =
        maximize_ ? current > best_ + o_.min_delta : current < best_ - o_.min_delta;
    if (improved) {
      best_ = current;
      wait_ = 0;
    } else if (cooldown_counter_ == 0) {
      ++wait_;
      if (wait_ >= o_.patience) {
        const auto old_lr = static_cast<float>(optimizer_.get());
        if (old_lr > static_cast<float>(o_.min_lr)) {
          double new_lr = static_cast<double>(old_lr) * o_.factor;
          if (o_.min_lr > new_lr) new_lr = o_.min_lr;  // Python's max(new_lr, min_lr)
          optimizer_.set(new_lr);
          lr_ = new_lr;
          log(global_step, new_lr);
          cooldown_counter_ = o_.cooldown;
          wait_ = 0;
        }
      }
    }
  }

  /// The best value seen (+inf in mode min, -inf in mode max before the first check).
  double best() const { return best_; }
  /// Checks without improvement since the last improvement or reduction.
  std::int64_t wait() const { return wait_; }
  /// Checks left in the cooldown.
  std::int64_t cooldown_counter() const { return cooldown_counter_; }
  /// Whether the monitored value should go up (mode max, or automatic with "acc" in the name).
  bool maximize() const { return maximize_; }
  L& logger() { return logger_; }

  /// The resumable state, saved as "hooks/ReduceLROnPlateauHook/<field>".
  auto checkpoint_state() {
    return std::tuple(state_field<"best">(best_), state_field<"wait">(wait_),
                      state_field<"cooldown_counter">(cooldown_counter_),
                      state_field<"lr">(lr_), state_field<"runs_to_check">(runs_to_check_));
  }

 private:
  void reset() {
    best_ = maximize_ ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
    wait_ = 0;
    cooldown_counter_ = 0;
    lr_ = std::numeric_limits<double>::quiet_NaN();
    runs_to_check_ = o_.every_n_iter;
    check_ = false;
  }

  void log(std::int64_t step, double lr) {
    if constexpr (std::is_same_v<L, NullLogger>) return;  // no line to format
    detail::LogLine<> line;
    line.append("Step ").append(step).append(": ReduceLROnPlateau reducing learning rate to ");
#ifndef HOOKFUSE_EMBEDDED
    detail::append_python_float(line.cursor(), line.end(), lr);
#else
    line.append_g(lr);  // no std::to_chars for floating point on the target
#endif
    line.append(".");
    logger_.log(Severity::info, line.view());
  }

  Options o_;
  bool maximize_;
  L logger_;
  LearningRateRef optimizer_;
  double best_ = 0.0;
  std::int64_t wait_ = 0;
  std::int64_t cooldown_counter_ = 0;
  double lr_ = 0.0;  // the rate at the last check or reduction; NaN until known
  std::int64_t runs_to_check_ = 1;
  bool check_ = false;
};

}  // namespace hookfuse
