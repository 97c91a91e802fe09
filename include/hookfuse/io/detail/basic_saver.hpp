// hookfuse/io/detail/basic_saver.hpp: the saver both io::Saver (hookfuse/io/saver.hpp,
// tf.compat.v1.train.Saver) and io::CheckpointManager (hookfuse/io/checkpoint_manager.hpp,
// tf.train.CheckpointManager) are: it saves a list of variables as `<save_path>-<global_step>`,
// keeps the directory's `checkpoint` state file, deletes old checkpoints and restores. The two
// differ only in their keep_checkpoint_every_n_hours rule and the form of the state file they
// write (BasicSaver's `Rules`); include the public header of the one you use.
//
// Crash safety of one save(): both bundle files are written under temporary names, fsync'd and
// renamed into place (BundleWriter), then the state file is replaced atomically
// (update_checkpoint_state), then the checkpoints retention drops are deleted and the state
// file written again without them (tf.train.CheckpointManager's order, for both rules). A
// process killed at any instant leaves the state file naming a complete checkpoint (the
// previous one, or the new one). Re-saving an existing prefix with the same contents (what a
// restarted session does with the step it restored) leaves its files alone; with other contents
// the files are replaced, and the state file first names the previous checkpoint when there is
// one: only replacing the one checkpoint listed, with other values, has an instant without it.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/bundle_paths.hpp"
#include "hookfuse/io/bundle_reader.hpp"
#include "hookfuse/io/bundle_writer.hpp"
#include "hookfuse/io/checkpoint_state.hpp"
#include "hookfuse/io/detail/checkpoint_vars.hpp"
#include "hookfuse/io/detail/saver_files.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/init_from_checkpoint.hpp"
#include "hookfuse/io/restore_fallback.hpp"
#include "hookfuse/io/saver_options.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse::io {
namespace detail {

/// BasicSaver's `Rules` for tf.train.CheckpointManager's retention rule and state-file form
/// (io::CheckpointManager). `void`, the other value, is tf.compat.v1.train.Saver's (io::Saver).
struct CheckpointManagerRules {};

}  // namespace detail

/// A checkpoint saver over the V2 format: `Rules` = void is tf.compat.v1.train.Saver
/// (io::Saver), detail::CheckpointManagerRules is tf.train.CheckpointManager
/// (io::CheckpointManager). Not thread-safe: one save or restore at a time.
///
/// Retention: the saver remembers the checkpoints it wrote (or took over from a state file),
/// oldest first in the order saved, each with the time it was saved. After each save, while
/// more than max_to_keep are remembered the oldest is dropped: its files are deleted, unless
/// keep_checkpoint_every_n_hours (N) preserves it, in which case it stays on disk forever but
/// is no longer listed. Which dropped checkpoints are preserved:
///   - Saver (saver.py, Saver._MaybeDeleteOldCheckpoints): one whose time is strictly after
///     next_checkpoint_time(), which starts at the saver's creation + N hours and advances by N
///     hours (from its previous value, not from the checkpoint's time) at each one preserved.
///     Nothing of it is stored: a restarted saver counts from its own creation.
///   - CheckpointManager (checkpoint_management.py, CheckpointManager._sweep): one whose time is
///     at least N hours after last_preserved_timestamp() (the manager's creation at first), which
///     becomes that checkpoint's time. The state file carries it, so it survives restarts.
/// max_to_keep <= 0 keeps every file and lists only the newest. Saving a prefix already
/// remembered moves it to the end of the list.
///
/// The state file (hookfuse/io/checkpoint_state.hpp):
///   - Saver (checkpoint_management.py, update_checkpoint_state_internal as Saver.save calls
///     it): paths only, no timestamp lines; absolute when the save directory is given absolute,
///     relative to it when it is given relative or with save_relative_paths = true.
///   - CheckpointManager: paths relative to the directory, one timestamp per path and
///     last_preserved_timestamp.
template <class Rules = void>
class BasicSaver {
  static constexpr bool kManager = std::is_same_v<Rules, detail::CheckpointManagerRules>;

