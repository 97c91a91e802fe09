// hookfuse/io/bundle_writer.hpp: writes a TensorFlow V2 checkpoint (tensor bundle) that
// `tf.train.load_checkpoint` opens: "P.data-00000-of-00001" with the tensors' raw bytes and
// "P.index", a LevelDB table of one BundleEntryProto per tensor (TensorFlow's BundleWriter).
#pragma once

#include <leveldb/comparator.h>
#include <leveldb/options.h>
#include <leveldb/table_builder.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/bundle_entry.hpp"
#include "hookfuse/io/bundle_paths.hpp"
#include "hookfuse/io/crc32c.hpp"
#include "hookfuse/io/data_type.hpp"
#include "hookfuse/io/detail/contiguous.hpp"
#include "hookfuse/io/detail/leveldb_files.hpp"
#include "hookfuse/io/detail/posix_file.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/tensor_shape.hpp"

namespace hookfuse::io {

static_assert(std::endian::native == std::endian::little,
              "hookfuse/io writes tensors as in memory: checkpoints are little-endian");

/// Writes the tensor bundle with prefix P (TensorFlow's `BundleWriter(env, prefix)`):
///
///     io::BundleWriter w("/ckpt/model.ckpt-100");
///     w.add("dense/kernel", {784, 256}, std::span<const float>(kernel.data(), 784 * 256));
///     w.add("dense/bias", {256}, bias_vector);      // TF rank 1
///     w.add("global_step", {}, std::array<std::int64_t, 1>{100});  // rank 0
///     w.finish();   // nothing exists under the final names before this returns
///
/// Tensors go to the data file in add() order, as raw little-endian bytes with no padding; the
/// index lists them sorted by key, after the header entry under the empty key, written with
/// libleveldb's TableBuilder under TensorFlow's options (no compression, 256 KiB blocks,
/// restart interval 16, no filter), so the files are byte-identical to TensorFlow's for the
/// same tensors. No `.meta` file: TensorFlow needs none to read tensors.
///
/// Crash safety: both files are written under temporary names beside their final ones
/// ("<name>.tempstate<hex>"), fsync'd and closed, then renamed into place by finish(): the
/// data file first, the index last, with the directory fsync'd after each, so an existing
/// P.index always names a complete data file. A killed process leaves at most temporary files.
/// A writer destroyed without finish() (or after an error) removes its temporary files; an
/// earlier bundle under another prefix is never touched, and one under the same prefix stays
/// whole through any failure before the renames (a write, fsync or close).
///
/// Errors: hookfuse::ValueError for bad input (empty or duplicate key, data size not matching
/// the shape, negative dimension), before anything is written; io::IoError naming the path and
/// the system's reason for a missing or unwritable directory, a full disk, a failed fsync or
/// rename (the writer is then unusable); hookfuse::RuntimeError for add() or finish() after
/// finish() or after an IoError.
namespace detail {

/// Writes into `index` the bundle index of `entries` (any order; sorted here by key) under a
/// header of `num_shards` shards, with TensorFlow's table options (no compression, 256 KiB
/// blocks, restart interval 16, no filter), and syncs it; the caller commits it. IoError naming
/// the index file on failure.
template <class = void>
void write_index_table(TempFile& index, const std::vector<BundleEntry>& entries,
                       std::int32_t num_shards) {
  std::vector<const BundleEntry*> sorted;
  sorted.reserve(entries.size());
  for (const auto& e : entries) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(),
            [](const BundleEntry* a, const BundleEntry* b) { return a->key < b->key; });
  TableSink sink(index);
  leveldb::Options options;
  options.comparator = leveldb::BytewiseComparator();
  options.compression = leveldb::kNoCompression;
  options.block_size = 262144;
  options.block_restart_interval = 16;
  options.filter_policy = nullptr;
  leveldb::TableBuilder builder(options, &sink);
  builder.Add(leveldb::Slice(), encode_header(num_shards));
  for (const BundleEntry* e : sorted) builder.Add(e->key, encode_entry(*e));
  const leveldb::Status status = builder.Finish();
  if (!status.ok()) {
    ::hookfuse::detail::fail<IoError>(!sink.error().empty()
                                          ? sink.error()
                                          : index.final_path().string() + ": " + status.ToString());
  }
  index.sync();
}

}  // namespace detail

template <class = void>
class BasicBundleWriter {
 public:
  /// Starts a bundle at `prefix` ("dir/model.ckpt-100"; the directory must exist): creates the
  /// temporary data file. Throws IoError naming the path when it cannot be created.
  explicit BasicBundleWriter(std::filesystem::path prefix)
      : prefix_(std::move(prefix)),
        abs_prefix_(detail::absolute_path(prefix_)),
        data_(std::make_unique<detail::TempFile>(data_filename(abs_prefix_))) {}

  BasicBundleWriter(const BasicBundleWriter&) = delete;
  BasicBundleWriter& operator=(const BasicBundleWriter&) = delete;
  BasicBundleWriter(BasicBundleWriter&&) noexcept = default;
  BasicBundleWriter& operator=(BasicBundleWriter&&) noexcept = default;
  ~BasicBundleWriter() = default;  // an unfinished writer's TempFile removes its temporary file

