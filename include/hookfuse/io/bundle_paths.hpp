// hookfuse/io/bundle_paths.hpp: the file names of a tensor bundle with prefix P: "P.index" and
// "P.data-00000-of-00001" (TensorFlow's MetaFilename and DataFilename, tensor_bundle.cc).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace hookfuse::io {

/// "P.index": the sorted table of tensor entries (TensorFlow's `MetaFilename(prefix)`).
/// The prefix is a path without extension ("/ckpt/model.ckpt-100"), relative or absolute.
template <class = void>
[[nodiscard]] std::filesystem::path meta_filename(const std::filesystem::path& prefix) {
  return std::filesystem::path(prefix.string() + ".index");
}

/// "P.data-00000-of-00001": the tensors' bytes (TensorFlow's `DataFilename(prefix, shard_id,
/// num_shards)`, zero-padded to 5 digits). hookfuse writes and reads one shard.
template <class = void>
[[nodiscard]] std::filesystem::path data_filename(const std::filesystem::path& prefix,
                                                  std::int32_t shard_id = 0,
                                                  std::int32_t num_shards = 1) {
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".data-%05d-of-%05d", static_cast<int>(shard_id),
                static_cast<int>(num_shards));
  return std::filesystem::path(prefix.string() + suffix);
}

}  // namespace hookfuse::io