 public:
  /// The wall clock, seconds since the Unix epoch (default: the system clock). Tests inject
  /// a fake one.
  using WallClock = std::function<double()>;
  /// What SessionOptions<Saver>::warm_start_from holds for this saver (a checkpoint and an
  /// assignment map, applied with init_from_checkpoint).
  using warm_start_type = WarmStart;

  /// max_to_keep = 5, keep_checkpoint_every_n_hours = 10000 (TensorFlow's defaults).
  BasicSaver() : BasicSaver(5, 10000.0) {}

  /// From any options struct with `max_to_keep` and `keep_checkpoint_every_n_hours` (the
  /// session's SaverOptions), and `restore_fallback` (RestoreFallback), `sharded`,
  /// `num_shards` and `save_relative_paths` (TF1 Saver's; ignored by the CheckpointManager,
  /// which always writes relative paths) if it has them. Throws hookfuse::ValueError when
  /// sharded is set with num_shards < 1, and as the constructor below.
  template <class Options>
  requires requires(const Options& o) {
    static_cast<int>(o.max_to_keep);
    static_cast<double>(o.keep_checkpoint_every_n_hours);
  }
  explicit BasicSaver(const Options& options, WallClock clock = {})
      : BasicSaver(static_cast<int>(options.max_to_keep),
                   static_cast<double>(options.keep_checkpoint_every_n_hours), std::move(clock)) {
    if constexpr (requires { RestoreFallback{options.restore_fallback}; })
      restore_fallback_ = options.restore_fallback;
    if constexpr (requires { static_cast<bool>(options.sharded); })
      sharded_ = static_cast<bool>(options.sharded);
    if constexpr (requires { static_cast<int>(options.num_shards); })
      num_shards_ = static_cast<int>(options.num_shards);
    if constexpr (requires { static_cast<bool>(options.save_relative_paths); })
      save_relative_paths_ = static_cast<bool>(options.save_relative_paths);
    if (sharded_ && num_shards_ < 1)
      ::hookfuse::detail::fail<ValueError>(
          "Saver: num_shards must be >= 1 with sharded = true, got " + std::to_string(num_shards_));
  }

  /// `clock` is read once here: the saver's creation time, from which keep_checkpoint_every_n_hours
  /// counts. Throws hookfuse::ValueError when keep_checkpoint_every_n_hours is not positive.
  BasicSaver(int max_to_keep, double keep_checkpoint_every_n_hours, WallClock clock = {})
      : max_to_keep_(max_to_keep),
        keep_every_n_hours_(keep_checkpoint_every_n_hours),
        clock_(clock ? std::move(clock) : WallClock(detail::unix_time_seconds<>)) {
    if (!(keep_every_n_hours_ > 0.0))
      ::hookfuse::detail::fail<ValueError>(
          "Saver: keep_checkpoint_every_n_hours must be positive, got " +
          std::to_string(keep_every_n_hours_));
    last_preserved_ = clock_();
    next_checkpoint_time_ = last_preserved_ + keep_every_n_hours_ * 3600.0;
  }

