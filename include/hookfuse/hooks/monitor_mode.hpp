// hookfuse/hooks/monitor_mode.hpp: MonitorMode, whether a monitored quantity improves by going
// down or up (Keras callbacks' mode = "auto" | "min" | "max").
#pragma once

#include <string_view>

namespace hookfuse {

/// min: lower is better (a loss); max: higher is better (an accuracy); automatic: max when the
/// monitored name contains "acc", min otherwise, as Keras' mode="auto".
enum class MonitorMode { automatic, min, max };

/// Whether `mode` means "higher is better" for the tensor named `monitor`.
constexpr bool maximizes(MonitorMode mode, std::string_view monitor) {
  if (mode == MonitorMode::automatic) return monitor.find("acc") != std::string_view::npos;
  return mode == MonitorMode::max;
}

}  // namespace hookfuse
