// hookfuse/io/checkpoint_manager.hpp: tf.train.CheckpointManager's retention rule and state-file
// form over the same API as io::Saver (save, restore, restore_latest,
// recover_last_checkpoints): a checkpoint dropped from the max_to_keep window is preserved iff
// its save time is at least keep_checkpoint_every_n_hours after the last preserved one (the
// manager's creation at first), and the state file lists paths relative to the directory, one
// all_model_checkpoint_timestamps line per path and last_preserved_timestamp, which a
// restarted manager takes over.
//
//     io::CheckpointManager manager(SaverOptions{.max_to_keep = 2});
//     manager.save(vars, "run/ckpt", 100);          // run/ckpt-100.{index,data-...}
//
// Checked against tensorflow/python/checkpoint/checkpoint_management.py (CheckpointManager's
// __init__, _sweep, _record_state, save). Unlike TensorFlow's, it saves a variable list (no
// tf.train.Checkpoint object) and the caller names the prefix and the step.
#pragma once

#include "hookfuse/io/detail/basic_saver.hpp"

namespace hookfuse::io {

/// tf.train.CheckpointManager's rules (BasicSaver<detail::CheckpointManagerRules>).
using CheckpointManager = BasicSaver<detail::CheckpointManagerRules>;

}  // namespace hookfuse::io
