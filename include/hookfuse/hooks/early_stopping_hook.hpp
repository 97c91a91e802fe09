// hookfuse/hooks/early_stopping_hook.hpp: EarlyStoppingHook, stops training when a monitored
// tensor stops improving (keras.callbacks.EarlyStopping), optionally restoring the best weights.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#ifndef HOOKFUSE_EMBEDDED
#include <memory>
#endif

#include "hookfuse/config.hpp"
#include "hookfuse/detail/check.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/log_line.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/hooks/monitor_mode.hpp"
#include "hookfuse/hooks/resumable_state.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// Options of EarlyStoppingHook (see there).
struct EarlyStoppingOptions {
  double min_delta = 0.0;
  std::int64_t patience = 0;
  MonitorMode mode = MonitorMode::automatic;
  std::optional<double> baseline = std::nullopt;
  bool restore_best_weights = false;
  std::int64_t every_n_iter = 1;
  /// Where the best weights are copied (restore_best_weights); empty: a buffer of the hook.
  std::span<std::byte> best_weights_buffer = {};
};

namespace detail {
/// The Evaluate of an EarlyStoppingHook that watches a fetched training tensor.
struct FetchedMonitor {};
}  // namespace detail

/// Watches the scalar `Monitor` (a loss, a metric) every `every_n_iter` runs (runs
/// every_n_iter, 2 every_n_iter, ... of the training; each check is one Keras "epoch end") and
/// requests a stop when it has not improved for `patience` checks, with the rules of
/// EarlyStopping.on_epoch_end in tf-keras 2.15.0 (tf_keras/callbacks.py), check c = 0, 1, ...:
///   - improved(v, ref): v < ref - min_delta (mode min) or v > ref + min_delta (mode max), with
///     |min_delta| as Keras takes it; NaN never improves. mode automatic: max when the name
///     ends in "acc", "accuracy" or "auc" (AutoRule::accuracy_or_auc_suffix);
///   - at each check the wait counter grows by one; when improved(v, best), best = v (and the
///     weights are copied when restore_best_weights), the counter goes back to 0 only when
///     there is no baseline or improved(v, baseline) too, and the check ends there: a check
///     that improves never stops, even with patience 0 or a baseline not yet beaten;
///   - otherwise, when wait >= patience and c > 0 (never at the first check), the hook requests
///     a stop, records stopped_step() (the global step after that run) and logs
///     "Step <global step>: early stopping." at INFO; with restore_best_weights it writes the
///     copy back into the model's variables and logs "Restoring model weights from the end of
///     the best check: step <s>." (s: the global step after the best check's run).
/// restore_best_weights restores only when this hook stops training (tf-keras 2.15.0; 2.16 and
/// Keras 3 restore in on_train_end); a training that ends otherwise (StopAtStepHook, the end of
/// the input) keeps its last weights. If no check ever improved, the copy is the
/// weights at the first check (as Keras). The copy covers the model's Variables (the loss's
/// graph and the extras, not the optimizer's slots nor global_step); it lives in
/// Options::best_weights_buffer when given (at least best_weights_bytes(session) bytes: the
/// only way in HOOKFUSE_EMBEDDED builds), else in a buffer allocated once in
/// after_create_session (only with restore_best_weights); a check copies into it, no heap.
/// On the runs between checks it fetches nothing (SessionRunArgs::none()). Unlike Keras, the
/// value is the fetched value of that run, not an average over the runs since the last check.
///
/// Where the value comes from (the third template argument):
///   - `Evaluate = detail::FetchedMonitor` (the default): `Monitor` is a tensor of the training
///     session (a loss, a metric) fetched in the checking runs;
///   - an evaluation metric (Keras' monitor="val_loss" with validation data; TensorFlow's
///     stop_if_no_decrease_hook over Estimator.evaluate): `Evaluate` is a callable
///     `evaluate()` returning the metric (anything convertible to double), called once at each
///     check, after that run's update, so it sees the weights the check judges (typically it
///     runs a second graph bound to the same variables over validation batches: docs/hooks.md).
///     `Monitor` is then only the metric's name (mode automatic reads it as for a tensor:
///     "val_accuracy" is max); the training session fetches nothing for this hook. Build it with
///     early_stopping_on_evaluation<"val_loss">(evaluate, options, logger).
///
/// Checkpoint state (hooks/resumable_state.hpp): "hooks/EarlyStoppingHook/best" (float64),
/// ".../wait", ".../checks", ".../runs_to_check", ".../best_step", ".../stopped_step" (int64), so
/// a resumed run stops where an uninterrupted one does. The best-weights copy is not saved: after
/// a resume it is retaken at the first check (a resumed run restores the weights of its own best
/// check, which differ from an uninterrupted run's when the best check came before the resume).
///
/// Throws std::invalid_argument for patience < 0, every_n_iter <= 0, min_delta or baseline not
/// finite, and, at a check, when the monitored tensor is not a scalar ([1, 1]).
template <fixed_string Monitor = "loss", Logger L = StderrLogger,
          class Evaluate = detail::FetchedMonitor>