  /// Creates the directory `dir` and its missing parents (nothing when it exists): what
  /// CheckpointSaverHook::begin() asks of its saver, as TensorFlow's hook creates checkpoint_dir
  /// in begin(). Throws io::IoError naming `dir` when it cannot be created or is not a directory
  /// (a path under a regular file, say).
  void create_checkpoint_dir(std::string_view dir) {
    const std::filesystem::path path(dir);
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec || !std::filesystem::is_directory(path, ec))
      ::hookfuse::detail::fail<IoError>("Saver: cannot create checkpoint_dir " + path.string() +
                                        ": " +
                                        (ec ? ec.message() : std::string("not a directory")));
  }

  /// Saves every variable of `vars` as checkpoint `<save_path>-<global_step>` (save_path is
  /// "<dir>/<basename>", e.g. "run/model.ckpt"; the directory must exist), records it as the
  /// newest in `<dir>/checkpoint` (written last, after both bundle files are in place), applies
  /// retention, and returns the prefix "run/model.ckpt-100" (TF: Saver.save(sess, save_path,
  /// global_step)). The first save into a directory also removes temporaries a killed process
  /// left there. Throws hookfuse::ValueError for a bad variable list (before writing anything),
  /// io::IoError naming the path when a file cannot be written (the previous checkpoints and
  /// state file are then untouched). With SaverOptions::sharded the checkpoint is written in
  /// shards through "<prefix>_temp/" and merged (detail::save_sharded): the state file names
  /// it only after the merged index is in place.
  template <class Vars>
  std::string save(const Vars& vars, std::string_view save_path, std::int64_t global_step) {
    std::string prefix = std::string(save_path) + "-" + std::to_string(global_step);
    const std::filesystem::path abs = detail::canonical_prefix(prefix);
    const std::filesystem::path dir = abs.parent_path();
    const auto views = detail::view_variables(vars, "Saver.save(" + prefix + ")");
    if (!std::filesystem::is_directory(dir))
      ::hookfuse::detail::fail<IoError>("Saver.save: parent directory of " + prefix +
                                        " doesn't exist, can't save (" + dir.string() + ")");
    if (cleaned_dirs_.insert(dir).second)
      detail::remove_stale_files(dir, std::filesystem::path(save_path).filename().string(),
                                 kCheckpointStateFilename);
    // TF1's Saver writes the paths as given: a directory given absolute, absolute paths.
    absolute_paths_ =
        !kManager && !save_relative_paths_ && std::filesystem::path(prefix).is_absolute();
    if (!detail::bundle_holds(abs, views)) {
      step_back_before_replacing(abs, dir);
      if (sharded_) {
        detail::save_sharded(abs, views, num_shards_);
      } else {
        detail::write_bundle(abs, views);
      }
    }

    const double now = clock_();
    std::erase_if(last_, [&](const Kept& k) { return k.prefix == abs; });
    last_.push_back({abs, now});
    if (max_to_keep_ <= 0) {
      last_.erase(last_.begin(), last_.end() - 1);  // lists only the newest; deletes nothing
      write_state(dir);
      return prefix;
    }
    // As tf.train.CheckpointManager, for both rules: the state file first names the new
    // checkpoint with the ones about to go still listed, then they go, then it is written again
    // without them. A kill in between leaves them listed, so the next process's retention
    // deletes them: no checkpoint is ever left on disk unlisted by accident. (TF1's Saver
    // writes the file once, already without them, then deletes: the same final file.)
    write_state(dir);
    if (last_.size() <= static_cast<std::size_t>(max_to_keep_)) return prefix;
    std::vector<std::filesystem::path> to_delete;
    while (last_.size() > static_cast<std::size_t>(max_to_keep_)) {
      const Kept dropped = last_.front();
      last_.erase(last_.begin());
      if constexpr (kManager) {
        if (dropped.timestamp - keep_every_n_hours_ * 3600.0 >= last_preserved_) {
          last_preserved_ = dropped.timestamp;  // preserved on disk, no longer listed
          continue;
        }
      } else {
        if (dropped.timestamp > next_checkpoint_time_) {
          next_checkpoint_time_ += keep_every_n_hours_ * 3600.0;  // preserved, no longer listed
          continue;
        }
      }
      to_delete.push_back(dropped.prefix);
    }
    for (const auto& p : to_delete) detail::remove_checkpoint_files(p);
    write_state(dir);
    return prefix;
  }

  /// Restores every variable of `vars` from checkpoint `prefix` (TF: Saver.restore(sess,
  /// save_path)). Each must be in the checkpoint under its name with the same dtype and
  /// TensorFlow shape (except an `optional` descriptor, CheckpointVariable::optional: skipped
  /// when the checkpoint lacks its name), and the checkpoint must not hold its
  /// `conflicting_key` (CheckpointVariable::conflicting_key); all are checked, then every
  /// tensor is read and its CRC checked, and only then are the variables written: on any error
  /// none is. Throws hookfuse::ValueError "The passed save_path is not a valid checkpoint: P"
  /// when there is no `P.index` (TensorFlow's), naming the files expected and found and the
  /// latest checkpoint of P's directory; io::DataLossError when `prefix` is one file of a
  /// checkpoint ("P.index", "P.data-00000-of-00001"), naming the prefix to pass;
  /// io::NotFoundError for a missing data file holding a tensor restored (a shard holding
  /// none of them is not opened, as in TensorFlow) or when only names are missing;
  /// hookfuse::ValueError for a dtype or shape mismatch, a conflicting key present, or a bad
  /// variable list, each naming the variables, both dtypes and shapes, and the index file;
  /// io::DataLossError for a corrupt checkpoint.
  template <class Vars>
  void restore(const Vars& vars, std::string_view prefix) const {
    const std::string where = "Saver.restore(" + std::string(prefix) + ")";
    const auto views = detail::view_variables(vars, where);
    detail::check_restore_path(std::filesystem::path(prefix));
    const BundleReader reader{std::filesystem::path(prefix)};
    std::vector<detail::TensorAssignment> plan;
    plan.reserve(views.size());
    for (const detail::VarView& v : views)
      if (!v.optional || reader.contains(v.name)) plan.push_back({&v, std::string(v.name)});
    detail::read_all_or_nothing(reader, plan, where);
  }

  /// Restores `vars` from the checkpoint `checkpoint_dir`'s state file names
  /// (model_checkpoint_path), takes over the state file's checkpoint list
  /// (recover_last_checkpoints) and returns the prefix restored
  /// ("<checkpoint_dir>/model.ckpt-120"); std::nullopt, variables and list untouched, when
  /// there is no state file. TF: SessionManager._restore_checkpoint, which restores
  /// get_checkpoint_state(dir).model_checkpoint_path, then Saver.recover_last_checkpoints.
  ///
  /// When that checkpoint's files are missing or fail their checks (checked by reading them,
  /// after restore() failed), the error has TensorFlow's kind for the fault (ValueError for a
  /// missing P.index, io::NotFoundError for a missing data file, io::DataLossError for damaged
  /// bytes, io::IoError for an unreadable file) and names the state file, the checkpoint, the
  /// file at fault and the newest intact checkpoint listed; no variable is written and nothing
  /// on disk changes. With restore_fallback() == RestoreFallback::newest_intact, the newest
  /// listed checkpoint whose files are all present and valid is restored instead, logged at
  /// WARNING through `logger` with the fault, and every checkpoint stays listed. Errors not
  /// caused by the files (a variable missing from the checkpoint, a dtype or shape mismatch)
  /// are restore()'s; errors reading the state file are get_checkpoint_state()'s.
  template <class Vars, Logger L>
  std::optional<std::string> restore_latest(const Vars& vars, std::string_view checkpoint_dir,
                                            L& logger) {
    const std::filesystem::path dir(checkpoint_dir);
    const std::optional<CheckpointState> state = get_checkpoint_state(dir);
    if (!state) return std::nullopt;
    const std::filesystem::path newest = state->model_checkpoint_path;
    std::optional<detail::CheckpointFault> fault;
    try {
      restore(vars, newest.string());
    } catch (const std::exception&) {
      fault = detail::checkpoint_fault(newest);
      if (!fault) throw;
    }
    if (!fault) {
      recover_last_checkpoints(dir);
      return newest.string();
    }
    // The newest listed checkpoint before it whose files are all present and valid.
    const std::filesystem::path newest_abs = detail::canonical_prefix(newest);
    std::optional<std::filesystem::path> intact;
    std::string also_damaged;
    const auto& all = state->all_model_checkpoint_paths;
    for (auto it = all.rbegin(); it != all.rend() && !intact; ++it) {
      if (detail::canonical_prefix(*it) == newest_abs) continue;
      if (const auto f = detail::checkpoint_fault(*it))
        also_damaged += "; " + *it + ": " + f->message;
      else
        intact = *it;
    }
    std::string_view reason = fault->message;
    if (reason.ends_with('.')) reason.remove_suffix(1);
    const std::string what =
        (dir / kCheckpointStateFilename).string() + " names " + newest.string() +
        " as the latest checkpoint, but it cannot be restored: " + std::string(reason) + ". ";
    if (intact && restore_fallback_ == RestoreFallback::newest_intact) {
      logger.log(Severity::warning,
                 what + "restore_fallback = newest_intact: restoring " + intact->string() +
                     ", the newest intact checkpoint listed; the state file keeps listing " +
                     "every checkpoint");
      restore(vars, intact->string());
      recover_last_checkpoints(dir);
      return intact->string();
    }
    detail::fail_fault(
        fault->kind,
        what +
            (intact ? "The newest intact checkpoint listed is " + intact->string() + ". "
                    : "No checkpoint listed there is intact" + also_damaged + ". ") +
            "Nothing was restored and nothing on disk was changed: put the file back" +
            (intact ? ", or set restore_fallback = newest_intact (SaverOptions or "
                      "SessionOptions) to resume from " +
                          intact->string()
                    : std::string()) +
            ".");
  }

  /// restore_latest logging to stderr (StderrLogger).
  template <class Vars>
  std::optional<std::string> restore_latest(const Vars& vars, std::string_view checkpoint_dir) {
    StderrLogger logger;
    return restore_latest(vars, checkpoint_dir, logger);
  }

  /// Takes over `checkpoint_dir`'s state file (absolute or relative paths, with or without
  /// timestamp lines): its checkpoint list (oldest first) with their timestamps (the .index
  /// file's modification time when the file has none, as TF1's Saver.recover_last_checkpoints
  /// always does) and, for the CheckpointManager, its last_preserved_timestamp, so that
  /// retention continues where the previous process stopped (the Saver's
  /// next_checkpoint_time() stays counted from its creation, as TF1's). Timestamps in the
  /// future count as now. No state file: nothing changes. Errors as get_checkpoint_state().
  void recover_last_checkpoints(const std::filesystem::path& checkpoint_dir) {
    const std::optional<CheckpointState> state = get_checkpoint_state(checkpoint_dir);
    if (!state) return;
    const double now = clock_();
    const auto& paths = state->all_model_checkpoint_paths;
    const auto& times = state->all_model_checkpoint_timestamps;
    last_.clear();
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const std::filesystem::path p = detail::canonical_prefix(paths[i]);
      double t = i < times.size() && times.size() == paths.size() ? times[i] : index_mtime(p, now);
      std::erase_if(last_, [&](const Kept& k) { return k.prefix == p; });
      last_.push_back({p, std::min(t, now)});
    }
    if (kManager && state->last_preserved_timestamp != 0.0)
      last_preserved_ = std::min(state->last_preserved_timestamp, now);
  }

  /// The checkpoints retention tracks, oldest first, as absolute prefixes (TF:
  /// Saver.last_checkpoints).
  [[nodiscard]] std::vector<std::string> last_checkpoints() const {
    std::vector<std::string> out;
    for (const Kept& k : last_) out.push_back(k.prefix.string());
    return out;
  }

  [[nodiscard]] int max_to_keep() const noexcept { return max_to_keep_; }
  /// What restore_latest does when the newest checkpoint listed is damaged (RestoreFallback).
  [[nodiscard]] RestoreFallback restore_fallback() const noexcept { return restore_fallback_; }
  void set_restore_fallback(RestoreFallback fallback) noexcept { restore_fallback_ = fallback; }
  [[nodiscard]] double keep_checkpoint_every_n_hours() const noexcept {
    return keep_every_n_hours_;
  }
  /// CheckpointManager: seconds since the epoch of the last checkpoint preserved by
  /// keep_checkpoint_every_n_hours (the creation time until one is, or the state file's).
  [[nodiscard]] double last_preserved_timestamp() const noexcept { return last_preserved_; }
  /// Saver: seconds since the epoch after which the next checkpoint dropped is preserved
  /// (TF1's Saver._next_checkpoint_time): creation + N hours, plus N hours per one preserved.
  [[nodiscard]] double next_checkpoint_time() const noexcept { return next_checkpoint_time_; }
  /// Saver: whether the state file lists paths relative to the directory even when it is
  /// given absolute (TF1's Saver(save_relative_paths=...); always true for the manager).
  [[nodiscard]] bool save_relative_paths() const noexcept {
    return kManager || save_relative_paths_;
  }

 private:
  struct Kept {
    std::filesystem::path prefix;  // absolute, lexically normal
    double timestamp;              // seconds since the epoch
  };

  static double index_mtime(const std::filesystem::path& prefix, double fallback) {
    std::error_code ec;
    const auto t = std::filesystem::last_write_time(meta_filename(prefix), ec);
    if (ec) return fallback;
    const auto sys = std::chrono::file_clock::to_sys(t);
    return std::chrono::duration<double>(sys.time_since_epoch()).count();
  }

  void write_state(const std::filesystem::path& dir) const { write_state(dir, last_); }

  /// `kept` as the state file, in this saver's form (see the class comment).
  void write_state(const std::filesystem::path& dir, const std::vector<Kept>& kept) const {
    std::vector<std::filesystem::path> paths;
    std::vector<double> times;
    for (const Kept& k : kept) {
      paths.push_back(k.prefix);
      times.push_back(k.timestamp);
    }
    if constexpr (kManager)
      update_checkpoint_state(dir, paths.back(), paths, times, last_preserved_);
    else
      update_checkpoint_state(dir, paths.back(), paths, {}, 0.0, kCheckpointStateFilename,
                              !absolute_paths_);
  }

  /// Re-saving a prefix replaces its files, and for a moment it has no index (a V2 checkpoint
  /// cannot be replaced atomically). If the state file names it as the newest, it first names
  /// the newest other listed checkpoint, so that a kill in that moment still leaves the state
  /// file on a complete checkpoint.
  void step_back_before_replacing(const std::filesystem::path& abs,
                                  const std::filesystem::path& dir) {
    if (last_.empty() || last_.back().prefix != abs) return;
    std::error_code ec;
    if (!std::filesystem::exists(meta_filename(abs), ec)) return;
    std::vector<Kept> others;
    for (const Kept& k : last_)
      if (k.prefix != abs && std::filesystem::exists(meta_filename(k.prefix), ec))
        others.push_back(k);
    if (others.empty()) return;
    write_state(dir, others);
  }

  int max_to_keep_;
  double keep_every_n_hours_;
  WallClock clock_;
  RestoreFallback restore_fallback_ = RestoreFallback::none;
  bool sharded_ = false;  // SaverOptions::sharded: save_sharded() with num_shards_ shards
  int num_shards_ = 2;
  bool save_relative_paths_ = false;   // TF1 Saver's save_relative_paths
  bool absolute_paths_ = false;        // the Saver's state file: the last save's path was absolute
  double last_preserved_ = 0.0;        // CheckpointManager's rule
  double next_checkpoint_time_ = 0.0;  // Saver's rule
  std::vector<Kept> last_;
  std::set<std::filesystem::path> cleaned_dirs_;
};

}  // namespace hookfuse::io
