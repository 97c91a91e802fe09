// hookfuse/hooks/monitor_mode.hpp: MonitorMode, whether a monitored quantity improves by going
// down or up (Keras callbacks' mode = "auto" | "min" | "max").
#pragma once

#include <string_view>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/check.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"

namespace hookfuse {

/// min: lower is better (a loss); max: higher is better (an accuracy); automatic: decided from
/// the monitored name by the hook's AutoRule, as Keras' mode="auto".
enum class MonitorMode { automatic, min, max };

/// How mode automatic reads the monitored name. tf-keras 2.15.0 (tf_keras/callbacks.py) has a
/// rule per callback, so each hook names the rule of its Keras counterpart.
enum class AutoRule {
  /// EarlyStopping: max when the name ends in "acc", "accuracy" or "auc" ("val_auc" is max,
  /// "acc_loss" is min).
  accuracy_or_auc_suffix,
  /// ReduceLROnPlateau: max when the name contains "acc" ("val_auc" is min).
  contains_acc,
};

/// Throws std::invalid_argument naming `who` unless `mode` is one of the three enumerators (a
/// value cast from an integer; Keras warns about an unknown mode and falls back to auto).
inline void check_monitor_mode(const char* who, MonitorMode mode) {
  const auto m = static_cast<int>(mode);
  detail::check_argument(m >= 0 && m <= 2, who, "mode", "automatic, min or max", m);
}

/// The value of a monitored tensor (EarlyStoppingHook, ReduceLROnPlateauHook): it must be a
/// scalar, [1, 1], as Keras' monitored metric; otherwise std::invalid_argument naming `who`.
inline double monitored_scalar(const char* who, const TensorValue& t) {
  if (t.rows != 1 || t.cols != 1)
    detail::fail<std::invalid_argument>(
        (detail::ErrorMessage() << who
                                << ": the monitored tensor must be a scalar ([1, 1]), as Keras' "
                                   "monitored metric")
            .str());
  return t.item();
}

/// Whether `mode` means "higher is better" for the tensor named `monitor`, mode automatic
/// deciding by `rule`.
constexpr bool maximizes(MonitorMode mode, std::string_view monitor, AutoRule rule) {
  if (mode != MonitorMode::automatic) return mode == MonitorMode::max;
  if (rule == AutoRule::contains_acc) return monitor.find("acc") != std::string_view::npos;
  return monitor.ends_with("acc") || monitor.ends_with("accuracy") || monitor.ends_with("auc");
}

}  // namespace hookfuse
