// hookfuse/io/bundle_reader.hpp: reads a TensorFlow V2 checkpoint (tensor bundle): the LevelDB
// table "P.index" (snappy-compressed blocks included) and the tensors' bytes in its data files
// "P.data-0000K-of-0000N", one per shard, every CRC checked (TensorFlow's BundleReader).
#pragma once

#include <leveldb/comparator.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/bundle_entry.hpp"
#include "hookfuse/io/bundle_paths.hpp"
#include "hookfuse/io/checkpoint_state.hpp"
#include "hookfuse/io/crc32c.hpp"
#include "hookfuse/io/data_type.hpp"
#include "hookfuse/io/detail/checkpoint_path_errors.hpp"
#include "hookfuse/io/detail/leveldb_files.hpp"
#include "hookfuse/io/detail/posix_file.hpp"
#include "hookfuse/io/detail/string_tensor.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/tensor_shape.hpp"

namespace hookfuse::io {

static_assert(std::endian::native == std::endian::little,
              "hookfuse/io reads tensors as in memory: checkpoints are little-endian");

/// The tensors of the bundle with prefix P (TensorFlow's `BundleReader(env, prefix)`).
///
/// The constructor reads and checks the whole index: the table's block CRCs, the header
/// (num_shards >= 1, little-endian, a version this reader accepts) and every entry (wire types,
/// a known non-negative shape whose element count fits int64, byte count = elements x dtype
/// size for the numeric dtypes, offset and size >= 0, shard_id < num_shards). It opens no data
/// file: as TensorFlow's BundleReader (tensor_bundle.cc, GetValue), the data file of shard K,
/// "P.data-0000K-of-0000N", is opened when a tensor stored in it is first read, so a bundle
/// with a missing shard opens and its other shards' tensors read. A tensor's bytes are read,
/// checked to lie inside their shard's file and their CRC32C checked, when it is looked up.
/// Thread-compatible: const lookups may run concurrently (shards are opened under a mutex,
/// then read with positioned reads).
///
/// Errors, each naming the file (absolute path), the tensor key and what was expected:
/// io::NotFoundError for a missing P.index (naming the files expected, those found, and the
/// latest checkpoint of P's directory if it has one), for a missing data file when a tensor
/// stored in it is read (naming that shard's file), or a key not in the bundle; io::DataLossError
/// for a path that is one file of a checkpoint ("P.index", "P.data-00000-of-00001") instead of its
/// prefix, saying which prefix to pass; io::DataLossError for any corruption (CRC mismatch,
/// truncated or garbage index, entry pointing past the data file, malformed proto); io::IoError
/// when the system refuses a read; hookfuse::ValueError for a lookup with the wrong element type or
/// buffer size, or of a dtype hookfuse does not read.
template <class = void>
class BasicBundleReader {
 public:
  explicit BasicBundleReader(std::filesystem::path prefix)
      : prefix_(std::move(prefix)),
        abs_prefix_(detail::absolute_path(prefix_)),
        index_path_(meta_filename(abs_prefix_)) {
    detail::check_not_a_checkpoint_file(abs_prefix_);
    const std::string bytes = read_index_file();
    read_table(bytes);
    for (const BundleEntry& e : entries_) check_entry(e);
  }

  /// The prefix given to the constructor.
  [[nodiscard]] const std::filesystem::path& prefix() const noexcept { return prefix_; }
  /// "P.index", P made absolute.
  [[nodiscard]] const std::filesystem::path& index_path() const noexcept { return index_path_; }
  /// The data file of shard `shard_id`: "P.data-0000K-of-0000N", P made absolute, N the
  /// header's num_shards (not checked to exist).
  [[nodiscard]] std::filesystem::path data_path(std::int32_t shard_id = 0) const {
    return data_filename(abs_prefix_, shard_id, num_shards_);
  }
  /// The header's num_shards: how many data files the bundle has.
  [[nodiscard]] std::int32_t num_shards() const noexcept { return num_shards_; }

