// hookfuse/hooks/checkpoint_saver.hpp: what a checkpoint saver is (the CheckpointSaver
// concept), the options a session gives the saver it makes, and the default saver type.
//
// CheckpointSaverHook and MonitoredTrainingSession write and read checkpoints only through a
// saver: any type with these two members (tf.compat.v1.train.Saver's save(), and the restore a
// TensorFlow chief session creator performs):
//
//   std::string save(VariableList vars, std::string_view save_path, std::int64_t global_step)
//       Writes every variable of `vars` (name, dtype, TensorFlow shape, values) as the checkpoint
//       `<save_path>-<global_step>` (save_path is "<checkpoint_dir>/<checkpoint_basename>",
//       "D/model.ckpt"), records it as the latest one in the directory's `checkpoint` state
//       file, applies its retention (max_to_keep), and returns the prefix it wrote,
//       "D/model.ckpt-100" (TF: Saver.save(sess, save_path, global_step) returning the path).
//       Errors are thrown (or go to detail::fail) with the path in the message.
//
//   std::optional<std::string> restore_latest(VariableList vars, std::string_view checkpoint_dir)
//       If `checkpoint_dir` has a `checkpoint` state file, writes the values of the checkpoint
//       it names (model_checkpoint_path) into every variable of `vars`, global_step included,
//       takes over the state file's list of checkpoints for its retention (TF:
//       Saver.recover_last_checkpoints), and returns the prefix restored; std::nullopt
//       (variables untouched) when there is no state file. A variable of `vars` missing from
//       the checkpoint, or stored with another dtype or shape, is an error naming it (TF:
//       NotFoundError / InvalidArgumentError from Saver.restore); so is one whose
//       CheckpointVariable::conflicting_key the checkpoint holds (an optimizer slot saved with
//       another meaning: a centered RMSProp checkpoint restored into a plain RMSProp). So is a
//       checkpoint whose files are missing or damaged: the error names the file and the newest
//       intact checkpoint listed, and nothing on disk changes; a run never starts over from
//       fresh variables because its checkpoint lost a file (io::Saver restores the newest
//       intact one instead only when asked: RestoreFallback::newest_intact).
//       (TF: SessionManager._restore_checkpoint, called by ChiefSessionCreator.) The session
//       logs TensorFlow's "Restoring parameters from <prefix>" with the prefix returned: the
//       saver need not. A saver that also has restore_latest(vars, checkpoint_dir, logger) is
//       called with the session's logger.
//
// Optionally, `void create_checkpoint_dir(std::string_view checkpoint_dir)`: creates the
// directory and its missing parents, an error naming it when it cannot (io::Saver has it).
// CheckpointSaverHook::begin() calls it, as TensorFlow's hook creates checkpoint_dir in begin();
// without it the directory must exist before the first save.
//
// `vars` is the session's variable list (checkpoint_variables(): every variable of the model,
// then "global_step"); a saver built for an explicit var_list may save only those. The list is
// valid for the call only (it points into the variables). The hook calls save() only on the
// steps where it fires, so a saver may allocate; it must not be called concurrently.
//
// A session that makes its saver itself (SessionOptions::saver empty) constructs it as
// `Saver(SaverOptions{.max_to_keep = ...})`. The default, io::Saver, is only declared here
// (DefaultSaver below).
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/io/restore_fallback.hpp"
#include "hookfuse/io/saver_options.hpp"

namespace hookfuse {

/// A checkpoint saver (see the file comment for the exact contract of each member).
template <class S>
concept CheckpointSaver = requires(S& saver, VariableList vars, std::string_view path,
                                   std::int64_t global_step) {
  { saver.save(vars, path, global_step) } -> std::convertible_to<std::string>;
  { saver.restore_latest(vars, path) } -> std::convertible_to<std::optional<std::string>>;
};

/// What a session tells a saver it makes: io::SaverOptions (hookfuse/io/saver_options.hpp),
/// TensorFlow's Saver(max_to_keep=5, keep_checkpoint_every_n_hours=10000.0, ...).
using SaverOptions = io::SaverOptions;

namespace io {
template <class>
class BasicSaver;  // hookfuse/io/saver.hpp
using Saver = BasicSaver<void>;
}  // namespace io

/// The saver a session makes when SessionOptions gives none: io::Saver, TensorFlow's
/// tf.compat.v1.train.Saver writing V2 checkpoints. Only declared here, so that the core does
/// not depend on LevelDB: `SessionOptions<>` (and `SessionOptions{...}` without `.saver`) needs
/// <hookfuse/io/saver.hpp>, which <hookfuse/hookfuse.hpp> includes in hosted, non-core builds.
/// Core-only and embedded builds give their own: SessionOptions<MySaver>{...}.
using DefaultSaver = io::Saver;

}  // namespace hookfuse
