// hookfuse/hooks/variable_initialization_hook.hpp: VariableInitializationHook, a warm start as a
// hook: init_from_checkpoint on the session's variables once the session is created.
//
// TensorFlow has no hook of this name (the name is the seed program's): TF1 code calls
// tf.compat.v1.train.init_from_checkpoint while building the graph, and Estimator does the same
// for warm_start_from. SessionOptions::warm_start_from is that path in hookfuse; this hook is
// for sessions whose hook list is assembled elsewhere. Hosted builds only (hookfuse/io).
//
// Order: begin() resolves the checkpoint (a directory's latest), so that a missing one fails
// before the session is created and before anything is saved, as TF's call in begin() does. The
// values are set in after_create_session, which runs in hook order after the session's
// restore. So that "the restore wins", it does nothing (and logs so) when the session restored
// a checkpoint of its checkpoint_dir (session.restored_from_checkpoint()). The CheckpointSaverHook saves at
// creation in its own after_create_session: pass this hook in chief_only_hooks(...) (they run
// before the saver hook) so that the first checkpoint already holds the warm-started values;
// as a user hook, model.ckpt-0 holds the values from before the warm start.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/io/init_from_checkpoint.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// Sets the session's variables from another checkpoint in after_create_session, as
/// io::init_from_checkpoint(ckpt_dir_or_prefix, assignment_map, model variables) (global_step
/// excluded, as SessionOptions::warm_start_from) with its
/// INFO lines ("Initialize variable new/w from checkpoint D with old/w") through `logger`;
/// nothing but an INFO line when the session restored its own checkpoint. Errors
/// (io::init_from_checkpoint's: hookfuse::ValueError for a missing name, a dtype or shape
/// mismatch, a bad scope mapping; io::NotFoundError for a directory without a checkpoint or a
/// prefix without an index file, from begin(), before the session is created) are thrown from
/// the session's constructor, before any variable is written and before any step.
template <Logger L = StderrLogger>
class VariableInitializationHook {
 public:
  explicit VariableInitializationHook(std::string ckpt_dir_or_prefix,
                                      io::AssignmentMap assignment_map = {{"/", "/"}},
                                      L logger = L{})
      : original_(ckpt_dir_or_prefix),
        warm_start_{std::move(ckpt_dir_or_prefix), std::move(assignment_map)},
        logger_(std::move(logger)) {}

  /// Resolves the checkpoint: a directory's latest, or the prefix given, whose index file must
  /// exist. io::NotFoundError naming the directory or the prefix otherwise.
  void begin() {
    const std::filesystem::path prefix = io::detail::resolve_checkpoint(original_);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(io::meta_filename(prefix), ec))
      detail::fail<io::NotFoundError>("VariableInitializationHook: no checkpoint at " +
                                      prefix.string() + " (no file " +
                                      io::meta_filename(prefix).string() +
                                      "); pass a checkpoint prefix or a directory that holds one");
    warm_start_.ckpt_dir_or_prefix = prefix.string();
  }

  template <class Session>
  void after_create_session(Session& session) {
    if (session.restored_from_checkpoint()) {
      logger_.log(Severity::info, "VariableInitializationHook: the session restored its own "
                                  "checkpoint, so the warm start from " +
                                      original_ + " is skipped.");
      return;
    }
    const auto vars = session.variables();
    result_ = warm_start_.apply(
        detail::warm_start_variables(VariableList(vars.data(), vars.size())), logger_);
  }

  /// What was loaded (prefix and variables); empty before the session or after a restore.
  const std::optional<io::InitFromCheckpointResult>& result() const { return result_; }

 private:
  std::string original_;  // as given: a directory or a prefix
  io::WarmStart warm_start_;
  L logger_;
  std::optional<io::InitFromCheckpointResult> result_;
};

}  // namespace hookfuse
