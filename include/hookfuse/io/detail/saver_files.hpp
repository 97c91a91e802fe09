// hookfuse/io/detail/saver_files.hpp: what the Saver and the CheckpointManager do to the files
// of a checkpoint directory, whatever their retention rule and state-file form: deleting a
// checkpoint (TensorFlow's remove_checkpoint), removing what a killed writer left, the sharded
// save (saver.py, _AddShardedSaveOpsForV2), checking a checkpoint before restoring it, and
// naming what is wrong with one (CheckpointFault).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/bundle_merge.hpp"
#include "hookfuse/io/bundle_paths.hpp"
#include "hookfuse/io/bundle_reader.hpp"
#include "hookfuse/io/detail/checkpoint_path_errors.hpp"
#include "hookfuse/io/bundle_writer.hpp"
#include "hookfuse/io/detail/checkpoint_vars.hpp"
#include "hookfuse/io/errors.hpp"
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

/// Writes the bundle `prefix` of views[first], views[first + stride], ... (stride >= 1): the
/// whole list for an unsharded save, one shard's share of it for a sharded one.
template <class = void>
void write_bundle(const std::filesystem::path& prefix, const std::vector<VarView>& views,
                  std::size_t first = 0, std::size_t stride = 1) {
  BundleWriter writer(prefix);
  for (std::size_t i = first; i < views.size(); i += stride)
    add_to_bundle(writer, views[i].name, views[i]);
  writer.finish();
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
    parts.push_back(temp_dir / ("part-" + shard_of_shards(static_cast<std::int32_t>(k),
                                                          static_cast<std::int32_t>(n))));
    write_bundle(parts.back(), views, k, n);
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

}  // namespace hookfuse::io
