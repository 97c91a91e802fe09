// hookfuse/io/saver.hpp: TensorFlow's checkpoint Saver (tf.compat.v1.train.Saver): saves a list
// of variables as `<save_path>-<global_step>`, keeps the directory's `checkpoint` state file,
// deletes old checkpoints (max_to_keep, keep_checkpoint_every_n_hours), and restores.
//
//     io::Saver saver(SaverOptions{.max_to_keep = 2});
//     saver.restore_latest(vars, "run");            // after a restart: values, step, history
//     saver.save(vars, "run/model.ckpt", 100);      // run/model.ckpt-100.{index,data-...}
//
// Variables are given as descriptors (io/detail/checkpoint_vars.hpp: name, dtype, TensorFlow
// shape, data pointer), e.g. the session's CheckpointVariable list.
//
// Crash safety of one save(): both bundle files are written under temporary names, fsync'd and
// renamed into place (BundleWriter), then the state file is replaced atomically
// (update_checkpoint_state), then the checkpoints retention drops are deleted and the state
// file written again without them (tf.train.CheckpointManager's order). A process killed
// at any instant leaves the state file naming a complete checkpoint (the previous one, or the
// new one). Re-saving an existing prefix with the same contents (what a restarted session does
// with the step it restored) leaves its files alone; with other contents the files are
// replaced, and the state file first names the previous checkpoint when there is one: only
// replacing the one checkpoint listed, with other values, has an instant without it.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/bundle_merge.hpp"
#include "hookfuse/io/bundle_paths.hpp"
#include "hookfuse/io/bundle_reader.hpp"
#include "hookfuse/io/bundle_writer.hpp"
#include "hookfuse/io/checkpoint_state.hpp"
#include "hookfuse/io/detail/checkpoint_vars.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/init_from_checkpoint.hpp"
#include "hookfuse/io/restore_fallback.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse::io {
namespace detail {

/// Seconds since the Unix epoch (Python's time.time()), the state file's timestamps.
template <class = void>
double unix_time_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// `p` absolute and lexically normal: one spelling per checkpoint, whatever the caller's.
template <class = void>
std::filesystem::path canonical_prefix(const std::filesystem::path& p) {
  return absolute_path(p).lexically_normal();
}

/// Deletes checkpoint `prefix`: its index first (so no index outlives its data), then every
/// `<prefix>.data-NNNNN-of-NNNNN` (TF's remove_checkpoint). Failures are logged and ignored,
/// as TensorFlow does ("Ignoring: ...").
template <class = void>
void remove_checkpoint_files(const std::filesystem::path& prefix) {
  std::error_code ec;
  std::filesystem::remove(meta_filename(prefix), ec);
  if (ec)
    StderrLogger{}.log(Severity::warning, "Ignoring: cannot delete " +
                                              meta_filename(prefix).string() + ": " + ec.message());
  const std::string data_stem = prefix.filename().string() + ".data-";
  for (std::filesystem::directory_iterator it(parent_dir(prefix), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // "<prefix>.data-00000-of-00001": 5 digits, "-of-", 5 digits, and nothing after.
    if (name.size() != data_stem.size() + 14 || name.compare(0, data_stem.size(), data_stem) != 0 ||
        name.compare(data_stem.size() + 5, 4, "-of-") != 0)
      continue;
    std::error_code rm;
    std::filesystem::remove(it->path(), rm);
    if (rm)
      StderrLogger{}.log(Severity::warning,
                         "Ignoring: cannot delete " + it->path().string() + ": " + rm.message());
  }
}

/// The suffix of a sharded save's temporary directory, "<prefix>_temp" (TensorFlow's
/// `os.path.normpath("_temp/part")` joined to the prefix, saver.py).
inline constexpr std::string_view kShardedSaveTempSuffix = "_temp";

/// Removes what a killed writer left in `dir`: "<basename>-*.tempstate*" (bundle temporaries,
/// BundleWriter), "<basename>-*_temp" directories (the shards of a sharded save before their
/// merge), "<state file>.tmp-*" (state file temporaries, AtomicFileWriter), and
/// "<basename>-*.data-NNNNN-of-NNNNN" files without their ".index" (a save killed between its
/// two renames, or a deletion killed between its two unlinks: unreadable without the index).
template <class = void>
void remove_stale_files(const std::filesystem::path& dir, const std::string& basename,
                        std::string_view state_filename) {
  const std::string bundle_stem = basename + "-";
  const std::string state_stem = std::string(state_filename) + ".tmp-";
  std::vector<std::filesystem::path> stale;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code dir_ec;
    if ((name.starts_with(bundle_stem) && name.find(".tempstate") != std::string::npos) ||
        name.starts_with(state_stem) ||
        (name.starts_with(bundle_stem) && name.ends_with(kShardedSaveTempSuffix) &&
         it->is_directory(dir_ec))) {
      stale.push_back(it->path());
      continue;
    }
    const std::size_t data = name.rfind(".data-");
    if (!name.starts_with(bundle_stem) || data == std::string::npos || name.size() != data + 20 ||
        name.compare(data + 11, 4, "-of-") != 0)
      continue;
    std::error_code exists_ec;
    if (!std::filesystem::exists(dir / (name.substr(0, data) + ".index"), exists_ec) && !exists_ec)
      stale.push_back(it->path());
  }
  for (const auto& p : stale) {
    std::error_code rm;
    std::filesystem::remove_all(p, rm);
  }
}

/// Writes `views` as the sharded bundle `abs` (absolute) of min(num_shards, views.size())
/// shards (at least one), as TensorFlow 1.x's sharded Saver (saver.py,
/// _AddShardedSaveOpsForV2): each shard is written as its own bundle
/// "<abs>_temp/part-0000K-of-0000N", then they are merged into `abs` (merge_bundles,
/// TensorFlow's MergeV2Checkpoints), then the temporary directory is removed. Variable i goes
/// to shard i mod N (round-robin in the list's order).
template <class = void>
void save_sharded(const std::filesystem::path& abs, const std::vector<VarView>& views,
                  int num_shards) {
  const std::size_t n =
      std::max<std::size_t>(1, std::min(static_cast<std::size_t>(num_shards), views.size()));
  const std::filesystem::path temp_dir(abs.string() + std::string(kShardedSaveTempSuffix));
  std::error_code ec;
  std::filesystem::remove_all(temp_dir, ec);  // an orphan of a killed save of this prefix
  if (!std::filesystem::create_directory(temp_dir, ec) && ec)
    fail_io(temp_dir, "cannot create the sharded save's temporary directory", ec.value());
  struct RemoveTempDir {
    const std::filesystem::path& dir;
    ~RemoveTempDir() {
      std::error_code rm;
      std::filesystem::remove_all(dir, rm);
    }
  } guard{temp_dir};
  std::vector<std::filesystem::path> parts;
  for (std::size_t k = 0; k < n; ++k) {
    char name[48];
    std::snprintf(name, sizeof name, "part-%05d-of-%05d", static_cast<int>(k), static_cast<int>(n));
    parts.push_back(temp_dir / name);
    BundleWriter writer(parts.back());
    for (std::size_t i = k; i < views.size(); i += n)
      add_to_bundle(writer, views[i].name, views[i]);
    writer.finish();
  }
  merge_bundles(std::span<const std::filesystem::path>(parts), abs);
}

/// True when checkpoint `prefix` exists and holds exactly `views` (names, dtypes, shapes and
/// bytes, CRCs checked): re-saving it (a restarted session saves the step it restored) then
/// leaves the files alone, so that they are never missing for a moment.
template <class = void>
bool bundle_holds(const std::filesystem::path& prefix, const std::vector<VarView>& views) {
  std::error_code ec;
  if (!std::filesystem::exists(meta_filename(prefix), ec)) return false;
  try {
    const BundleReader reader(prefix);
    if (reader.entries().size() != views.size()) return false;
    for (const VarView& v : views) {
      if (!reader.contains(v.name)) return false;
      const BundleEntry& e = reader.entry(v.name);
      if (e.sliced || e.dtype != v.dtype || e.shape != v.shape) return false;
      const std::vector<std::byte> bytes = reader.lookup_bytes(v.name);
      if (!bytes.empty() && std::memcmp(bytes.data(), v.data, bytes.size()) != 0) return false;
    }
    return true;
  } catch (const std::exception&) {
    return false;  // unreadable or damaged: write it again
  }
}

/// Saver.restore's check of `save_path` before reading (TensorFlow's checkpoint_exists_internal):
/// a path to one file of a checkpoint is a DataLossError naming the prefix to pass (TensorFlow
/// reads such a file as a V1 table and fails with DataLoss "not an sstable"); a prefix without
/// "P.index" is TensorFlow's ValueError "The passed save_path is not a valid checkpoint: P",
/// followed by the files expected and found and the latest checkpoint of P's directory.
template <class = void>
void check_restore_path(const std::filesystem::path& save_path) {
  const std::filesystem::path abs = absolute_path(save_path);
  check_not_a_checkpoint_file(abs);
  std::error_code ec;
  if (!std::filesystem::exists(meta_filename(abs), ec))
    ::hookfuse::detail::fail<ValueError>("The passed save_path is not a valid checkpoint: " +
                                         save_path.string() + "; " + no_checkpoint_at(abs));
}

/// What is wrong with the files of a checkpoint, whatever the variables restored from it, and
/// the kind of error TensorFlow raises for it when SessionManager restores it.
struct CheckpointFault {
  enum class Kind {
    invalid,    // "P.index" missing: Saver.restore's ValueError ("not a valid checkpoint")
    not_found,  // a data file missing: NotFoundError
    data_loss,  // an index that does not parse, a tensor failing its CRC32C: DataLossError
    io          // a file the system refuses to read: IoError
  };
  Kind kind;
  std::string message;  // names the file and what was found
};

/// The fault of checkpoint `prefix`: a file missing, then (reading every tensor, CRC32C
/// checked) a damaged index or tensor; nullopt when every file is present and valid.
template <class = void>
std::optional<CheckpointFault> checkpoint_fault(const std::filesystem::path& prefix) {
  using Kind = CheckpointFault::Kind;
  const std::filesystem::path abs = absolute_path(prefix);
  if (const auto missing = missing_checkpoint_file(abs))
    return CheckpointFault{*missing == meta_filename(abs) ? Kind::invalid : Kind::not_found,
                           missing->string() + " is not found"};
  try {
    const BundleReader reader(abs);
    for (const BundleEntry& e : reader.entries())
      if (!e.sliced) (void)reader.lookup_bytes(e.key);
  } catch (const NotFoundError& e) {
    return CheckpointFault{Kind::not_found, e.what()};
  } catch (const DataLossError& e) {
    return CheckpointFault{Kind::data_loss, e.what()};
  } catch (const IoError& e) {
    return CheckpointFault{Kind::io, e.what()};
  }
  return std::nullopt;
}

/// Throws `message` as the error type of `kind`.
template <class = void>
[[noreturn]] void fail_fault(CheckpointFault::Kind kind, const std::string& message) {
  switch (kind) {
    case CheckpointFault::Kind::invalid:
      ::hookfuse::detail::fail<ValueError>(message);
    case CheckpointFault::Kind::not_found:
      ::hookfuse::detail::fail<NotFoundError>(message);
    case CheckpointFault::Kind::data_loss:
      ::hookfuse::detail::fail<DataLossError>(message);
    case CheckpointFault::Kind::io:
      break;
  }
  ::hookfuse::detail::fail<IoError>(message);
}

}  // namespace detail