class EarlyStoppingHook {
  static constexpr bool fetches_monitor = std::is_same_v<Evaluate, detail::FetchedMonitor>;
  static_assert(fetches_monitor || std::is_invocable_r_v<double, Evaluate&>,
                "hookfuse: the evaluation of an EarlyStoppingHook must be callable as "
                "evaluate() and return the monitored metric as a number (Evaluate in the "
                "instantiation above)");

 public:
  using Options = EarlyStoppingOptions;
  /// What before_run requests: the monitored tensor, or nothing for an evaluation metric.
  using RunArgs = std::conditional_t<fetches_monitor, SessionRunArgs<Monitor>, SessionRunArgs<>>;
  using RunValues =
      std::conditional_t<fetches_monitor, SessionRunValues<Monitor>, SessionRunValues<>>;

  /// The <hook name> of this hook's checkpoint keys.
  static constexpr fixed_string checkpoint_name = "EarlyStoppingHook";

  /// Watches the training tensor `Monitor`.
  explicit EarlyStoppingHook(Options options = {}, L logger = L{})
    requires fetches_monitor
      : EarlyStoppingHook(detail::FetchedMonitor{}, options, std::move(logger), 0) {}

  /// Watches the metric `evaluate()` returns at each check (early_stopping_on_evaluation).
  explicit EarlyStoppingHook(Evaluate evaluate, Options options = {}, L logger = L{})
    requires(!fetches_monitor)
      : EarlyStoppingHook(std::move(evaluate), options, std::move(logger), 0) {}

 private:
  EarlyStoppingHook(Evaluate evaluate, Options options, L logger, int)
      : o_(options),
        maximize_(maximizes(options.mode, Monitor.view(), AutoRule::accuracy_or_auc_suffix)),
        logger_(std::move(logger)),
        evaluate_(std::move(evaluate)) {
    detail::check_argument(o_.patience >= 0, "EarlyStoppingHook", "patience", ">= 0",
                           o_.patience);
    detail::check_argument(o_.every_n_iter > 0, "EarlyStoppingHook", "every_n_iter", "> 0",
                           o_.every_n_iter);
    detail::check_argument(std::isfinite(o_.min_delta), "EarlyStoppingHook", "min_delta",
                           "finite", o_.min_delta);
    if (o_.baseline)
      detail::check_argument(std::isfinite(*o_.baseline), "EarlyStoppingHook", "baseline",
                             "finite", *o_.baseline);
    check_monitor_mode("EarlyStoppingHook", o_.mode);
    o_.min_delta = std::fabs(o_.min_delta);
    reset();
  }

 public:

  /// Keras' on_train_begin: forgets the best value, the counters and the stop.
  void begin() { reset(); }

  /// With restore_best_weights: where the copy goes (Options::best_weights_buffer, or a buffer
  /// allocated here, the only allocation). Throws std::invalid_argument when the given buffer
  /// is smaller than best_weights_bytes(session), or, in HOOKFUSE_EMBEDDED builds, when none is
  /// given.
  template <class Session>
  void after_create_session(Session& session) {
    have_best_weights_ = false;
    if (!o_.restore_best_weights) return;
    session_ = &session;
    copy_ = [](void* s, std::byte* buffer, bool to_buffer) {
      const auto vars = graph_variables(static_cast<Session*>(s)->graph());
      std::size_t at = 0;
      for (const CheckpointVariable& v : vars) {
        const std::size_t n = size_in_bytes(v);
        if (n > 0 && to_buffer) std::memcpy(buffer + at, v.data, n);
        if (n > 0 && !to_buffer) std::memcpy(v.data, buffer + at, n);
        at += n;
      }
    };
    const std::size_t bytes = best_weights_bytes(session);
    if (!o_.best_weights_buffer.empty()) {
      if (o_.best_weights_buffer.size() < bytes)
        detail::fail<std::invalid_argument>(
            "EarlyStoppingHook: Options::best_weights_buffer is smaller than the model's "
            "variables (best_weights_bytes(session))");
      buffer_ = o_.best_weights_buffer.data();
    } else {
#ifdef HOOKFUSE_EMBEDDED
      detail::fail<std::invalid_argument>(
          "EarlyStoppingHook: restore_best_weights needs Options::best_weights_buffer in an "
          "embedded build (best_weights_bytes(session) bytes)");
#else
      owned_.bytes = std::make_unique<std::byte[]>(bytes);
      buffer_ = owned_.bytes.get();
#endif
    }
  }

