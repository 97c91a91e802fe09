// hookfuse/io/detail/checkpoint_path_errors.hpp: the messages for a path that is not a
// checkpoint prefix (a directory, one file of a checkpoint, a prefix with no files), each
// saying what to pass instead and where the directory's latest checkpoint is.
#pragma once

#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "hookfuse/errors.hpp"
#include "hookfuse/io/bundle_paths.hpp"
#include "hookfuse/io/checkpoint_state.hpp"
#include "hookfuse/io/errors.hpp"

namespace hookfuse::io::detail {

/// For errors about a path that is not a checkpoint: "; the latest checkpoint in D is P" when
/// the state file of directory `dir` names one whose files are all on disk (else the newest
/// listed that has them); empty when there is none or the state file cannot be read.
template <class = void>
[[nodiscard]] std::string latest_checkpoint_hint(const std::filesystem::path& dir) {
  try {
    const std::optional<CheckpointState> state = get_checkpoint_state(dir);
    if (!state) return {};
    const std::optional<std::filesystem::path> p = newest_present_checkpoint(*state, {});
    if (!p) return {};
    if (*p == state->model_checkpoint_path)
      return "; the latest checkpoint in " + dir.string() + " is " + p->string();
    return "; the newest checkpoint listed in " + (dir / kCheckpointStateFilename).string() +
           " whose files are all present is " + p->string();
  } catch (const std::exception&) {
    return {};
  }
}

/// Why `prefix` (absolute), which has no "P.index", is not a checkpoint: what was expected,
/// what is there, and where a checkpoint is instead.
template <class = void>
[[nodiscard]] std::string no_checkpoint_at(const std::filesystem::path& prefix) {
  std::error_code ec;
  if (std::filesystem::is_directory(prefix, ec))
    return prefix.string() +
           " is a directory, not a checkpoint prefix (load_checkpoint and latest_checkpoint "
           "resolve a directory through its state file)" +
           latest_checkpoint_hint(prefix);
  const std::filesystem::path data = data_filename(prefix);
  const bool has_data = std::filesystem::exists(data, ec);
  return "no TensorFlow V2 checkpoint with prefix " + prefix.string() + " (expected " +
         meta_filename(prefix).filename().string() + " and " + data.filename().string() +
         (has_data ? ", found only " + data.filename().string() : std::string(", found neither")) +
         ")" + latest_checkpoint_hint(parent_dir(prefix));
}

/// Throws when `path` (absolute) is one file of a checkpoint, "P.index" or
/// "P.data-NNNNN-of-NNNNN", rather than a prefix: DataLossError (what TensorFlow raises reading
/// such a file as a checkpoint: "not an sstable") saying "this is one file of the checkpoint
/// `P`; pass the prefix", NotFoundError when the file does not exist either. Does nothing for a
/// path that is a prefix ("<path>.index" exists) or does not look like a file of one.
template <class = void>
void check_not_a_checkpoint_file(const std::filesystem::path& path) {
  const std::optional<std::filesystem::path> prefix = prefix_of_checkpoint_file(path);
  if (!prefix) return;
  std::error_code ec;
  if (std::filesystem::exists(meta_filename(path), ec)) return;
  const bool exists = std::filesystem::exists(path, ec);
  const bool prefix_complete = !missing_checkpoint_file(*prefix);
  std::string msg = path.string() + ": this is one file of the checkpoint `" + prefix->string() +
                    "`; pass the prefix `" + prefix->string() +
                    "` (a checkpoint is read by its prefix, without .index or "
                    ".data-NNNNN-of-NNNNN, as TensorFlow's Saver.restore and "
                    "tf.train.load_checkpoint take it)";
  if (!exists) msg += "; " + path.filename().string() + " is not found either";
  if (!prefix_complete) msg += "; " + no_checkpoint_at(*prefix);
  if (exists) ::hookfuse::detail::fail<DataLossError>(msg);
  ::hookfuse::detail::fail<NotFoundError>(msg);
}

}  // namespace hookfuse::io::detail
