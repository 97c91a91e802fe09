// hookfuse/optim/schedules.hpp: learning-rate schedules, f(global_step) -> learning rate, with
// TensorFlow's formulas (tf.compat.v1.train.exponential_decay, piecewise_constant,
// cosine_decay; tf.keras.optimizers.schedules.*Decay; a linear warm-up as the TF Model Garden's
// tfm.optimization.LinearWarmup).
//
// A schedule is any value `s` with `s(std::int64_t global_step)` convertible to double
// (LearningRateSchedule): these value types, a lambda or a function pointer. They are computed
// in double (TensorFlow computes in the learning rate's dtype, usually float32), hold no heap
// memory and allocate nothing when called. LearningRateSchedulerHook
// (hooks/learning_rate_scheduler_hook.hpp) sets an optimizer's learning rate from one.
#pragma once

#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/check.hpp"
#include "hookfuse/detail/format.hpp"

namespace hookfuse {

/// A learning-rate schedule: called with the global step (an int64), returns the learning rate.
template <class S>
concept LearningRateSchedule = requires(const S& s, std::int64_t global_step) {
  { s(global_step) } -> std::convertible_to<double>;
};

/// learning_rate * decay_rate ^ (global_step / decay_steps), with an integer division
/// (floor) of the exponent when `staircase`: tf.compat.v1.train.exponential_decay(
/// learning_rate, global_step, decay_steps, decay_rate, staircase) and
/// tf.keras.optimizers.schedules.ExponentialDecay.
/// Throws std::invalid_argument when decay_steps <= 0 or learning_rate / decay_rate is not
/// finite, or decay_rate < 0.
class ExponentialDecay {
 public:
  ExponentialDecay(double learning_rate, std::int64_t decay_steps, double decay_rate,
                   bool staircase = false)
      : learning_rate_(learning_rate),
        decay_steps_(decay_steps),
        decay_rate_(decay_rate),
        staircase_(staircase) {
    detail::check_argument(decay_steps > 0, "exponential_decay", "decay_steps", "> 0",
                           decay_steps);
    detail::check_argument(std::isfinite(learning_rate), "exponential_decay", "learning_rate",
                           "finite", learning_rate);
    detail::check_argument(std::isfinite(decay_rate) && decay_rate >= 0.0, "exponential_decay",
                           "decay_rate", "finite and >= 0", decay_rate);
  }

  double operator()(std::int64_t global_step) const {
    double p = static_cast<double>(global_step) / static_cast<double>(decay_steps_);
    if (staircase_) p = std::floor(p);
    return learning_rate_ * std::pow(decay_rate_, p);
  }

  double learning_rate() const { return learning_rate_; }
  std::int64_t decay_steps() const { return decay_steps_; }
  double decay_rate() const { return decay_rate_; }
  bool staircase() const { return staircase_; }

 private:
  double learning_rate_;
  std::int64_t decay_steps_;
  double decay_rate_;
  bool staircase_;
};

/// values[0] while global_step <= boundaries[0], values[1] while boundaries[0] < global_step <=
/// boundaries[1], ..., values[N] once global_step > boundaries[N - 1]:
/// tf.compat.v1.train.piecewise_constant(x, boundaries, values) and
/// tf.keras.optimizers.schedules.PiecewiseConstantDecay. N boundaries need N + 1 values (a
/// compile error otherwise, with the deduction guide below: PiecewiseConstantDecay({100, 200},
/// {0.1, 0.01, 0.001})). Throws std::invalid_argument unless the boundaries are strictly
/// increasing and every value finite. The arrays are stored in the object (no heap).
template <std::size_t N>
class PiecewiseConstantDecay {
 public:
  PiecewiseConstantDecay(const std::array<std::int64_t, N>& boundaries,
                         const std::array<double, N + 1>& values)
      : boundaries_(boundaries), values_(values) {
    check();
  }
  // A template on K (== N) so that PiecewiseConstantDecay<0> declares no zero-length array.
  // clang-format off
  template <std::size_t K, std::size_t M>
    requires(K == N)
  PiecewiseConstantDecay(const std::int64_t (&boundaries)[K], const double (&values)[M]) {
    // clang-format on
    static_assert(M == N + 1,
                  "hookfuse: piecewise_constant needs one more value than boundaries "
                  "(values.size() == boundaries.size() + 1)");
    for (std::size_t i = 0; i < N; ++i) boundaries_[i] = boundaries[i];
    for (std::size_t i = 0; i < N + 1; ++i) values_[i] = values[i];
    check();
  }

  double operator()(std::int64_t global_step) const {
    // The first boundary at or past the step names the value (x <= b[i] -> values[i]).
    std::size_t i = 0;
    while (i < N && global_step > boundaries_[i]) ++i;
    return values_[i];
  }

  const std::array<std::int64_t, N>& boundaries() const { return boundaries_; }
  const std::array<double, N + 1>& values() const { return values_; }

 private:
  void check() const {
    for (std::size_t i = 1; i < N; ++i)
      if (boundaries_[i] <= boundaries_[i - 1])
        detail::fail<std::invalid_argument>(
            (detail::ErrorMessage()
             << "piecewise_constant: boundaries must be strictly increasing, got boundaries["
             << i << "] = " << static_cast<long long>(boundaries_[i]) << " after boundaries["
             << (i - 1) << "] = " << static_cast<long long>(boundaries_[i - 1]))
                .str());
    for (std::size_t i = 0; i < N + 1; ++i)
      if (!std::isfinite(values_[i]))
        detail::fail<std::invalid_argument>((detail::ErrorMessage()
                                             << "piecewise_constant: every value must be finite, "
                                                "got values["
                                             << i << "] = " << values_[i])
                                                .str());
  }

