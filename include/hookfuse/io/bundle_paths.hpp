// hookfuse/io/bundle_paths.hpp: the file names of a tensor bundle with prefix P: "P.index" and
// "P.data-0000K-of-0000N", one per shard (TensorFlow's MetaFilename and DataFilename,
// tensor_bundle.cc), and which of them are on disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace hookfuse::io {

/// "P.index": the sorted table of tensor entries (TensorFlow's `MetaFilename(prefix)`).
/// The prefix is a path without extension ("/ckpt/model.ckpt-100"), relative or absolute.
template <class = void>
[[nodiscard]] std::filesystem::path meta_filename(const std::filesystem::path& prefix) {
  return std::filesystem::path(prefix.string() + ".index");
}

/// "P.data-00000-of-00001": the tensors' bytes (TensorFlow's `DataFilename(prefix, shard_id,
/// num_shards)`, zero-padded to 5 digits): the data file of shard `shard_id` of `num_shards`.
template <class = void>
[[nodiscard]] std::filesystem::path data_filename(const std::filesystem::path& prefix,
                                                  std::int32_t shard_id = 0,
                                                  std::int32_t num_shards = 1) {
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".data-%05d-of-%05d", static_cast<int>(shard_id),
                static_cast<int>(num_shards));
  return std::filesystem::path(prefix.string() + suffix);
}

namespace detail {

/// True when `s` is ".data-NNNNN-of-NNNNN" (5 digits each): the end of a data file's name.
template <class = void>
[[nodiscard]] bool is_data_suffix(std::string_view s) {
  auto digits = [&](std::size_t from) {
    for (std::size_t i = from; i < from + 5; ++i)
      if (s[i] < '0' || s[i] > '9') return false;
    return true;
  };
  return s.size() == 20 && s.starts_with(".data-") && s.substr(11, 4) == "-of-" && digits(6) &&
         digits(15);
}

/// The prefix P when `path` names one file of a checkpoint, "P.index" or
/// "P.data-NNNNN-of-NNNNN" (the mistake of passing a file where TensorFlow takes the prefix);
/// nullopt otherwise.
template <class = void>
[[nodiscard]] std::optional<std::filesystem::path> prefix_of_checkpoint_file(
    const std::filesystem::path& path) {
  const std::string s = path.string();
  const std::string name = path.filename().string();
  if (name.size() > 6 && name.ends_with(".index"))
    return std::filesystem::path(s.substr(0, s.size() - 6));
  if (name.size() > 20 && is_data_suffix(std::string_view(name).substr(name.size() - 20)))
    return std::filesystem::path(s.substr(0, s.size() - 20));
  return std::nullopt;
}

/// The first file of checkpoint `prefix` that is not on disk: "P.index", then its data files
/// (every "P.data-K-of-N" for K < N, N taken from any shard present; "P.data-00000-of-00001"
/// when there is none). nullopt when all are present. Only looks for the files, never opens
/// them.
template <class = void>
[[nodiscard]] std::optional<std::filesystem::path> missing_checkpoint_file(
    const std::filesystem::path& prefix) {
  std::error_code ec;
  const std::filesystem::path index = meta_filename(prefix);
  if (!std::filesystem::is_regular_file(index, ec)) return index;
  if (std::filesystem::is_regular_file(data_filename(prefix), ec)) return std::nullopt;
  // A sharded bundle: any "P.data-K-of-N" names N.
  const std::string stem = prefix.filename().string() + ".data-";
  std::filesystem::path dir = prefix.parent_path();
  if (dir.empty()) dir = ".";
  long num_shards = 0;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() == stem.size() + 14 && name.starts_with(stem) &&
        is_data_suffix(std::string_view(name).substr(stem.size() - 6))) {
      num_shards = std::stol(name.substr(stem.size() + 9, 5));
      if (num_shards > 0) break;
    }
  }
  if (num_shards <= 0) return data_filename(prefix);
  for (long k = 0; k < num_shards; ++k) {
    const auto shard =
        data_filename(prefix, static_cast<std::int32_t>(k), static_cast<std::int32_t>(num_shards));
    if (!std::filesystem::is_regular_file(shard, ec)) return shard;
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace hookfuse::io
