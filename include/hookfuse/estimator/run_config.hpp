// hookfuse/estimator/run_config.hpp: RunConfig, an Estimator's directory, checkpoint, summary,
// logging and replica settings (tf.estimator.RunConfig), and with_replicas, which fills the
// replica settings from a group of processes (a distributed::Communicator).
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
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
///   is_chief                        this process writes model_dir's files (true). false (a
///                                   data-parallel rank other than 0): train restores from
///                                   model_dir but writes no checkpoint or event file
///                                   (SessionOptions::is_chief), evaluate writes no eval dir.
///   num_worker_replicas             the processes training the model together (1; >= 1,
///                                   ValueError otherwise).
///   cross_replica_sum               replaces each float of its span by its sum over the
///                                   replicas, in place (an MPI_Allreduce with MPI_SUM);
///                                   evaluate sums the metrics' local variables with it, so every
///                                   replica reports the metrics of all the replicas' shards.
///                                   train ends with one sum of one float (a barrier after
///                                   the chief's last save). Empty (the default): each process
///                                   reports its own metrics, and no barrier.
///                                   with_replicas(config, comm) sets these three.
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
  bool is_chief = true;
  int num_worker_replicas = 1;
  std::function<void(std::span<float>)> cross_replica_sum{};
  C clock = C{};
  L logger = L{};

  /// Throws ValueError for an empty model_dir, for both checkpoint cadences given (TF:
  /// "save_checkpoints_steps and save_checkpoints_secs cannot be both set.") and for
  /// num_worker_replicas < 1.
  void validate() const {
    if (num_worker_replicas < 1)
      detail::fail<ValueError>("RunConfig: num_worker_replicas must be at least 1, got " +
                               std::to_string(num_worker_replicas));
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

/// A group of processes training one model: rank() in [0, size()), and allreduce_sum(span),
/// the element-wise sum over every process, in place (distributed::Communicator is one).
template <class G>
concept ReplicaGroup = requires(const G& g, std::span<float> values) {
  { g.rank() } -> std::convertible_to<int>;
  { g.size() } -> std::convertible_to<int>;
  g.allreduce_sum(values);
};

/// `config` with TensorFlow's chief notion taken from `group` (TF derives it from TF_CONFIG):
/// is_chief = (group.rank() == 0), num_worker_replicas = group.size(), cross_replica_sum =
/// group.allreduce_sum. The group is held by address: it must outlive every Estimator made
/// with the result. Usable from any layer that has the group (here, estimator/ names no MPI):
///
///     hd::Communicator comm;
///     hf::Estimator estimator(model_fn, hf::with_replicas(hf::RunConfig{.model_dir = d}, comm));
template <Clock C, Logger L, ReplicaGroup G>
RunConfig<C, L> with_replicas(RunConfig<C, L> config, const G& group) {
  config.is_chief = group.rank() == 0;
  config.num_worker_replicas = static_cast<int>(group.size());
  const G* g = &group;
  config.cross_replica_sum = [g](std::span<float> values) { g->allreduce_sum(values); };
  return config;
}

}  // namespace hookfuse