  /// Appends tensor `key` of TensorFlow shape `shape` ({} for a scalar), its elements in `data`
  /// (any contiguous range of float, double, int32 or int64: span, vector, array), row-major,
  /// shape.num_elements() of them. `key` is any non-empty byte string not added before.
  template <detail::ContiguousRange R>
  requires TensorElement<detail::contiguous_element_t<R>>
  void add(std::string_view key, const TensorShape& shape, const R& data) {
    using T = detail::contiguous_element_t<R>;
    const auto count = static_cast<std::size_t>(std::size(data));
    add_bytes(key, data_type_of<T>, shape, std::data(data), count * sizeof(T), count);
  }

  /// Writes the index and makes the bundle durable and visible under its final names (see the
  /// class comment for the order). Throws IoError naming the path on failure: then no file
  /// exists under the final names (unless an earlier bundle of the same prefix had them).
  void finish() {
    check_usable("finish()");
    state_ = State::failed;  // until everything below succeeded
    detail::TempFile index(meta_filename(abs_prefix_));
    detail::write_index_table(index, entries_, kTensorBundleNumShards);

    // Both files complete on disk before anything is replaced: a failed write, fsync or close
    // leaves an earlier bundle of this prefix whole.
    data_->close_synced();
    index.close_synced();
    const auto dir = detail::parent_dir(abs_prefix_);
    // An index left by an earlier bundle of this prefix goes first, so that at no instant
    // does an index name a data file other than its own.
    if (::unlink(index.final_path().c_str()) == 0) {
      detail::fsync_directory(dir, index.final_path());
    } else if (errno != ENOENT) {
      detail::fail_io(index.final_path(), "cannot replace the existing index", errno);
    }
    struct RemoveDataUnlessDone {  // a data file without its index is of no use to anyone
      const std::filesystem::path& path;
      bool armed = false;
      bool done = false;
      ~RemoveDataUnlessDone() {
        if (armed && !done) ::unlink(path.c_str());
      }
    } data_guard{data_->final_path()};
    data_->commit();
    data_guard.armed = true;
    detail::fsync_directory(dir, data_->final_path());
    index.commit();
    data_guard.done = true;
    detail::fsync_directory(dir, index.final_path());
    state_ = State::finished;
  }

  /// The prefix given to the constructor.
  [[nodiscard]] const std::filesystem::path& prefix() const noexcept { return prefix_; }
  /// The entries added so far, in add() order (offset, size and masked CRC filled in).
  [[nodiscard]] const std::vector<BundleEntry>& entries() const noexcept { return entries_; }

 private:
  enum class State { open, finished, failed };

  void check_usable(const char* what) const {
    if (!data_) {
      ::hookfuse::detail::fail<RuntimeError>(std::string("BundleWriter: ") + what +
                                             " called on a moved-from writer");
    }
    if (state_ != State::open) {
      ::hookfuse::detail::fail<RuntimeError>(
          "BundleWriter(" + prefix_.string() + "): " + what +
          (state_ == State::finished ? " called after finish()" : " called after an I/O error"));
    }
  }

  void add_bytes(std::string_view key, DataType dtype, const TensorShape& shape, const void* bytes,
                 std::size_t size, std::size_t count) {
    check_usable("add()");
    const std::string where = "BundleWriter(" + prefix_.string() + ")";
    if (key.empty()) {
      ::hookfuse::detail::fail<ValueError>(
          where + ": empty tensor key; the empty key holds the bundle's header");
    }
    if (keys_.contains(key)) {
      ::hookfuse::detail::fail<ValueError>(where + ": duplicate tensor key '" + std::string(key) +
                                           "'");
    }
    const auto elements = detail::checked_num_elements(shape.dim_sizes());
    if (!elements) {
      ::hookfuse::detail::fail<ValueError>(
          where + ": tensor '" + std::string(key) + "' has shape " + shape.debug_string() +
          ", expected non-negative dimensions whose product fits in int64");
    }
    if (static_cast<std::uint64_t>(*elements) != count) {
      ::hookfuse::detail::fail<ValueError>(
          where + ": tensor '" + std::string(key) + "' of shape " + shape.debug_string() +
          " needs " + std::to_string(*elements) + " elements, got " + std::to_string(count));
    }
    BundleEntry e;
    e.key = std::string(key);
    e.dtype = dtype;
    e.shape = shape;
    e.offset = static_cast<std::int64_t>(data_->size());
    e.size = static_cast<std::int64_t>(size);
    e.crc32c = masked_crc32c(bytes, size);
    state_ = State::failed;  // an IoError below leaves the writer unusable
    data_->append(bytes, size);
    state_ = State::open;
    keys_.insert(e.key);
    entries_.push_back(std::move(e));
  }

  std::filesystem::path prefix_;
  std::filesystem::path abs_prefix_;  // where the files go, whatever the current directory
  std::unique_ptr<detail::TempFile> data_;
  std::vector<BundleEntry> entries_;
  std::set<std::string, std::less<>> keys_;
  State state_ = State::open;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using BundleWriter = BasicBundleWriter<void>;

}  // namespace hookfuse::io