  std::array<std::int64_t, N> boundaries_{};
  std::array<double, N + 1> values_{};
};

template <std::size_t N, std::size_t M>
PiecewiseConstantDecay(const std::int64_t (&)[N], const double (&)[M]) -> PiecewiseConstantDecay<N>;
template <std::size_t N, std::size_t M>
PiecewiseConstantDecay(const std::array<std::int64_t, N>&, const std::array<double, M>&)
    -> PiecewiseConstantDecay<N>;

/// learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(global_step, decay_steps) /
/// decay_steps)) + alpha): tf.compat.v1.train.cosine_decay(learning_rate, global_step,
/// decay_steps, alpha) and tf.keras.optimizers.schedules.CosineDecay (without its warm-up; wrap
/// it in LinearWarmup). From learning_rate at step 0 to alpha * learning_rate at decay_steps,
/// constant after. Throws std::invalid_argument when decay_steps <= 0, learning_rate is not
/// finite or alpha is outside [0, 1] (TensorFlow does not check alpha).
class CosineDecay {
 public:
  CosineDecay(double learning_rate, std::int64_t decay_steps, double alpha = 0.0)
      : learning_rate_(learning_rate), decay_steps_(decay_steps), alpha_(alpha) {
    detail::check_argument(decay_steps > 0, "cosine_decay", "decay_steps", "> 0", decay_steps);
    detail::check_argument(std::isfinite(learning_rate), "cosine_decay", "learning_rate",
                           "finite", learning_rate);
    detail::check_argument(alpha >= 0.0 && alpha <= 1.0, "cosine_decay", "alpha", "in [0, 1]",
                           alpha);
  }

  double operator()(std::int64_t global_step) const {
    const std::int64_t step = global_step < decay_steps_ ? global_step : decay_steps_;
    const double fraction = static_cast<double>(step) / static_cast<double>(decay_steps_);
    const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * fraction));
    return learning_rate_ * ((1.0 - alpha_) * cosine + alpha_);
  }

  double learning_rate() const { return learning_rate_; }
  std::int64_t decay_steps() const { return decay_steps_; }
  double alpha() const { return alpha_; }

 private:
  double learning_rate_;
  std::int64_t decay_steps_;
  double alpha_;
};

/// A linear warm-up in front of another schedule, as the TF Model Garden's
/// tfm.optimization.LinearWarmup(after_warmup_lr_sched, warmup_steps, warmup_learning_rate):
/// for global_step < warmup_steps, warmup_lr + (schedule(warmup_steps) - warmup_lr) *
/// global_step / warmup_steps; from warmup_steps on, schedule(global_step) (the wrapped schedule
/// is not shifted: it sees the global step itself). warmup_steps == 0 means no warm-up.
/// Throws std::invalid_argument when warmup_steps < 0 or warmup_lr is not finite.
template <LearningRateSchedule S>
class LinearWarmup {
 public:
  LinearWarmup(S schedule, std::int64_t warmup_steps, double warmup_lr = 0.0)
      : schedule_(std::move(schedule)), warmup_steps_(warmup_steps), warmup_lr_(warmup_lr) {
    detail::check_argument(warmup_steps >= 0, "linear_warmup", "warmup_steps", ">= 0",
                           warmup_steps);
    detail::check_argument(std::isfinite(warmup_lr), "linear_warmup", "warmup_lr", "finite",
                           warmup_lr);
  }

  double operator()(std::int64_t global_step) const {
    if (global_step >= warmup_steps_) return static_cast<double>(schedule_(global_step));
    const double target = static_cast<double>(schedule_(warmup_steps_));
    return warmup_lr_ + (target - warmup_lr_) * static_cast<double>(global_step) /
                            static_cast<double>(warmup_steps_);
  }

  const S& schedule() const { return schedule_; }
  std::int64_t warmup_steps() const { return warmup_steps_; }
  double warmup_lr() const { return warmup_lr_; }

 private:
  S schedule_;
  std::int64_t warmup_steps_;
  double warmup_lr_;
};

/// tf.compat.v1.train.exponential_decay's arguments without the global step (the schedule is
/// called with it).
inline ExponentialDecay exponential_decay(double learning_rate, std::int64_t decay_steps,
                                          double decay_rate, bool staircase = false) {
  return ExponentialDecay(learning_rate, decay_steps, decay_rate, staircase);
}

/// tf.compat.v1.train.piecewise_constant(x, boundaries, values), x being the global step:
/// piecewise_constant({100, 200}, {0.1, 0.01, 0.001}).
template <std::size_t N, std::size_t M>
PiecewiseConstantDecay<N> piecewise_constant(const std::int64_t (&boundaries)[N],
                                             const double (&values)[M]) {
  return PiecewiseConstantDecay<N>(boundaries, values);
}

/// tf.compat.v1.train.cosine_decay's arguments without the global step.
inline CosineDecay cosine_decay(double learning_rate, std::int64_t decay_steps,
                                double alpha = 0.0) {
  return CosineDecay(learning_rate, decay_steps, alpha);
}

/// linear_warmup(schedule, warmup_steps, warmup_lr): see LinearWarmup.
template <LearningRateSchedule S>
LinearWarmup<S> linear_warmup(S schedule, std::int64_t warmup_steps, double warmup_lr = 0.0) {
  return LinearWarmup<S>(std::move(schedule), warmup_steps, warmup_lr);
}

}  // namespace hookfuse
