// hookfuse/io/bundle_merge.hpp: merges tensor bundles into one sharded bundle (TensorFlow's
// MergeBundles, tensorflow/core/util/tensor_bundle/tensor_bundle.cc, behind the
// MergeV2Checkpoints op of a sharded Saver): one index listing every tensor, the data files
// renamed to "M.data-0000K-of-0000N".
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/bundle_entry.hpp"
#include "hookfuse/io/bundle_paths.hpp"
#include "hookfuse/io/bundle_reader.hpp"
#include "hookfuse/io/bundle_writer.hpp"
#include "hookfuse/io/detail/posix_file.hpp"
#include "hookfuse/io/errors.hpp"

namespace hookfuse::io {

/// Merges the bundles `prefixes` (each complete: "Pi.index" and its data files) into the
/// bundle `merged_prefix`, as TensorFlow's MergeBundles: the data files of the inputs, in input
/// order and shard order within each, become shards 0..N-1 of the merged bundle and are renamed
/// to "M.data-0000K-of-0000N" (their bytes are not copied: offsets and CRCs stay valid); the
/// merged index lists every tensor with its new shard_id under a header of N shards.
///
/// Order: every input index is read and checked, and the merged index written and fsync'd under
/// a temporary name, before anything is renamed; then an index already at "M.index" is removed
/// (no index ever names data files other than its own), the data files are renamed, the merged
/// index is renamed into place last, each directory fsync'd after its changes; then the input
/// indexes are deleted (best effort, as TensorFlow). A process killed before the last rename
/// leaves no "M.index" (an earlier bundle of that prefix included) and the inputs' data files
/// moved or not; one killed after it leaves a complete merged bundle. An error before the last
/// rename moves the data files renamed so far back to their inputs (removes them if that
/// fails): no data file is left without its index. Data files of an earlier bundle of that
/// prefix with another shard count are deleted last.
///
/// Errors: hookfuse::ValueError for a tensor key in two inputs ("Duplicate tensor keyed by K
/// encountered, when merging prefix P", TensorFlow's words) or for no input; the inputs'
/// reading errors (BundleReader); io::IoError naming the path for a failed write, rename or
/// fsync.
template <class = void>
void merge_bundles(std::span<const std::filesystem::path> prefixes,
                   const std::filesystem::path& merged_prefix) {
  const std::filesystem::path merged = detail::absolute_path(merged_prefix);
  if (prefixes.empty())
    ::hookfuse::detail::fail<ValueError>("merge_bundles(" + merged.string() +
                                         "): no bundle to merge");
  std::vector<std::filesystem::path> data_files;  // merged shard id -> its current path
  std::vector<BundleEntry> entries;
  std::set<std::string, std::less<>> keys;
  std::vector<std::filesystem::path> indexes;
  for (const std::filesystem::path& prefix : prefixes) {
    const BundleReader reader(prefix);
    const auto first_shard = static_cast<std::int64_t>(data_files.size());
    for (std::int32_t k = 0; k < reader.num_shards(); ++k)
      data_files.push_back(reader.data_path(k));
    for (const BundleEntry& e : reader.entries()) {
      if (!keys.insert(e.key).second)
        ::hookfuse::detail::fail<ValueError>(
            "Duplicate tensor keyed by " + e.key +
            " encountered, when merging prefix: " + reader.index_path().string());
      BundleEntry merged_entry = e;
      merged_entry.shard_id = first_shard + e.shard_id;
      entries.push_back(std::move(merged_entry));
    }
    indexes.push_back(reader.index_path());
  }
  const auto num_shards = static_cast<std::int32_t>(data_files.size());

  detail::TempFile index(meta_filename(merged));
  detail::write_index_table(index, entries, num_shards);
  index.close_synced();  // complete on disk before an earlier index of `merged` goes

  const std::filesystem::path dir = detail::parent_dir(merged);
  if (::unlink(index.final_path().c_str()) == 0) {
    detail::fsync_directory(dir, index.final_path());
  } else if (errno != ENOENT) {
    detail::fail_io(index.final_path(), "cannot replace the existing index", errno);
  }
  struct UndoRenames {  // until the merged index is in place
    const std::vector<std::filesystem::path>& inputs;
    std::vector<std::filesystem::path> renamed;
    bool done = false;
    ~UndoRenames() {
      if (done) return;
      for (std::size_t k = 0; k < renamed.size(); ++k)
        if (::rename(renamed[k].c_str(), inputs[k].c_str()) != 0) ::unlink(renamed[k].c_str());
    }
  } undo{data_files, {}};
  std::set<std::filesystem::path> source_dirs;
  for (std::int32_t k = 0; k < num_shards; ++k) {
    const std::filesystem::path& from = data_files[static_cast<std::size_t>(k)];
    const std::filesystem::path to = data_filename(merged, k, num_shards);
    if (::rename(from.c_str(), to.c_str()) != 0)
      detail::fail_io(to, "cannot rename " + from.string() + " to it", errno);
    undo.renamed.push_back(to);
    source_dirs.insert(detail::parent_dir(from));
  }
  detail::fsync_directory(dir, data_filename(merged, num_shards - 1, num_shards));
  for (const auto& d : source_dirs)
    if (d != dir) detail::fsync_directory(d, data_filename(merged, num_shards - 1, num_shards));
  index.commit();
  undo.done = true;
  detail::fsync_directory(dir, index.final_path());
  for (const auto& p : indexes) {
    std::error_code ec;
    std::filesystem::remove(p, ec);
  }
  // Data files an earlier bundle of this prefix had with another shard count.
  std::error_code ec;
  for (const detail::DataFileOnDisk& f : detail::list_data_files(merged))
    if (f.num_shards != num_shards) std::filesystem::remove(f.path, ec);
}

}  // namespace hookfuse::io
