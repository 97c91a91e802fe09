// hookfuse/estimator/run_config.hpp: RunConfig, an Estimator's directory, checkpoint, summary
// and logging settings (tf.estimator.RunConfig).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hookfuse/clock.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// tf.estimator.RunConfig's fields and defaults, set by name (`RunConfig{.model_dir = "d",
/// .save_checkpoints_steps = 100}`):
///   model_dir                       checkpoints, the training event file and eval/ go here.
///   tf_random_seed                  mixed into the seed of every random initializer a
///                                   model_fn's VariableStore runs without a seed of its own
///                                   (nn/variable_store.hpp); unset: seeds from names only.
///   save_summary_steps              the training SummarySaverHook's cadence (100; <= 0: none).
///   save_checkpoints_steps / _secs  the CheckpointSaverHook's cadence: every that many global
///                                   steps or seconds; neither given: every 600 s, as TF; both
///                                   given: ValueError when the Estimator is made (TF's
///                                   RunConfig raises it in its constructor).
///   keep_checkpoint_max             checkpoints kept (5; <= 0 keeps all).
///   keep_checkpoint_every_n_hours   also keep one checkpoint per that many hours (10000).
///   log_step_count_steps            the StepCounterHook's "global_step/sec" and the
///                                   "loss = ..., step = ..." line every that many steps (100).
///   clock, logger                   time source and log of every hook the Estimator installs
///                                   (tests inject a fake clock and a capturing logger).
template <Clock C = SteadyClock, Logger L = StderrLogger>
struct RunConfig {
  std::string model_dir{};
  std::optional<std::int64_t> tf_random_seed = std::nullopt;
  std::int64_t save_summary_steps = 100;
  std::optional<std::int64_t> save_checkpoints_steps = std::nullopt;
  std::optional<double> save_checkpoints_secs = std::nullopt;
  int keep_checkpoint_max = 5;
  double keep_checkpoint_every_n_hours = 10000.0;
  std::int64_t log_step_count_steps = 100;
  C clock = C{};
  L logger = L{};

  /// Throws ValueError for an empty model_dir and for both checkpoint cadences given (TF:
  /// "save_checkpoints_steps and save_checkpoints_secs cannot be both set.").
  void validate() const {
    if (model_dir.empty())
      detail::fail<ValueError>(
          "RunConfig: model_dir is empty; expected the directory the "
          "Estimator saves checkpoints and summaries in");
    if (save_checkpoints_steps && save_checkpoints_secs)
      detail::fail<ValueError>(
          "RunConfig: save_checkpoints_steps and save_checkpoints_secs cannot be both set.");
  }
  /// The checkpoint cadence in effect: (secs, steps), 600 s when neither is given.
  std::optional<double> checkpoint_secs() const {
    if (!save_checkpoints_steps && !save_checkpoints_secs) return 600.0;
    return save_checkpoints_secs;
  }
};

}  // namespace hookfuse
