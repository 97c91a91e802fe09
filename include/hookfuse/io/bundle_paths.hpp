// hookfuse/io/bundle_paths.hpp: the file names of a tensor bundle with prefix P: "P.index" and
// "P.data-0000K-of-0000N", one per shard (TensorFlow's MetaFilename and DataFilename,
// tensor_bundle.cc), and which of them are on disk.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace hookfuse::io {
namespace detail {

/// "KKKKK-of-NNNNN" (each zero-padded to 5 digits): the shard part of a data file's name
/// ("P.data-" before it) and of a sharded save's part ("part-" before it).
template <class = void>
[[nodiscard]] std::string shard_of_shards(std::int32_t shard_id, std::int32_t num_shards) {
  char s[32];
  std::snprintf(s, sizeof s, "%05d-of-%05d", static_cast<int>(shard_id),
                static_cast<int>(num_shards));
  return s;
}

}  // namespace detail

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
  return std::filesystem::path(prefix.string() + ".data-" +
                               detail::shard_of_shards(shard_id, num_shards));
}

namespace detail {

/// The shard id and shard count a data file's name ends with.
struct ShardOfShards {
  std::int32_t shard_id;
  std::int32_t num_shards;
};

/// Parses ".data-KKKKK-of-NNNNN" (exactly 5 digits each, the whole of `s`): the end of a data
/// file's name. nullopt for anything else.
template <class = void>
[[nodiscard]] std::optional<ShardOfShards> parse_data_suffix(std::string_view s) {
  constexpr std::string_view kData = ".data-";
  constexpr std::string_view kOf = "-of-";
  constexpr std::size_t kDigits = 5;
  if (s.size() != kData.size() + kDigits + kOf.size() + kDigits || !s.starts_with(kData))
    return std::nullopt;
  auto number = [&](std::size_t from) -> std::optional<std::int32_t> {
    const std::string_view d = s.substr(from, kDigits);
    for (const char c : d)
      if (c < '0' || c > '9') return std::nullopt;
    std::int32_t v = 0;
    std::from_chars(d.data(), d.data() + d.size(), v);
    return v;
  };
  const std::size_t of_at = kData.size() + kDigits;
  if (s.substr(of_at, kOf.size()) != kOf) return std::nullopt;
  const auto shard_id = number(kData.size());
  const auto num_shards = number(of_at + kOf.size());
  if (!shard_id || !num_shards) return std::nullopt;
  return ShardOfShards{*shard_id, *num_shards};
}

/// True when `s` is ".data-NNNNN-of-NNNNN" (5 digits each): the end of a data file's name.
template <class = void>
[[nodiscard]] bool is_data_suffix(std::string_view s) {
  return parse_data_suffix(s).has_value();
}

/// One data file of a prefix found on disk, with the shard id and count its name ends with.
struct DataFileOnDisk {
  std::filesystem::path path;
  std::int32_t shard_id;
  std::int32_t num_shards;
};

/// The data files of `prefix` on disk: every "P.data-KKKKK-of-NNNNN" (5 digits each) in P's
/// directory ("." for a prefix without one), whatever N, in the directory's listing order.
/// Other names are ignored; a directory that cannot be listed gives what was listed before.
template <class = void>
[[nodiscard]] std::vector<DataFileOnDisk> list_data_files(const std::filesystem::path& prefix) {
  const std::string stem = prefix.filename().string();
  std::filesystem::path dir = prefix.parent_path();
  if (dir.empty()) dir = ".";
  std::vector<DataFileOnDisk> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(stem)) continue;
    if (const auto shard = parse_data_suffix(std::string_view(name).substr(stem.size())))
      found.push_back({it->path(), shard->shard_id, shard->num_shards});
  }
  return found;
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
  std::int32_t num_shards = 0;
  for (const DataFileOnDisk& f : list_data_files(prefix))
    if (f.num_shards > 0) {
      num_shards = f.num_shards;
      break;
    }
  if (num_shards <= 0) return data_filename(prefix);
  for (std::int32_t k = 0; k < num_shards; ++k) {
    const auto shard = data_filename(prefix, k, num_shards);
    if (!std::filesystem::is_regular_file(shard, ec)) return shard;
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace hookfuse::io