/// tf.compat.v1.train.Saver over the V2 format. Not thread-safe: one save or restore at a time.
///
/// Retention (TensorFlow's rules): the saver remembers the checkpoints it wrote (or took over
/// from a state file), oldest first in the order saved. After each save, while more than
/// max_to_keep are remembered the oldest is dropped: its files are deleted, unless
/// keep_checkpoint_every_n_hours preserves it: a dropped checkpoint at least that many hours
/// newer than the last preserved one (or than the saver's start) is kept on disk forever but
/// no longer listed (tf.train.CheckpointManager's rule, whose `last_preserved_timestamp` the
/// state file carries, so that it survives restarts). max_to_keep <= 0 keeps every file and
/// lists only the newest. Saving a prefix already remembered moves it to the end of the list.
template <class = void>
class BasicSaver {
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
  /// session's SaverOptions), and `restore_fallback` (RestoreFallback) if it has one.
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
    if (sharded_ && num_shards_ < 1)
      ::hookfuse::detail::fail<ValueError>(
          "Saver: num_shards must be >= 1 with sharded = true, got " + std::to_string(num_shards_));
  }

  /// Throws hookfuse::ValueError when keep_checkpoint_every_n_hours is not positive.
  BasicSaver(int max_to_keep, double keep_checkpoint_every_n_hours, WallClock clock = {})
      : max_to_keep_(max_to_keep),
        keep_every_n_hours_(keep_checkpoint_every_n_hours),
        clock_(clock ? std::move(clock) : WallClock(detail::unix_time_seconds<>)) {
    if (!(keep_every_n_hours_ > 0.0))
      ::hookfuse::detail::fail<ValueError>(
          "Saver: keep_checkpoint_every_n_hours must be positive, got " +
          std::to_string(keep_every_n_hours_));
    last_preserved_ = clock_();
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
    if (!detail::bundle_holds(abs, views)) {
      step_back_before_replacing(abs, dir);
      if (sharded_) {
        detail::save_sharded(abs, views, num_shards_);
      } else {
        BundleWriter writer(abs);
        for (const detail::VarView& v : views) detail::add_to_bundle(writer, v.name, v);
        writer.finish();
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
    // As tf.train.CheckpointManager: the state file first names the new checkpoint with the
    // ones about to go still listed, then they go, then it is written again without them. A
    // kill in between leaves them listed, so the next process's retention deletes them: no
    // checkpoint is ever left on disk unlisted by accident.
    write_state(dir);
    if (last_.size() <= static_cast<std::size_t>(max_to_keep_)) return prefix;
    std::vector<std::filesystem::path> to_delete;
    while (last_.size() > static_cast<std::size_t>(max_to_keep_)) {
      const Kept dropped = last_.front();
      last_.erase(last_.begin());
      if (dropped.timestamp - keep_every_n_hours_ * 3600.0 >= last_preserved_) {
        last_preserved_ = dropped.timestamp;  // preserved on disk, no longer listed
      } else {
        to_delete.push_back(dropped.prefix);
      }
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

  /// Takes over `checkpoint_dir`'s state file: its checkpoint list (oldest first) with their
  /// timestamps (the .index file's modification time when the file has none, as TF's
  /// recover_last_checkpoints) and its last_preserved_timestamp, so that retention continues
  /// where the previous process stopped. Timestamps in the future count as now. No state file:
  /// nothing changes. Errors as get_checkpoint_state().
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
    if (state->last_preserved_timestamp != 0.0)
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
  /// Seconds since the epoch of the last checkpoint preserved by keep_checkpoint_every_n_hours
  /// (the saver's start time until one is).
  [[nodiscard]] double last_preserved_timestamp() const noexcept { return last_preserved_; }

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

  void write_state(const std::filesystem::path& dir) const {
    std::vector<std::filesystem::path> paths;
    std::vector<double> times;
    for (const Kept& k : last_) {
      paths.push_back(k.prefix);
      times.push_back(k.timestamp);
    }
    update_checkpoint_state(dir, paths.back(), paths, times, last_preserved_);
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
    std::vector<std::filesystem::path> paths;
    std::vector<double> times;
    for (const Kept& k : others) {
      paths.push_back(k.prefix);
      times.push_back(k.timestamp);
    }
    update_checkpoint_state(dir, paths.back(), paths, times, last_preserved_);
  }

  int max_to_keep_;
  double keep_every_n_hours_;
  WallClock clock_;
  RestoreFallback restore_fallback_ = RestoreFallback::none;
  bool sharded_ = false;  // SaverOptions::sharded: save_sharded() with num_shards_ shards
  int num_shards_ = 2;
  double last_preserved_ = 0.0;
  std::vector<Kept> last_;
  std::set<std::filesystem::path> cleaned_dirs_;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using Saver = BasicSaver<void>;

}  // namespace hookfuse::io