  /// The bytes the best-weights copy takes: every Variable of the session's model, elements
  /// times 4 (float32, int32) or 8 (float64, int64).
  template <class Session>
  static std::size_t best_weights_bytes(Session& session) {
    std::size_t bytes = 0;
    for (const CheckpointVariable& v : graph_variables(session.graph())) bytes += size_in_bytes(v);
    return bytes;
  }

  RunArgs before_run(SessionRunContext&) {
    check_ = --runs_to_check_ == 0;
    if (check_) runs_to_check_ = o_.every_n_iter;
    return RunArgs{fetches_monitor && check_};
  }

  /// At a check: the fetched value (or evaluate()'s) goes through update(); a stop it decides
  /// is requested with ctx.request_stop().
  void after_run(SessionRunContext& ctx, [[maybe_unused]] const RunValues& values) {
    if (!check_) return;
    double current = 0.0;
    if constexpr (fetches_monitor)
      current = monitored_scalar("EarlyStoppingHook", values.template get<Monitor>());
    else
      current = static_cast<double>(evaluate_());
    if (update(current, ctx.global_step())) ctx.request_stop();
  }

  /// One check of the monitored value (Keras' on_epoch_end); `global_step` is recorded as the
  /// best or stopping step and logged. Returns true when training should stop (the weights are
  /// then already restored, with restore_best_weights).
  bool update(double current, std::int64_t global_step) {
    const std::int64_t check = checks_++;
    if (o_.restore_best_weights && !have_best_weights_) copy_weights();
    ++wait_;
    if (improved(current, best_)) {
      best_ = current;
      best_step_ = global_step;
      if (o_.restore_best_weights) copy_weights();
      if (!o_.baseline || improved(current, *o_.baseline)) wait_ = 0;
      return false;  // Keras returns here: an improving check never stops
    }
    if (wait_ < o_.patience || check == 0) return false;
    stopped_step_ = global_step;
    log_stop(global_step);
    if (o_.restore_best_weights && have_best_weights_) {
      write_back_weights();
      log_restore();
    }
    return true;
  }

  /// The best value seen (+inf in mode min, -inf in mode max before the first check).
  double best() const { return best_; }
  /// Checks since the last improvement that reset the counter (Keras' wait).
  std::int64_t wait() const { return wait_; }
  /// Checks done (Keras' epoch index of the next check).
  std::int64_t checks() const { return checks_; }
  /// The global step after the best check's run (0 before any improvement).
  std::int64_t best_step() const { return best_step_; }
  /// The global step after the run at which this hook stopped training; 0 when it did not
  /// (Keras' stopped_epoch).
  std::int64_t stopped_step() const { return stopped_step_; }
  /// Whether the monitored value should go up (mode max, or automatic on a name ending in
  /// "acc", "accuracy" or "auc").
  bool maximize() const { return maximize_; }
  L& logger() { return logger_; }
  /// The hook's copy of the evaluation (early_stopping_on_evaluation).
  Evaluate& evaluation()
    requires(!fetches_monitor)
  {
    return evaluate_;
  }

  /// The resumable state (hooks/resumable_state.hpp), saved as "hooks/EarlyStoppingHook/...".
  auto checkpoint_state() {
    return std::tuple(state_field<"best">(best_), state_field<"wait">(wait_),
                      state_field<"checks">(checks_), state_field<"runs_to_check">(runs_to_check_),
                      state_field<"best_step">(best_step_),
                      state_field<"stopped_step">(stopped_step_));
  }