  /// Every tensor entry, sorted by key (bytewise, as in the index); the header is not listed.
  [[nodiscard]] std::span<const BundleEntry> entries() const noexcept { return entries_; }

  /// True when the bundle holds tensor `key` (TensorFlow's `BundleReader::Contains`).
  [[nodiscard]] bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }

  /// The entry of `key`: dtype, TensorFlow shape, byte offset and size (TensorFlow's
  /// `LookupDtypeAndShape`). Throws NotFoundError naming the key and the index file.
  [[nodiscard]] const BundleEntry& entry(std::string_view key) const {
    const BundleEntry* e = find(key);
    if (e == nullptr) {
      ::hookfuse::detail::fail<NotFoundError>(index_path_.string() + ": tensor '" +
                                              std::string(key) + "' not found in checkpoint");
    }
    return *e;
  }

  /// Reads tensor `key` into `out` (row-major, `shape.num_elements()` elements of T), after
  /// checking that its dtype is data_type_of<T> and its element count is out.size()
  /// (hookfuse::ValueError otherwise). The CRC32C of the stored bytes is checked: DataLossError
  /// naming the data file and the key on a mismatch (out then holds the corrupt bytes).
  template <TensorElement T>
  void lookup(std::string_view key, std::span<T> out) const {
    const BundleEntry& e = readable_entry(key, data_type_of<T>);
    const auto n = static_cast<std::uint64_t>(e.shape.num_elements());
    if (n != out.size()) {
      ::hookfuse::detail::fail<ValueError>(
          index_path_.string() + ": tensor '" + e.key + "' has shape " + e.shape.debug_string() +
          " (" + std::to_string(n) + " elements), the buffer holds " + std::to_string(out.size()));
    }
    read_checked(e, out.data());
  }

  /// lookup() into a new vector of shape.num_elements() elements.
  template <TensorElement T>
  [[nodiscard]] std::vector<T> lookup(std::string_view key) const {
    const BundleEntry& e = readable_entry(key, data_type_of<T>);
    check_region(shard_of(e), e);  // before allocating what a forged entry says
    std::vector<T> out(static_cast<std::size_t>(e.shape.num_elements()));
    read_checked(e, out.data());
    return out;
  }

  /// The stored bytes of `key`, whatever its dtype (size bytes; DT_STRING in TensorFlow's string
  /// layout), after the same CRC checks as lookup(). ValueError for a partitioned variable.
  [[nodiscard]] std::vector<std::byte> lookup_bytes(std::string_view key) const {
    const BundleEntry& e = entry(key);
    check_not_sliced(e);
    const Shard& shard = shard_of(e);
    check_region(shard, e);
    std::vector<std::byte> bytes(static_cast<std::size_t>(e.size));
    if (e.dtype == DataType::DT_STRING) {
      read_region(shard, e, bytes.data());
      (void)detail::decode_string_tensor(bytes, e, where(shard.path, e.key));
    } else {
      read_checked(e, bytes.data());
    }
    return bytes;
  }

  /// The elements of a DT_STRING tensor, row-major (TF2 checkpoints hold one:
  /// `_CHECKPOINTABLE_OBJECT_GRAPH`, a serialized TrackableObjectGraph). Checks the length
  /// checksum and the tensor's CRC32C (DataLossError); ValueError for another dtype.
  [[nodiscard]] std::vector<std::string> lookup_strings(std::string_view key) const {
    const BundleEntry& e = readable_entry(key, DataType::DT_STRING);
    const Shard& shard = shard_of(e);
    check_region(shard, e);
    std::vector<std::byte> bytes(static_cast<std::size_t>(e.size));
    read_region(shard, e, bytes.data());
    return detail::decode_string_tensor(bytes, e, where(shard.path, e.key));
  }

