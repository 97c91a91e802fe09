// hookfuse/io/checkpoint_state.hpp: TensorFlow's `checkpoint` state file, the text-format
// CheckpointState that names a directory's checkpoints (tensorflow/python/training/
// checkpoint_state.proto, checkpoint_management.py).
//
//     model_checkpoint_path: "model.ckpt-120"
//     all_model_checkpoint_paths: "model.ckpt-100"
//     all_model_checkpoint_paths: "model.ckpt-120"
//     all_model_checkpoint_timestamps: 1700000000.5
//     all_model_checkpoint_timestamps: 1700000100.25
//     last_preserved_timestamp: 1699999999.0
//
// Paths are checkpoint prefixes (no `.index`), oldest first in insertion order, the newest
// last and equal to model_checkpoint_path. A prefix inside the directory is written relative to
// it, so the directory can be moved, or absolute (TF1's Saver with an absolute directory);
// others are written absolute. Readers accept both, with or without timestamp lines. Timestamps are
// seconds since the Unix epoch (what Python's time.time() returns). The functions mirror
// TensorFlow's `tf.train.get_checkpoint_state`, `update_checkpoint_state_internal`
// (save_relative_paths=True by default, as tf.train.CheckpointManager writes; false as TF1's Saver)
// and `tf.train.latest_checkpoint` (which raises where TensorFlow's returns None for a checkpoint
// that lost its files).
#pragma once

#include <unistd.h>  // read

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/atomic_file.hpp"
#include "hookfuse/io/bundle_paths.hpp"
#include "hookfuse/io/detail/posix_file.hpp"
#include "hookfuse/io/detail/text_format.hpp"
#include "hookfuse/io/errors.hpp"

namespace hookfuse::io {

/// TensorFlow's CheckpointState message. Field names, order and meaning as in
/// checkpoint_state.proto; a timestamp of 0 means unset (proto3), as there.
struct CheckpointState {
  std::string model_checkpoint_path;
  std::vector<std::string> all_model_checkpoint_paths;
  std::vector<double> all_model_checkpoint_timestamps;  // seconds since the epoch
  double last_preserved_timestamp = 0.0;                // seconds since the epoch

