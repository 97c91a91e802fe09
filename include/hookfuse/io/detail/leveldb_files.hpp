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
