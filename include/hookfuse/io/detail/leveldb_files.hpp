// hookfuse/io/detail/leveldb_files.hpp: LevelDB's file interfaces over hookfuse's own files: the
// table builder writes into a TempFile, and tables are read from bytes held in memory, each block
// checked before LevelDB parses it.
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
#include <vector>

#include <snappy.h>

#include "hookfuse/io/crc32c.hpp"
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

/// The LevelDB table layout (table/format.h): a 48-byte footer ending in the magic number, its
/// two block handles (metaindex, then index) as varint64 (offset, size) pairs; each block is
/// followed by a 5-byte trailer (compression type, masked CRC32C).
inline constexpr std::size_t kTableFooterSize = 48;
inline constexpr std::uint64_t kTableMagic = 0xdb4775248b80fb57ull;
inline constexpr std::uint64_t kTableBlockTrailerSize = 5;

/// Decodes a varint of `U` (std::uint32_t: at most 5 bytes, as LevelDB's GetVarint32Ptr;
/// std::uint64_t: at most 10) at `p`, up to `end`; false when it is truncated or too long.
template <class U>
bool decode_varint(const char*& p, const char* end, U& v) noexcept {
  v = 0;
  for (unsigned shift = 0; shift < 8 * sizeof(U) && p < end; shift += 7) {
    const auto byte = static_cast<std::uint8_t>(*p++);
    v |= static_cast<U>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

/// An empty string when LevelDB can walk the entries of the block `contents` (uncompressed,
/// without its trailer) without reading out of bounds; otherwise what is wrong, with the entry's
/// byte offset. LevelDB's DecodeEntry (table/block.cc) checks an entry's unshared key length
/// plus value length against the bytes left in 32-bit arithmetic, so two forged varint32s whose
/// sum wraps past 2^32 pass it and the iterator copies up to 4 GiB from the entry. This walks
/// every entry LevelDB can reach (from the first byte and from each restart point, as
/// SeekToFirst, Next and Seek do) and refuses a sum of 2^32 or more. Other damage (a sum past
/// the block's end, a shared length longer than the previous key, bad restart points) LevelDB
/// reports itself, safely. O(block size): each byte is an entry start at most once.
template <class = void>
[[nodiscard]] std::string check_block_entries(std::string_view contents) {
  constexpr std::size_t kRestartSize = 4;
  if (contents.size() < kRestartSize) return {};  // LevelDB: "bad block contents"
  const auto fixed32 = [&contents](std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) {
      v = (v << 8) | static_cast<std::uint8_t>(contents[at + static_cast<std::size_t>(i)]);
    }
    return v;
  };
  const std::uint64_t num_restarts = fixed32(contents.size() - kRestartSize);
  if (num_restarts > (contents.size() - kRestartSize) / kRestartSize) return {};  // LevelDB's
  const std::size_t restarts =
      contents.size() - (1 + static_cast<std::size_t>(num_restarts)) * kRestartSize;
  std::vector<bool> visited(restarts, false);
  const auto walk = [&](std::size_t at) -> std::string {
    while (at < restarts && !visited[at]) {
      visited[at] = true;
      const char* p = contents.data() + at;
      const char* limit = contents.data() + restarts;
      if (limit - p < 3) return {};  // LevelDB stops: corrupt
      std::uint32_t shared = 0, non_shared = 0, value_length = 0;
      if (!decode_varint(p, limit, shared) || !decode_varint(p, limit, non_shared) ||
          !decode_varint(p, limit, value_length)) {
        return {};  // LevelDB stops: corrupt
      }
      const std::uint64_t lengths = std::uint64_t{non_shared} + value_length;
      if (lengths > 0xffffffffu) {
        return "entry at byte " + std::to_string(at) + ": unshared key length " +
               std::to_string(non_shared) + " plus value length " +
               std::to_string(value_length) + " is past 4 GiB, with " +
               std::to_string(limit - p) + " bytes left in the block";
      }
      if (lengths > static_cast<std::uint64_t>(limit - p)) return {};  // LevelDB stops
      at = static_cast<std::size_t>(p - contents.data()) + static_cast<std::size_t>(lengths);
    }
    return {};
  };
  if (std::string bad = walk(0); !bad.empty()) return bad;
  for (std::size_t i = 0; i < num_restarts; ++i) {
    if (std::string bad = walk(fixed32(restarts + i * kRestartSize)); !bad.empty()) return bad;
  }
  return {};
}

/// An empty string when the snappy-compressed block `data` claims a size it can inflate to,
/// otherwise what is wrong. Snappy expands at most about 21-fold, and LevelDB allocates the
/// claimed size before inflating, so a claim above 64 bytes per compressed byte is refused. A
/// header that does not decode is left to LevelDB, which reports it.
template <class = void>
[[nodiscard]] std::string check_snappy_claim(std::string_view data) {
  std::size_t claimed = 0;
  if (!snappy::GetUncompressedLength(data.data(), data.size(), &claimed)) return {};
  if (claimed / 64 <= data.size()) return {};
  return "snappy-compressed block of " + std::to_string(data.size()) + " bytes claims " +
         std::to_string(claimed) + " uncompressed bytes, expected at most 64 per compressed byte";
}

/// An empty string when LevelDB can read the block `block` (its bytes and 5-byte trailer, at
/// `offset` of the file) safely, otherwise what is wrong. A snappy-compressed block (trailer
/// type 1) is inflated first (LevelDB's own decompressor is not part of its public API), after
/// its claimed size is checked. Blocks that do not inflate or have an unknown type are left to
/// LevelDB, which reports them.
template <class = void>
[[nodiscard]] std::string check_block(std::string_view block, std::uint64_t offset) {
  const std::string_view data = block.substr(0, block.size() - kTableBlockTrailerSize);
  const char type = block[data.size()];
  std::uint32_t stored_crc = 0;
  for (int i = 3; i >= 0; --i) {
    stored_crc = (stored_crc << 8) |
                 static_cast<std::uint8_t>(block[data.size() + 1 + static_cast<std::size_t>(i)]);
  }
  const bool crc_ok = unmask_crc(stored_crc) == crc32c(block.data(), data.size() + 1);
  const std::string where = "block at offset " + std::to_string(offset) + " (" +
                            std::to_string(data.size()) + " bytes" +
                            (crc_ok ? "" : ", block checksum mismatch") + "): ";
  std::string inflated;
  std::string_view contents = data;
  if (type == '\1') {
    if (std::string bad = check_snappy_claim(data); !bad.empty()) return where + bad;
    if (!snappy::Uncompress(data.data(), data.size(), &inflated)) return {};
    contents = inflated;
  } else if (type != '\0') {
    return {};  // LevelDB: "bad block type"
  }
  std::string bad = check_block_entries(contents);
  return bad.empty() ? bad : where + bad;
}

/// leveldb::RandomAccessFile over a whole file's bytes in memory. A read past the end is a
/// Corruption status, never an out-of-bounds read. LevelDB asks for a block as its size plus the
/// 5-byte trailer; a request for fewer bytes means that sum wrapped around (a forged block
/// handle), which ReadBlock would then index out of bounds: it is refused here. Every block read
/// after the footer (the first read, of the last 48 bytes) is checked by check_block before
/// LevelDB parses it, so that forged entry lengths are a Corruption status too.
template <class = void>
class BasicMemoryTableFile final : public leveldb::RandomAccessFile {
 public:
  explicit BasicMemoryTableFile(std::string_view bytes) noexcept : bytes_(bytes) {}

  leveldb::Status Read(std::uint64_t offset, std::size_t n, leveldb::Slice* result,
                       char* /*scratch*/) const override {
    if (n < kTableBlockTrailerSize) {
      return leveldb::Status::Corruption("block handle size overflows");
    }
    if (offset > bytes_.size() || n > bytes_.size() - offset) {
      return leveldb::Status::Corruption("block [" + std::to_string(offset) + ", +" +
                                         std::to_string(n) + ") reaches past the end of the " +
                                         std::to_string(bytes_.size()) + "-byte file");
    }
    *result = leveldb::Slice(bytes_.data() + offset, n);
    const bool footer = !footer_read_ && n == kTableFooterSize && offset + n == bytes_.size();
    footer_read_ = true;
    if (footer) return leveldb::Status::OK();
    const std::string bad = check_block(bytes_.substr(static_cast<std::size_t>(offset), n), offset);
    if (!bad.empty()) return leveldb::Status::Corruption(bad);
    return leveldb::Status::OK();
  }

 private:
  std::string_view bytes_;
  mutable bool footer_read_ = false;  // LevelDB's Table::Open reads the footer first
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using MemoryTableFile = BasicMemoryTableFile<void>;

/// Throws DataLossError naming `file` when the block `what` at `offset` of `size` bytes plus
/// its trailer does not end inside the table `bytes`, or when it is snappy-compressed (trailer
/// type 1) and claims an impossible size (check_snappy_claim).
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
  const std::string bad = check_snappy_claim(
      std::string_view(bytes).substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(size)));
  if (!bad.empty()) {
    ::hookfuse::detail::fail<DataLossError>(file + ": " + what + " at offset " +
                                            std::to_string(offset) + ": " + bad);
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
  if (!decode_varint(p, end, meta_offset) || !decode_varint(p, end, meta_size) ||
      !decode_varint(p, end, index_offset) || !decode_varint(p, end, index_size)) {
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
    if (!decode_varint(q, q + value.size(), offset) ||
        !decode_varint(q, q + value.size(), size)) {
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