  bool operator==(const CheckpointState&) const = default;
};

/// The state file's default name in a checkpoint directory (TensorFlow's `latest_filename`).
inline constexpr std::string_view kCheckpointStateFilename = "checkpoint";

/// A state file larger than this (bytes) is rejected unread: real ones hold a few lines per
/// checkpoint kept.
inline constexpr std::uintmax_t kMaxCheckpointStateBytes = 16u << 20;

/// The state as text, byte for byte what TensorFlow's `text_format.MessageToString` prints:
/// one `name: value` line per field value, in field-number order; strings double-quoted and
/// C-escaped; doubles as Python's repr (1700000000.5, 1700000200.0, 1e+16); fields at their
/// proto3 default (empty path, zero last_preserved_timestamp) omitted.
template <class = void>
[[nodiscard]] std::string format_checkpoint_state(const CheckpointState& state) {
  std::string out;
  auto string_field = [&](std::string_view name, std::string_view value) {
    out += name;
    out += ": \"";
    detail::append_c_escaped(out, value);
    out += "\"\n";
  };
  auto double_field = [&](std::string_view name, double value) {
    out += name;
    out += ": ";
    detail::append_python_repr(out, value);
    out += '\n';
  };
  if (!state.model_checkpoint_path.empty())
    string_field("model_checkpoint_path", state.model_checkpoint_path);
  for (const std::string& p : state.all_model_checkpoint_paths)
    string_field("all_model_checkpoint_paths", p);
  for (const double t : state.all_model_checkpoint_timestamps)
    double_field("all_model_checkpoint_timestamps", t);
  if (state.last_preserved_timestamp != 0.0)
    double_field("last_preserved_timestamp", state.last_preserved_timestamp);
  return out;
}

/// Parses state-file text as `text_format.Merge` does (see detail/text_format.hpp for the
/// syntax accepted; a singular field given twice keeps the last value). Paths are returned as
/// written. Throws DataLossError "<file>:<line>:<column>: ..." naming the field for a syntax
/// error, an unterminated string, a bad number, or a field CheckpointState does not have
/// (TensorFlow's parser rejects unknown fields too). `file` only names the input in errors.
template <class = void>
[[nodiscard]] CheckpointState parse_checkpoint_state(std::string_view text,
                                                     const std::string& file) {
  CheckpointState state;
  detail::TextFormatScanner in(text, file);
  while (!in.at_end()) {
    const std::size_t field_at = in.position();
    const std::string_view name = in.identifier();
    const bool is_path = name == "all_model_checkpoint_paths";
    const bool is_time = name == "all_model_checkpoint_timestamps";
    const bool repeated = is_path || is_time;
    if (!repeated && name != "model_checkpoint_path" && name != "last_preserved_timestamp")
      in.error_at(field_at, "Message type \"tensorflow.CheckpointState\" has no field named \"" +
                                std::string(name) + "\"");
    if (!in.consume(':'))
      in.error_at(in.position(), "field \"" + std::string(name) + "\": expected ':', found " +
                                     in.describe_next(in.position()));
    auto one_value = [&] {
      if (name == "model_checkpoint_path")
        state.model_checkpoint_path = in.string_value(name);
      else if (is_path)
        state.all_model_checkpoint_paths.push_back(in.string_value(name));
      else if (is_time)
        state.all_model_checkpoint_timestamps.push_back(in.double_value(name));
      else
        state.last_preserved_timestamp = in.double_value(name);
    };
    if (in.peek_is('[')) {
      if (!repeated)
        in.error_at(in.position(), "field \"" + std::string(name) +
                                       "\" is not repeated; a list [...] is not allowed");
      in.consume('[');
      if (!in.consume(']')) {
        do one_value();
        while (in.consume(','));
        if (!in.consume(']'))
          in.error_at(in.position(), "field \"" + std::string(name) +
                                         "\": expected ',' or ']', found " +
                                         in.describe_next(in.position()));
      }
    } else {
      one_value();
    }
    if (!in.consume(',')) in.consume(';');
  }
  return state;
}

namespace detail {

/// `p` as the state file stores it: relative to `dir` when it lies inside it (lexically),
/// otherwise absolute. Both are file-system paths (absolute, or relative to the working
/// directory).
template <class = void>
std::string state_file_path(const std::filesystem::path& p, const std::filesystem::path& dir) {
  const std::filesystem::path abs_p = std::filesystem::absolute(p).lexically_normal();
  const std::filesystem::path abs_dir = std::filesystem::absolute(dir).lexically_normal();
  const std::filesystem::path rel = abs_p.lexically_relative(abs_dir);
  if (!rel.empty() && rel != "." && *rel.begin() != "..") return rel.generic_string();
  return abs_p.generic_string();
}

/// Reads a whole state file of at most kMaxCheckpointStateBytes; nullopt if it does not exist.
template <class = void>
std::optional<std::string> read_state_file(const std::filesystem::path& file) {
  // stat() before open() and O_NONBLOCK (open_read_only): a FIFO, directory or device is
  // refused with an IoError naming what it is, never waited on.
  int err = 0;
  const Fd fd = open_read_only(file, err);
  if (!fd) {
    if (err == ENOENT || err == ENOTDIR) return std::nullopt;  // as std::filesystem's not_found
    fail_os("cannot open", file, err);
  }
  std::string text;
  char chunk[16384];
  for (;;) {  // in pieces, so that neither a huge file nor a growing one is read past the cap
    const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_os("cannot read", file, errno);
    }
    if (n == 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    if (text.size() > kMaxCheckpointStateBytes)
      ::hookfuse::detail::fail<DataLossError>(file.string() + ": larger than " +
                                              std::to_string(kMaxCheckpointStateBytes) +
                                              " bytes, not a checkpoint state file");
  }
  return text;
}

}  // namespace detail

/// The state of `checkpoint_dir` (TensorFlow's `tf.train.get_checkpoint_state`), with relative
/// paths joined to the directory (`checkpoint_dir / path`), as TensorFlow returns them; nullopt
/// when the state file does not exist. Throws DataLossError naming the file, line and field for
/// a malformed file or one without model_checkpoint_path, IoError when it cannot be read.
/// TensorFlow logs and ignores an unparsable file instead; here it is an error, so that a
/// damaged directory is not silently restarted from scratch.
template <class = void>
[[nodiscard]] std::optional<CheckpointState> get_checkpoint_state(
    const std::filesystem::path& checkpoint_dir,
    std::string_view latest_filename = kCheckpointStateFilename) {
  const std::filesystem::path file = checkpoint_dir / latest_filename;
  const std::optional<std::string> text = detail::read_state_file(file);
  if (!text) return std::nullopt;
  CheckpointState state = parse_checkpoint_state(*text, file.string());
  if (state.model_checkpoint_path.empty())
    ::hookfuse::detail::fail<DataLossError>("Invalid checkpoint state loaded from " +
                                            checkpoint_dir.string() + ": " + file.string() +
                                            " has no model_checkpoint_path");
  auto join = [&](std::string& p) {
    if (!std::filesystem::path(p).is_absolute()) p = (checkpoint_dir / p).string();
  };
  join(state.model_checkpoint_path);
  for (std::string& p : state.all_model_checkpoint_paths) join(p);
  return state;
}

/// Writes `save_dir`'s state file crash-safely (write_file_atomically), as TensorFlow's
/// `update_checkpoint_state_internal(save_dir, model_checkpoint_path,
/// all_model_checkpoint_paths, latest_filename, save_relative_paths,
/// all_model_checkpoint_timestamps, last_preserved_timestamp)` (checkpoint_management.py):
/// paths are file-system paths (absolute or relative to the working directory). With
/// save_relative_paths (the default here, as tf.train.CheckpointManager writes), those inside
/// `save_dir` are stored relative to it, others absolute. Without it (TF1's Saver), absolute
/// paths are stored absolute (lexically normal), relative ones relative to `save_dir` as with
/// it. `model_checkpoint_path` is appended to the list when it is not already its last entry;
/// timestamps are seconds since the epoch, either none or one per path (after that append).
///
/// Throws hookfuse::ValueError for an empty model_checkpoint_path or a timestamp count that
/// does not match, hookfuse::RuntimeError when model_checkpoint_path is the state file itself,
/// IoError (naming the file and the system's reason) when it cannot be written; the previous
/// state file is then untouched.
template <class = void>
void update_checkpoint_state(const std::filesystem::path& save_dir,
                             const std::filesystem::path& model_checkpoint_path,
                             std::span<const std::filesystem::path> all_model_checkpoint_paths = {},
                             std::span<const double> all_model_checkpoint_timestamps = {},
                             double last_preserved_timestamp = 0.0,
                             std::string_view latest_filename = kCheckpointStateFilename,
                             bool save_relative_paths = true) {
  if (model_checkpoint_path.empty())
    ::hookfuse::detail::fail<ValueError>("update_checkpoint_state: model_checkpoint_path is empty");
  const std::filesystem::path file = save_dir / latest_filename;
  CheckpointState state;
  auto stored = [&](const std::filesystem::path& p) {
    if (!save_relative_paths && p.is_absolute()) return p.lexically_normal().generic_string();
    return detail::state_file_path(p, save_dir);
  };
  state.model_checkpoint_path = stored(model_checkpoint_path);
  for (const std::filesystem::path& p : all_model_checkpoint_paths)
    state.all_model_checkpoint_paths.push_back(stored(p));
  if (state.all_model_checkpoint_paths.empty() ||
      state.all_model_checkpoint_paths.back() != state.model_checkpoint_path)
    state.all_model_checkpoint_paths.push_back(state.model_checkpoint_path);
  if (!all_model_checkpoint_timestamps.empty() &&
      all_model_checkpoint_timestamps.size() != state.all_model_checkpoint_paths.size())
    ::hookfuse::detail::fail<ValueError>(
        "Checkpoint timestamps, if provided, must match checkpoint paths (got " +
        std::to_string(state.all_model_checkpoint_paths.size()) + " paths and " +
        std::to_string(all_model_checkpoint_timestamps.size()) + " timestamps) for " +
        file.string());
  state.all_model_checkpoint_timestamps.assign(all_model_checkpoint_timestamps.begin(),
                                               all_model_checkpoint_timestamps.end());
  state.last_preserved_timestamp = last_preserved_timestamp;
  if (std::filesystem::absolute(file).lexically_normal() ==
      std::filesystem::absolute(model_checkpoint_path).lexically_normal())
    ::hookfuse::detail::fail<RuntimeError>("Save path '" + model_checkpoint_path.string() +
                                           "' conflicts with path used for checkpoint state. "
                                           "Please use a different save path.");
  write_file_atomically(file, format_checkpoint_state(state));
}

namespace detail {

/// The newest checkpoint `state` lists whose files are all on disk (missing_checkpoint_file),
/// model_checkpoint_path first, then the list from its newest entry to its oldest, skipping
/// `skip`; nullopt when there is none. Only looks for the files.
template <class = void>
[[nodiscard]] std::optional<std::filesystem::path> newest_present_checkpoint(
    const CheckpointState& state, const std::filesystem::path& skip) {
  auto usable = [&](const std::string& p) {
    return std::filesystem::path(p) != skip && !missing_checkpoint_file(p);
  };
  if (usable(state.model_checkpoint_path)) return state.model_checkpoint_path;
  const auto& all = state.all_model_checkpoint_paths;
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (usable(*it)) return *it;
  return std::nullopt;
}

}  // namespace detail

/// The newest checkpoint prefix of `checkpoint_dir` (TensorFlow's `tf.train.latest_checkpoint`):
/// the state file's model_checkpoint_path joined to the directory. nullopt when there is no
/// state file.
///
/// When the state file names a checkpoint whose files are not all on disk (`<prefix>.index`,
/// or a data file), TensorFlow logs "Couldn't match files for checkpoint" and returns None, and
/// a caller that then initialises from scratch starts the run over. Here it is an
/// io::NotFoundError naming the state file, the checkpoint, the missing file, and the newest
/// listed checkpoint whose files are all present. Only the files' presence is checked, not
/// their contents. Other errors as get_checkpoint_state.
template <class = void>
[[nodiscard]] std::optional<std::filesystem::path> latest_checkpoint(
    const std::filesystem::path& checkpoint_dir,
    std::string_view latest_filename = kCheckpointStateFilename) {
  const std::optional<CheckpointState> state =
      get_checkpoint_state(checkpoint_dir, latest_filename);
  if (!state) return std::nullopt;
  std::filesystem::path prefix = state->model_checkpoint_path;
  if (const auto missing = detail::missing_checkpoint_file(prefix)) {
    const auto other = detail::newest_present_checkpoint(*state, prefix);
    ::hookfuse::detail::fail<NotFoundError>(
        (checkpoint_dir / latest_filename).string() + " names " + prefix.string() +
        " as the latest checkpoint, but " + missing->string() + " is not found (a checkpoint is " +
        meta_filename(prefix).filename().string() + " and its data files). " +
        (other ? "The newest listed checkpoint whose files are all present is " + other->string() +
                     " (Saver's restore_fallback = newest_intact restores it)."
               : std::string("No other listed checkpoint has all its files.")));
  }
  return prefix;
}

}  // namespace hookfuse::io
