// hookfuse/io/checkpoint_reader.hpp: TensorFlow's Python-facing checkpoint reader over a tensor
// bundle: `tf.train.load_checkpoint(prefix)` and its CheckpointReader (has_tensor, get_tensor,
// get_variable_to_shape_map, get_variable_to_dtype_map), and `tf.train.list_variables`. Both
// take a checkpoint prefix or a directory, whose latest checkpoint they open.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/bundle_reader.hpp"
#include "hookfuse/io/checkpoint_state.hpp"
#include "hookfuse/io/data_type.hpp"
#include "hookfuse/io/tensor_shape.hpp"

namespace hookfuse::io {

/// A checkpoint opened for reading by name (TensorFlow's `CheckpointReader`, as returned by
/// `tf.train.load_checkpoint`). Takes a checkpoint prefix ("dir/model.ckpt-100", the files being
/// "dir/model.ckpt-100.index" and ".data-0000K-of-0000N", one per shard), as TensorFlow's
/// NewCheckpointReader; load_checkpoint also takes a directory. Errors as BundleReader's: a
/// path to one of the files is a DataLossError naming the prefix to pass, a prefix without
/// files a NotFoundError naming the files expected and the latest checkpoint of its directory.
class CheckpointReader {
 public:
  /// Opens and checks the index (BundleReader). NotFoundError, DataLossError, IoError.
  explicit CheckpointReader(std::filesystem::path prefix) : bundle_(std::move(prefix)) {}

  /// True when the checkpoint holds tensor `name` (`reader.has_tensor(name)`).
  [[nodiscard]] bool has_tensor(std::string_view name) const noexcept {
    return bundle_.contains(name);
  }

  /// The values of tensor `name`, row-major (`reader.get_tensor(name)`); T must be its dtype
  /// (float for DT_FLOAT, double, std::int32_t, std::int64_t), ValueError otherwise;
  /// NotFoundError for an unknown name; DataLossError on a CRC mismatch.
  template <TensorElement T>
  [[nodiscard]] std::vector<T> get_tensor(std::string_view name) const {
    return bundle_.lookup<T>(name);
  }

  /// get_tensor into a caller buffer of exactly shape.num_elements() elements (no allocation).
  template <TensorElement T>
  void get_tensor(std::string_view name, std::span<T> out) const {
    bundle_.lookup(name, out);
  }

  /// Every tensor's TensorFlow shape by name (`reader.get_variable_to_shape_map()`), sorted by
  /// name; TF2's `_CHECKPOINTABLE_OBJECT_GRAPH` included, as in TensorFlow.
  [[nodiscard]] std::map<std::string, TensorShape, std::less<>> get_variable_to_shape_map() const {
    std::map<std::string, TensorShape, std::less<>> m;
    for (const BundleEntry& e : bundle_.entries()) m.emplace(e.key, e.shape);
    return m;
  }

  /// Every tensor's dtype by name (`reader.get_variable_to_dtype_map()`); values hookfuse does
  /// not read (DT_HALF, ...) are listed too.
  [[nodiscard]] std::map<std::string, DataType, std::less<>> get_variable_to_dtype_map() const {
    std::map<std::string, DataType, std::less<>> m;
    for (const BundleEntry& e : bundle_.entries()) m.emplace(e.key, e.dtype);
    return m;
  }

  /// All tensor names, sorted bytewise.
  [[nodiscard]] std::vector<std::string> keys() const {
    std::vector<std::string> k;
    k.reserve(bundle_.entries().size());
    for (const BundleEntry& e : bundle_.entries()) k.push_back(e.key);
    return k;
  }

  /// The underlying bundle: entries with offsets and CRCs, raw and string lookups.
  [[nodiscard]] const BundleReader& bundle() const noexcept { return bundle_; }

 private:
  BundleReader bundle_;
};

/// `tf.train.load_checkpoint(ckpt_dir_or_file)`: the checkpoint at a prefix, or the latest
/// checkpoint of a directory (latest_checkpoint: the model_checkpoint_path of its `checkpoint`
/// state file), as TensorFlow's checkpoint_utils resolves it. Throws hookfuse::ValueError
/// "Couldn't find 'checkpoint' file or checkpoints in given directory D" for a directory
/// without a state file (TensorFlow's ValueError); io::NotFoundError when the state file names
/// a checkpoint whose files are not all there (latest_checkpoint); otherwise as
/// CheckpointReader.
template <class = void>
[[nodiscard]] CheckpointReader load_checkpoint(const std::filesystem::path& ckpt_dir_or_prefix) {
  std::error_code ec;
  if (!std::filesystem::is_directory(ckpt_dir_or_prefix, ec))
    return CheckpointReader(ckpt_dir_or_prefix);
  const std::optional<std::filesystem::path> latest = latest_checkpoint(ckpt_dir_or_prefix);
  if (!latest)
    ::hookfuse::detail::fail<ValueError>(
        "Couldn't find 'checkpoint' file or checkpoints in given directory " +
        ckpt_dir_or_prefix.string() + " (no " +
        (ckpt_dir_or_prefix / kCheckpointStateFilename).string() + ")");
  return CheckpointReader(*latest);
}

/// `tf.train.list_variables(ckpt_dir_or_file)`: (name, shape) of every tensor of the checkpoint
/// load_checkpoint opens, sorted by name. Errors as load_checkpoint.
template <class = void>
[[nodiscard]] std::vector<std::pair<std::string, TensorShape>> list_variables(
    const std::filesystem::path& ckpt_dir_or_prefix) {
  const CheckpointReader reader = load_checkpoint(ckpt_dir_or_prefix);
  std::vector<std::pair<std::string, TensorShape>> out;
  out.reserve(reader.bundle().entries().size());
  for (const BundleEntry& e : reader.bundle().entries()) out.emplace_back(e.key, e.shape);
  return out;
}

}  // namespace hookfuse::io
