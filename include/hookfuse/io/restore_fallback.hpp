// hookfuse/io/restore_fallback.hpp: what a restore from a checkpoint directory does when the
// checkpoint its state file names has lost files or fails its checks.
#pragma once

namespace hookfuse::io {

/// What io::Saver::restore_latest (and so a MonitoredTrainingSession with a checkpoint_dir)
/// does when the newest checkpoint named by the directory's `checkpoint` state file cannot be
/// restored because of its files: one missing, an index that does not parse, a tensor whose
/// bytes fail their CRC32C.
///
/// `none` (the default, as TensorFlow's SessionManager, which restores the state file's
/// model_checkpoint_path and raises): an error naming the file at fault and the newest intact
/// checkpoint listed; nothing is restored and nothing on disk changes.
///
/// `newest_intact` (not in TensorFlow): the newest checkpoint listed whose files are all
/// present and pass every check is restored instead, with a WARNING line naming both and the
/// fault; the state file keeps listing every checkpoint. With none intact, the error of `none`.
enum class RestoreFallback { none, newest_intact };

}  // namespace hookfuse::io
