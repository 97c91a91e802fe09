// hookfuse/io/saver_options.hpp: the options of io::Saver, TensorFlow's
// tf.compat.v1.train.Saver(max_to_keep, keep_checkpoint_every_n_hours, sharded,
// save_relative_paths). Also the options a session passes to the saver it makes
// (hookfuse::SaverOptions names this type). OS-free: the core includes it.
#pragma once

#include "hookfuse/io/restore_fallback.hpp"

namespace hookfuse::io {

/// TensorFlow's Saver(max_to_keep=5, keep_checkpoint_every_n_hours=10000.0). max_to_keep: how
/// many recent checkpoints are kept (0 or less keeps every file, as TF's None or 0).
/// keep_checkpoint_every_n_hours: hours; the first checkpoint saved strictly after each such
/// mark, counted from the Saver's creation, is kept as well. restore_fallback: what
/// restore_latest does when the newest checkpoint listed has lost files or fails its checks
/// (RestoreFallback: an error by default; newest_intact, not in TensorFlow, restores the newest
/// intact one). sharded: TensorFlow's Saver(sharded=True): each checkpoint is written as
/// num_shards data files "P.data-0000K-of-0000N" (at most one per variable), variable i in
/// shard i mod N, through TensorFlow's temporary "P_temp/part-..." bundles and their merge
/// (docs/checkpoints.md, "Sharded save"). save_relative_paths: TensorFlow's
/// Saver(save_relative_paths=True): the state file names checkpoints relative to its directory
/// even when the directory is given absolute (by default TF1's Saver writes them absolute then).
struct SaverOptions {
  int max_to_keep = 5;
  double keep_checkpoint_every_n_hours = 10000.0;
  RestoreFallback restore_fallback = RestoreFallback::none;
  bool sharded = false;
  int num_shards = 2;
  bool save_relative_paths = false;
};

}  // namespace hookfuse::io
