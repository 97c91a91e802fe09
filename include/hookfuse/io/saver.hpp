// hookfuse/io/saver.hpp: TensorFlow's checkpoint Saver (tf.compat.v1.train.Saver): saves a list
// of variables as `<save_path>-<global_step>`, keeps the directory's `checkpoint` state file in
// TF1's form, deletes old checkpoints (max_to_keep, keep_checkpoint_every_n_hours by TF1's
// rule), and restores. The session's default saver (DefaultSaver), as TF1's
// MonitoredTrainingSession makes a tf.compat.v1.train.Saver.
//
//     io::Saver saver(/*max_to_keep=*/2, /*keep_checkpoint_every_n_hours=*/10000.0);
//     io::Saver sharded(io::SaverOptions{.max_to_keep = 2, .sharded = true});
//     saver.restore_latest(vars, "run");            // after a restart: values, step, history
//     saver.save(vars, "run/model.ckpt", 100);      // run/model.ckpt-100.{index,data-...}
//
// Variables are given as descriptors (io/detail/checkpoint_vars.hpp: name, dtype, TensorFlow
// shape, data pointer), e.g. the session's CheckpointVariable list.
//
// Checked against tensorflow/python/training/saver.py (Saver.__init__'s _next_checkpoint_time,
// _RecordLastCheckpoint, _MaybeDeleteOldCheckpoints, save, recover_last_checkpoints) and
// checkpoint_management.py (update_checkpoint_state_internal, generate_checkpoint_state_proto):
//   - keep_checkpoint_every_n_hours = N: a checkpoint dropped from the max_to_keep window is
//     preserved iff its save time is strictly after next_checkpoint_time(), which starts at the
//     Saver's creation + N hours (read from its clock) and advances by N hours per preserved
//     checkpoint. Not stored in the state file: a restarted Saver counts from its creation.
//   - The state file: model_checkpoint_path and all_model_checkpoint_paths only (no timestamp
//     lines, no last_preserved_timestamp); paths absolute when save_path's directory is
//     absolute, relative to it when relative or with SaverOptions::save_relative_paths.
// tf.train.CheckpointManager's rule and form are io::CheckpointManager's
// (hookfuse/io/checkpoint_manager.hpp). The class itself: hookfuse/io/detail/basic_saver.hpp.
#pragma once

#include "hookfuse/io/detail/basic_saver.hpp"
#include "hookfuse/io/saver_options.hpp"  // io::SaverOptions

namespace hookfuse::io {

/// tf.compat.v1.train.Saver (BasicSaver<void>). A class template only so that its member
/// functions compile where they are used (docs/checkpoints.md, "Compile time").
using Saver = BasicSaver<void>;

}  // namespace hookfuse::io