 private:
  [[nodiscard]] const BundleEntry* find(std::string_view key) const noexcept {
    const auto it = std::lower_bound(
        entries_.begin(), entries_.end(), key,
        [](const BundleEntry& e, std::string_view k) { return std::string_view(e.key) < k; });
    return it != entries_.end() && it->key == key ? &*it : nullptr;
  }

  [[nodiscard]] std::string where(const std::filesystem::path& file, const std::string& key) const {
    return file.string() + ": tensor '" + key + "'";
  }

  std::string read_index_file() {
    int err = 0;
    const detail::Fd fd = detail::open_read_only(index_path_, err);
    if (!fd) {
      if (err == ENOENT) {
        ::hookfuse::detail::fail<NotFoundError>(index_path_.string() + ": not found; " +
                                                detail::no_checkpoint_at(abs_prefix_));
      }
      detail::fail_io(index_path_, "cannot open the checkpoint index", err);
    }
    const std::uint64_t size = detail::regular_file_size(fd, index_path_);
    std::string bytes(static_cast<std::size_t>(size), '\0');
    if (!detail::pread_exact(fd, index_path_, 0, bytes.data(), bytes.size())) {
      detail::fail_data_loss(index_path_.string(), "file shrank while being read: expected " +
                                                       std::to_string(size) + " bytes, found fewer");
    }
    return bytes;
  }