 private:
  bool improved(double current, double reference) const {
    return maximize_ ? current - o_.min_delta > reference : current + o_.min_delta < reference;
  }

  static std::size_t size_in_bytes(const CheckpointVariable& v) {
    const std::size_t element = (v.dtype == DType::float64 || v.dtype == DType::int64) ? 8 : 4;
    return static_cast<std::size_t>(v.num_elements()) * element;
  }
  void copy_weights() {
    if (copy_ == nullptr) return;  // update() by hand, outside a session: no weights
    copy_(session_, buffer_, true);
    have_best_weights_ = true;
  }
  void write_back_weights() { copy_(session_, buffer_, false); }

  void reset() {
    best_ = maximize_ ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
    wait_ = 0;
    checks_ = 0;
    best_step_ = 0;
    stopped_step_ = 0;
    runs_to_check_ = o_.every_n_iter;
    check_ = false;
    have_best_weights_ = false;
  }

  void log_stop(std::int64_t step) {
    if constexpr (std::is_same_v<L, NullLogger>) return;  // no line to format
    detail::LogLine<> line;
    line.append("Step ").append(step).append(": early stopping.");
    logger_.log(Severity::info, line.view());
  }
  void log_restore() {
    if constexpr (std::is_same_v<L, NullLogger>) return;
    detail::LogLine<> line;
    line.append("Restoring model weights from the end of the best check: step ");
    line.append(best_step_).append(".");
    logger_.log(Severity::info, line.view());
  }

  Options o_;
  bool maximize_;
  L logger_;
  [[no_unique_address]] Evaluate evaluate_;
  double best_ = 0.0;
  std::int64_t wait_ = 0;
  std::int64_t checks_ = 0;
  std::int64_t best_step_ = 0;
  std::int64_t stopped_step_ = 0;
  std::int64_t runs_to_check_ = 1;
  bool check_ = false;
  bool have_best_weights_ = false;
  // The best-weights copy: copy_(session_, buffer_, true) saves the model's Variables into
  // buffer_, false writes them back (set in after_create_session, for its Session type).
  void* session_ = nullptr;
  void (*copy_)(void*, std::byte*, bool) = nullptr;
  std::byte* buffer_ = nullptr;
#ifndef HOOKFUSE_EMBEDDED
  /// The buffer allocated in after_create_session; a copy of the hook starts without one (a
  /// session's after_create_session gives it its own).
  struct OwnedBytes {
    std::unique_ptr<std::byte[]> bytes;
    OwnedBytes() = default;
    OwnedBytes(const OwnedBytes&) {}
    OwnedBytes& operator=(const OwnedBytes&) {
      bytes.reset();
      return *this;
    }
    OwnedBytes(OwnedBytes&&) noexcept = default;
    OwnedBytes& operator=(OwnedBytes&&) noexcept = default;
    ~OwnedBytes() = default;
  };
  OwnedBytes owned_;
#endif
};

/// EarlyStoppingHook on an evaluation metric, as Keras' EarlyStopping(monitor="val_loss") with
/// validation data: `evaluate()` is called at each check (every options.every_n_iter runs,
/// after that run's update) and returns the metric named `Monitor` (any type convertible to
/// double); the training session fetches nothing for it. The rules, the log lines, restoring
/// the best weights and the checkpoint state are EarlyStoppingHook's. `evaluate` is stored by
/// value: capture what it reads (a graph bound for the validation batches, an input) by
/// reference. For example (docs/hooks.md):
///
///     auto val = bind(rows, loss);  // a second graph over the model's variables
///     auto hook = early_stopping_on_evaluation<"val_loss">(
///         [&] { val.feed<"x">(xs, rows); val.feed<"y">(ys, rows); return val.forward(); },
///         {.patience = 2, .restore_best_weights = true, .every_n_iter = steps_per_epoch});
///
/// Throws as EarlyStoppingHook's constructor; at a check, whatever `evaluate` throws.
template <fixed_string Monitor, Logger L = StderrLogger, class Evaluate>
EarlyStoppingHook<Monitor, L, Evaluate> early_stopping_on_evaluation(
    Evaluate evaluate, EarlyStoppingOptions options = {}, L logger = L{}) {
  return EarlyStoppingHook<Monitor, L, Evaluate>(std::move(evaluate), options, std::move(logger));
}

}  // namespace hookfuse
