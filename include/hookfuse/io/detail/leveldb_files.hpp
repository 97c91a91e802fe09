// hookfuse/io/detail/leveldb_files.hpp: LevelDB's file interfaces over hookfuse's own files: the
// table builder writes into a TempFile, and tables are read from bytes held in memory.
#pragma once

#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/slice.h>
#include <leveldb/status.h>
#include <leveldb/table.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "hookfuse/io/detail/posix_file.hpp"
#include "hookfuse/io/errors.hpp"

namespace hookfuse::io::detail {

/// leveldb::WritableFile appending to a TempFile. An IoError of the file is kept (error()) and
/// returned to LevelDB as a Status, so no exception crosses LevelDB's frames.
template <class = void>
class BasicTableSink final : public leveldb::WritableFile {
 public:
  explicit BasicTableSink(TempFile& file) noexcept : file_(file) {}

  leveldb::Status Append(const leveldb::Slice& data) override {
    if (!error_.empty()) return leveldb::Status::IOError(error_);
    try {
      file_.append(data.data(), data.size());
    } catch (const IoError& e) {
      error_ = e.what();
      return leveldb::Status::IOError(error_);
    }
    return leveldb::Status::OK();
  }
  // Durability is TempFile::commit()'s job, after the whole table is built.
  leveldb::Status Close() override { return leveldb::Status::OK(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return leveldb::Status::OK(); }

  /// The IoError message of a failed append, or "".
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  TempFile& file_;
  std::string error_;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using TableSink = BasicTableSink<void>;

/// leveldb::RandomAccessFile over a whole file's bytes in memory. A read past the end is a
/// Corruption status, never an out-of-bounds read. LevelDB asks for a block as its size plus the
/// 5-byte trailer; a request for fewer bytes means that sum wrapped around (a forged block
/// handle), which ReadBlock would then index out of bounds: it is refused here.
template <class = void>
class BasicMemoryTableFile final : public leveldb::RandomAccessFile {
 public:
  static constexpr std::size_t kBlockTrailerSize = 5;

  explicit BasicMemoryTableFile(std::string_view bytes) noexcept : bytes_(bytes) {}

  leveldb::Status Read(std::uint64_t offset, std::size_t n, leveldb::Slice* result,
                       char* /*scratch*/) const override {
    if (n < kBlockTrailerSize) {
      return leveldb::Status::Corruption("block handle size overflows");
    }
    if (offset > bytes_.size() || n > bytes_.size() - offset) {
      return leveldb::Status::Corruption("block [" + std::to_string(offset) + ", +" +
                                         std::to_string(n) + ") reaches past the end of the " +
                                         std::to_string(bytes_.size()) + "-byte file");
    }
    *result = leveldb::Slice(bytes_.data() + offset, n);
    return leveldb::Status::OK();
  }

 private:
  std::string_view bytes_;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using MemoryTableFile = BasicMemoryTableFile<void>;

/// The LevelDB table layout (table/format.h): a 48-byte footer ending in the magic number, its
/// two block handles (metaindex, then index) as varint64 (offset, size) pairs; each block is
/// followed by a 5-byte trailer (compression type, masked CRC32C).
inline constexpr std::size_t kTableFooterSize = 48;
inline constexpr std::uint64_t kTableMagic = 0xdb4775248b80fb57ull;
inline constexpr std::uint64_t kTableBlockTrailerSize = 5;

/// Decodes a varint64 at `p` (up to `end`); false when it is truncated or longer than 10 bytes.
inline bool decode_varint64(const char*& p, const char* end, std::uint64_t& v) noexcept {
  v = 0;
  for (unsigned shift = 0; shift <= 63 && p < end; shift += 7) {
    const auto byte = static_cast<std::uint8_t>(*p++);
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

/// Throws DataLossError naming `file` when the block `what` at `offset` of `size` bytes plus
/// its trailer does not end inside the table `bytes`, or when it is snappy-compressed (trailer
/// type 1) and its snappy header claims more than 64 uncompressed bytes per compressed byte
/// (snappy expands at most about 21-fold; LevelDB allocates the claimed size before inflating).
template <class = void>
void check_block_handle(const std::string& bytes, const std::string& file,
                        const std::string& what, std::uint64_t offset, std::uint64_t size) {
  const std::uint64_t file_size = bytes.size();
  if (offset > file_size || size > file_size - offset ||
      kTableBlockTrailerSize > file_size - offset - size) {
    ::hookfuse::detail::fail<DataLossError>(
        file + ": " + what + " at offset " + std::to_string(offset) + " of size " +
        std::to_string(size) + " (+" + std::to_string(kTableBlockTrailerSize) +
        "-byte trailer) reaches past the end of the file, which has " + std::to_string(file_size) +
        " bytes (forged or truncated index)");
  }
  if (bytes[static_cast<std::size_t>(offset + size)] != '\1') return;  // not snappy
  const char* p = bytes.data() + offset;
  std::uint64_t claimed = 0;
  if (!decode_varint64(p, p + size, claimed)) return;  // LevelDB reports it
  if (claimed / 64 > size) {
    ::hookfuse::detail::fail<DataLossError>(
        file + ": " + what + " at offset " + std::to_string(offset) +
        ": snappy-compressed block of " + std::to_string(size) + " bytes claims " +
        std::to_string(claimed) + " uncompressed bytes, expected at most 64 per compressed byte");
  }
}

/// Checks every block handle of the table `bytes` (the file `file`) against its size before
/// LevelDB reads a block: LevelDB's ReadBlock allocates a handle's size before reading, so a
/// forged size would allocate that much (std::bad_alloc, or a sanitizer's allocation-size
/// report). Checks the footer's metaindex and index handles, then each data block handle of
/// the index block. A footer or index block that does not decode is left to LevelDB, which
/// reports it. The index block (possibly snappy-compressed) is listed through LevelDB itself:
/// a second, in-memory table whose only data block is that index block.
template <class = void>
void check_block_handles(const std::string& bytes, const std::string& file) {
  if (bytes.size() < kTableFooterSize) return;
  const char* footer = bytes.data() + bytes.size() - kTableFooterSize;
  std::uint64_t magic = 0;
  std::memcpy(&magic, footer + kTableFooterSize - 8, 8);  // little-endian (bundle_reader.hpp)
  if (magic != kTableMagic) return;
  const char* p = footer;
  const char* end = footer + kTableFooterSize - 8;
  std::uint64_t meta_offset = 0, meta_size = 0, index_offset = 0, index_size = 0;
  if (!decode_varint64(p, end, meta_offset) || !decode_varint64(p, end, meta_size) ||
      !decode_varint64(p, end, index_offset) || !decode_varint64(p, end, index_size)) {
    return;
  }
  check_block_handle(bytes, file, "metaindex block (footer)", meta_offset, meta_size);
  check_block_handle(bytes, file, "index block (footer)", index_offset, index_size);

  // The table [index block + trailer][one-entry index block + trailer][footer].
  std::string table(bytes, static_cast<std::size_t>(index_offset),
                    static_cast<std::size_t>(index_size + kTableBlockTrailerSize));
  const std::uint64_t outer_offset = table.size();
  std::string handle;
  for (std::uint64_t v : {std::uint64_t{0}, index_size}) {
    for (; v >= 0x80; v >>= 7) handle.push_back(static_cast<char>((v & 0x7f) | 0x80));
    handle.push_back(static_cast<char>(v));
  }
  const auto fixed32 = [&table](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) table.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  table.push_back('\0');                                   // shared key bytes
  table.push_back('\1');                                   // unshared key bytes
  table.push_back(static_cast<char>(handle.size()));       // value bytes (< 0x80)
  table.push_back('k');
  table += handle;
  fixed32(0);  // restart offset
  fixed32(1);  // restart count
  const std::uint64_t outer_size = table.size() - outer_offset;
  table.append(kTableBlockTrailerSize, '\0');  // uncompressed; CRC not verified
  std::string footer_out;
  for (std::uint64_t v : {outer_offset, outer_size, outer_offset, outer_size}) {
    for (; v >= 0x80; v >>= 7) footer_out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    footer_out.push_back(static_cast<char>(v));
  }
  footer_out.resize(kTableFooterSize - 8, '\0');
  for (int i = 0; i < 8; ++i) footer_out.push_back(static_cast<char>((kTableMagic >> (8 * i)) & 0xff));
  table += footer_out;

  BasicMemoryTableFile<> source(table);
  leveldb::Options options;
  leveldb::Table* raw = nullptr;
  if (!leveldb::Table::Open(options, &source, table.size(), &raw).ok()) return;
  const std::unique_ptr<leveldb::Table> outer(raw);
  leveldb::ReadOptions read;
  read.fill_cache = false;
  const std::unique_ptr<leveldb::Iterator> it(outer->NewIterator(read));
  std::size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
    const leveldb::Slice value = it->value();
    const char* q = value.data();
    std::uint64_t offset = 0, size = 0;
    if (!decode_varint64(q, q + value.size(), offset) ||
        !decode_varint64(q, q + value.size(), size)) {
      continue;  // LevelDB reports "bad block handle"
    }
    check_block_handle(bytes, file,
                       "data block " + std::to_string(n) + " (index block entry, last key '" +
                           it->key().ToString() + "')",
                       offset, size);
  }
}

/// For the message of a corrupt index: the tensors whose entries sit in the damaged part
/// (those after `after`), as far as a second pass without CRC checks can still list them.
template <class = void>
[[nodiscard]] std::string damaged_tensors(const std::string& bytes, const std::string& after,
                                          bool after_header) {
  std::string names;
  int listed = 0;
  try {
    MemoryTableFile source(bytes);
    leveldb::Options options;
    leveldb::Table* raw = nullptr;
    if (leveldb::Table::Open(options, &source, bytes.size(), &raw).ok()) {
      const std::unique_ptr<leveldb::Table> table(raw);
      const std::unique_ptr<leveldb::Iterator> it(table->NewIterator(leveldb::ReadOptions()));
      for (it->SeekToFirst(); it->Valid() && listed < 8; it->Next()) {
        const std::string key = it->key().ToString();
        if (key.empty() || (after_header && key <= after)) continue;
        names += (listed++ == 0 ? "'" : ", '") + key + "'";
      }
    }
  } catch (const std::bad_alloc&) {
  }
  if (listed == 0) return "the tensor entries in the damaged block cannot be listed";
  return "damaged block holds the entries of tensor(s) " + names + (listed == 8 ? ", ..." : "");
}

}  // namespace hookfuse::io::detail