  void read_table(const std::string& bytes) {
    const std::string file = index_path_.string();
    detail::check_block_handles(bytes, file);
    detail::MemoryTableFile source(bytes);
    leveldb::Options options;
    options.comparator = leveldb::BytewiseComparator();
    options.paranoid_checks = true;  // also check the index and metaindex blocks' CRCs
    leveldb::Table* raw = nullptr;
    leveldb::Status s;
    try {
      s = leveldb::Table::Open(options, &source, bytes.size(), &raw);
    } catch (const std::bad_alloc&) {
      s = leveldb::Status::Corruption("block handle with an impossible size");
    }
    const std::unique_ptr<leveldb::Table> table(raw);
    if (!s.ok()) {
      detail::fail_data_loss(file, "not a valid checkpoint index (LevelDB table of " +
                                       std::to_string(bytes.size()) + " bytes): " + s.ToString() +
                                       "; " + detail::damaged_tensors(bytes, {}, false));
    }
    leveldb::ReadOptions read;
    read.verify_checksums = true;
    read.fill_cache = false;
    const std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
    bool have_header = false;
    try {
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        const std::string_view key(it->key().data(), it->key().size());
        const std::string_view value(it->value().data(), it->value().size());
        if (!have_header) {
          if (!key.empty()) {
            detail::fail_data_loss(
                file, "no header entry (the empty key) before tensor '" + std::string(key) + "'");
          }
          check_header(detail::decode_header(value, file + ": header entry"));
          have_header = true;
          continue;
        }
        if (!entries_.empty() ? key <= std::string_view(entries_.back().key) : key.empty()) {
          detail::fail_data_loss(
              file, "key '" + std::string(key) + "' is out of order (keys must increase bytewise)");
        }
        entries_.push_back(
            detail::decode_entry(std::string(key), value, where(index_path_, std::string(key))));
      }
    } catch (const std::bad_alloc&) {
      detail::fail_data_loss(file, "block handle with an impossible size");
    }
    if (!it->status().ok()) {
      const std::string after = entries_.empty() ? std::string() : entries_.back().key;
      detail::fail_data_loss(file, it->status().ToString() + "; " +
                                       detail::damaged_tensors(bytes, after, have_header));
    }
    if (!have_header) detail::fail_data_loss(file, "empty table: no header entry (the empty key)");
  }

  void check_header(const detail::BundleHeader& h) {
    const std::string file = index_path_.string() + ": header";
    if (h.endianness == 1) {
      detail::fail_data_loss(file,
                             "BundleHeaderProto.endianness (field 2) is 1 (BIG), expected 0 "
                             "(LITTLE): a big-endian bundle; hookfuse reads little-endian only");
    }
    if (h.endianness != 0) {
      detail::fail_data_loss(
          file, "BundleHeaderProto.endianness (field 2) is " + std::to_string(h.endianness) +
                    ", expected 0 (LITTLE) or 1 (BIG)");
    }
    if (h.num_shards < 1) {
      detail::fail_data_loss(file, "BundleHeaderProto.num_shards (field 1) is " +
                                       std::to_string(h.num_shards) +
                                       ", expected >= 1 (one data file per shard)");
    }
    if (h.producer < kTensorBundleMinProducer) {
      detail::fail_data_loss(file, "VersionDef.producer (field 1) is " +
                                       std::to_string(h.producer) + ", expected >= " +
                                       std::to_string(kTensorBundleMinProducer));
    }
    if (h.min_consumer > kTensorBundleVersion) {
      detail::fail_data_loss(file,
                             "VersionDef.min_consumer (field 2) is " +
                                 std::to_string(h.min_consumer) + ": needs a reader of version >= " +
                                 std::to_string(h.min_consumer) + ", this one is " +
                                 std::to_string(kTensorBundleVersion));
    }
    if (std::find(h.bad_consumers.begin(), h.bad_consumers.end(), kTensorBundleVersion) !=
        h.bad_consumers.end()) {
      detail::fail_data_loss(file, "VersionDef.bad_consumers (field 3) lists " +
                                       std::to_string(kTensorBundleVersion) +
                                       ", this reader's version, as a bad consumer; expected it "
                                       "absent");
    }
    num_shards_ = static_cast<std::int32_t>(h.num_shards);
  }

  void check_entry(const BundleEntry& e) const {
    const std::string at = where(index_path_, e.key);
    if (e.shard_id < 0 || e.shard_id >= num_shards_) {
      detail::fail_data_loss(
          at, "BundleEntryProto.shard_id (field 3) is " + std::to_string(e.shard_id) +
                  ", expected 0" +
                  (num_shards_ > 1 ? " to " + std::to_string(num_shards_ - 1) : std::string()) +
                  " (the header's num_shards is " + std::to_string(num_shards_) + ")");
    }
    if (e.offset < 0 || e.size < 0) {
      detail::fail_data_loss(at, "BundleEntryProto.offset (field 4) " + std::to_string(e.offset) +
                                     " and size (field 5) " + std::to_string(e.size) +
                                     ", expected both >= 0");
    }
    const std::size_t elem = data_type_size(e.dtype);
    if (elem != 0 && !e.sliced) {
      const std::int64_t n = e.shape.num_elements();  // checked by decode_shape
      std::int64_t expected = 0;
      if (__builtin_mul_overflow(n, static_cast<std::int64_t>(elem), &expected) ||
          expected != e.size) {
        detail::fail_data_loss(at, "size " + std::to_string(e.size) + " bytes, expected " +
                                       std::to_string(n) + " elements x " + std::to_string(elem) +
                                       " bytes of " + describe_data_type(e.dtype) + " for shape " +
                                       e.shape.debug_string());
      }
    }
  }

  void check_not_sliced(const BundleEntry& e) const {
    if (e.sliced) {
      ::hookfuse::detail::fail<ValueError>(
          where(index_path_, e.key) +
          ": a partitioned variable (stored in slices), which hookfuse does not read");
    }
  }

  const BundleEntry& readable_entry(std::string_view key, DataType wanted) const {
    const BundleEntry& e = entry(key);
    check_not_sliced(e);
    if (e.dtype != wanted) {
      const bool supported = is_supported_numeric(e.dtype) || e.dtype == DataType::DT_STRING;
      ::hookfuse::detail::fail<ValueError>(
          where(index_path_, e.key) + " has " + (supported ? "dtype " : "") +
          describe_data_type(e.dtype) + ", read as " + describe_data_type(wanted) +
          (supported ? "" : "; hookfuse reads DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_STRING"));
    }
    return e;
  }

  /// One opened data file: its absolute path, descriptor and size when opened.
  struct Shard {
    std::filesystem::path path;
    detail::Fd fd;
    std::uint64_t size = 0;
  };

  /// The data files opened so far, by shard id (only the shards whose tensors were read, so a
  /// forged num_shards allocates nothing). Behind a pointer so that the reader stays movable.
  struct ShardFiles {
    std::mutex mutex;
    std::map<std::int32_t, Shard> open;
  };

  /// The data file holding `e` (shard e.shard_id, checked at construction), opened on first use
  /// (TensorFlow's GetValue). NotFoundError naming the file when it does not exist, IoError when
  /// the system refuses it; a failed open is retried by the next read.
  const Shard& shard_of(const BundleEntry& e) const {
    const auto id = static_cast<std::int32_t>(e.shard_id);
    const std::lock_guard<std::mutex> lock(shards_->mutex);
    if (const auto it = shards_->open.find(id); it != shards_->open.end()) return it->second;
    Shard shard;
    shard.path = data_path(id);
    int err = 0;
    shard.fd = detail::open_read_only(shard.path, err);
    if (!shard.fd) {
      const std::string which =
          num_shards_ > 1 ? "shard " + std::to_string(id) + " of " + std::to_string(num_shards_)
                          : std::string("the bundle's only shard");
      if (err == ENOENT) {
        ::hookfuse::detail::fail<NotFoundError>(shard.path.string() + ": data file not found (" +
                                                which + "); the index " + index_path_.string() +
                                                " stores tensor '" + e.key + "' in it");
      }
      detail::fail_io(shard.path, "cannot open the checkpoint data file (" + which + ")", err);
    }
    shard.size = detail::regular_file_size(shard.fd, shard.path);
    return shards_->open.emplace(id, std::move(shard)).first->second;
  }

  /// DataLossError naming the data file and the key unless the `e.size` bytes of `e` lie
  /// inside `shard`'s file; checked before a buffer of that size is allocated.
  void check_region(const Shard& shard, const BundleEntry& e) const {
    const auto offset = static_cast<std::uint64_t>(e.offset);  // >= 0: check_entry
    const auto size = static_cast<std::uint64_t>(e.size);
    if (offset > shard.size || size > shard.size - offset) {
      detail::fail_data_loss(where(shard.path, e.key),
                             "entry says bytes [" + std::to_string(offset) + ", " +
                                 std::to_string(offset) + "+" + std::to_string(size) +
                                 "), but the data file has " + std::to_string(shard.size) +
                                 " bytes (truncated?)");
    }
  }

  /// Reads the `e.size` bytes of `e` from `shard` after checking that they lie inside the file.
  void read_region(const Shard& shard, const BundleEntry& e, void* out) const {
    check_region(shard, e);
    const auto offset = static_cast<std::uint64_t>(e.offset);
    const auto size = static_cast<std::uint64_t>(e.size);
    if (!detail::pread_exact(shard.fd, shard.path, offset, out, static_cast<std::size_t>(size))) {
      detail::fail_data_loss(where(shard.path, e.key),
                             "the file ends before the tensor's " + std::to_string(e.size) +
                                 " bytes at offset " + std::to_string(offset) +
                                 " (expected them; it shrank while being read)");
    }
  }

  void read_checked(const BundleEntry& e, void* out) const {
    const Shard& shard = shard_of(e);
    read_region(shard, e, out);
    const std::uint32_t actual = crc32c(out, static_cast<std::size_t>(e.size));
    if (actual != unmask_crc(e.crc32c))
      detail::fail_crc_mismatch(where(shard.path, e.key), e, actual);
  }

  std::filesystem::path prefix_;
  std::filesystem::path abs_prefix_;
  std::filesystem::path index_path_;
  std::int32_t num_shards_ = 1;
  std::vector<BundleEntry> entries_;
  std::unique_ptr<ShardFiles> shards_ = std::make_unique<ShardFiles>();
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using BundleReader = BasicBundleReader<void>;

}  // namespace hookfuse::io
