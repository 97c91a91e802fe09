// hookfuse/estimator/detail/model_dir.hpp: what the Estimator reads of its model_dir before
// it builds a model: the directory check, the latest checkpoint's global step, and the one
// io::Saver its sessions share.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "hookfuse/errors.hpp"
#include "hookfuse/estimator/warm_start_settings.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/io/checkpoint_reader.hpp"
#include "hookfuse/io/checkpoint_state.hpp"
#include "hookfuse/io/saver.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse::detail {

/// io::Saver by address, so that the CheckpointSaverHook's saves and the session's restore go
/// through one saver (its checkpoint list recovered by the restore is the one saving extends).
struct SaverRef {
  using warm_start_type = WarmStartFrom;
  io::Saver* saver;
  std::string save(VariableList vars, std::string_view path, std::int64_t step) {
    return saver->save(vars, path, step);
  }
  std::optional<std::string> restore_latest(VariableList vars, std::string_view dir) {
    return saver->restore_latest(vars, dir);
  }
  void create_checkpoint_dir(std::string_view dir) { saver->create_checkpoint_dir(dir); }
  template <Logger Lg>
  std::optional<std::string> restore_latest(VariableList vars, std::string_view dir, Lg& logger) {
    return saver->restore_latest(vars, dir, logger);
  }
};

/// ValueError naming `model_dir` when it exists and is not a directory (TF's gfile would fail
/// later, deep in the first writer, with the OS error alone).
inline void check_model_dir(const std::string& model_dir, const char* who) {
  std::error_code ec;
  const auto st = std::filesystem::status(std::filesystem::path(model_dir), ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_directory(st))
    fail<ValueError>(std::string(who) + ": model_dir must be a directory, but " + model_dir +
                     " exists and is not one.");
}

/// The global step of model_dir's latest checkpoint, 0 when there is none (TF:
/// _load_global_step_from_checkpoint_dir).
inline std::int64_t checkpoint_global_step(const std::string& model_dir) {
  const auto latest = io::latest_checkpoint(std::filesystem::path(model_dir));
  if (!latest) return 0;
  const io::CheckpointReader reader(*latest);
  if (!reader.has_tensor("global_step")) return 0;
  const auto v = reader.get_tensor<std::int64_t>("global_step");
  return v.empty() ? 0 : v[0];
}

}  // namespace hookfuse::detail
