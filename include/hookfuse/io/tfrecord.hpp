// hookfuse/io/tfrecord.hpp: TFRecord framing (TensorFlow's io::RecordWriter / RecordReader,
// uncompressed), the container of TensorBoard event files.
//
// A file is a sequence of records, with no header or footer:
//
//   uint64 LE  length                          payload size in bytes
//   uint32 LE  mask_crc(crc32c(length bytes))
//   byte[length] payload
//   uint32 LE  mask_crc(crc32c(payload))
//
// so every record costs 16 bytes on top of its payload (tensorflow/core/lib/io/record_writer.cc).
#pragma once

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/io/crc32c.hpp"
#include "hookfuse/io/detail/posix_file.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse::io {

/// Bytes a record adds around its payload: length (8), its CRC (4), the payload's CRC (4).
inline constexpr std::size_t kRecordOverheadBytes = 16;
/// Bytes before the payload: length (8) and its masked CRC (4).
inline constexpr std::size_t kRecordHeaderBytes = 12;

}  // namespace hookfuse::io

namespace hookfuse::io::detail::tfrecord {

template <class = void>
void put_le32(char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFFu);
}
template <class = void>
void put_le64(char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFFu);
}
template <class = void>
std::uint32_t get_le32(const unsigned char* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
         (std::uint32_t{p[3]} << 24);
}
template <class = void>
std::uint64_t get_le64(const unsigned char* p) {
  return std::uint64_t{get_le32(p)} | (std::uint64_t{get_le32(p + 4)} << 32);
}
template <class = void>
std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(v));
  return buf;
}
/// "<path>: <what>: <system reason>" for an IoError.
template <class = void>
std::string system_message(const std::filesystem::path& path, std::string_view what, int err) {
  return path.string() + ": " + std::string(what) + ": " + std::generic_category().message(err);
}

}  // namespace hookfuse::io::detail::tfrecord

namespace hookfuse::io {

/// Appends one framed record holding `payload` to `out` (length, masked CRC of the length,
/// payload, masked CRC of the payload): `payload.size() + 16` bytes.
template <class = void>
void append_record(std::string& out, std::string_view payload) {
  using namespace detail::tfrecord;
  std::array<char, kRecordHeaderBytes> header{};
  put_le64(header.data(), payload.size());
  put_le32(header.data() + 8, masked_crc32c(header.data(), 8));
  std::array<char, 4> footer{};
  put_le32(footer.data(), masked_crc32c(payload.data(), payload.size()));
  out.append(header.data(), header.size());
  out.append(payload);
  out.append(footer.data(), footer.size());
}

/// Writes TFRecord files, as TensorFlow's `tf.io.TFRecordWriter` (uncompressed). Records are
/// framed into an in-memory buffer and handed to the file whole, at `flush()`, `close()` or
/// when the buffer passes `buffer_bytes`: a process killed between flushes leaves a file of
/// complete records (only a kill during the write system call itself can cut one short, which
/// RecordReader reports as a truncated final record). Every write is checked; failures throw
/// IoError naming the path and the system's reason. Not copyable; movable.
template <class = void>
class BasicRecordWriter {
 public:
  /// Buffered bytes that trigger a write to the file without waiting for `flush()`: 1 MiB.
  static constexpr std::size_t kDefaultBufferBytes = std::size_t{1} << 20;

  /// Opens `path` for appending, creating it if absent (its directory must exist). Throws
  /// IoError naming the path when it cannot be opened for writing.
  explicit BasicRecordWriter(std::filesystem::path path,
                             std::size_t buffer_bytes = kDefaultBufferBytes)
      : path_(std::move(path)), buffer_bytes_(buffer_bytes) {
    file_ = std::fopen(path_.c_str(), "ab");
    if (file_ == nullptr) {
      hookfuse::detail::fail<IoError>(
          detail::tfrecord::system_message(path_, "cannot open for writing", errno));
    }
    // Our own buffer holds whole records; stdio's would cut them at its 4 KiB boundaries.
    std::setvbuf(file_, nullptr, _IONBF, 0);
    std::error_code ec;
    const auto size = std::filesystem::file_size(path_, ec);
    if (!ec) offset_ = size;
  }

  BasicRecordWriter(const BasicRecordWriter&) = delete;
  BasicRecordWriter& operator=(const BasicRecordWriter&) = delete;
  BasicRecordWriter(BasicRecordWriter&& other) noexcept
      : path_(std::move(other.path_)),
        file_(std::exchange(other.file_, nullptr)),
        buffer_(std::move(other.buffer_)),
        buffer_bytes_(other.buffer_bytes_),
        offset_(other.offset_) {}
  BasicRecordWriter& operator=(BasicRecordWriter&& other) noexcept {
    if (this != &other) {
      close_quietly();
      path_ = std::move(other.path_);
      file_ = std::exchange(other.file_, nullptr);
      buffer_ = std::move(other.buffer_);
      buffer_bytes_ = other.buffer_bytes_;
      offset_ = other.offset_;
    }
    return *this;
  }
  /// Writes what is buffered and closes the file; a failure here is logged to stderr, not
  /// thrown (call `close()` first to see it as an IoError).
  ~BasicRecordWriter() { close_quietly(); }

  /// Frames `payload` (any bytes, e.g. a serialized Event) as one record. Throws IoError when
  /// the writer is closed or a buffer write fails.
  void write(std::string_view payload) {
    if (file_ == nullptr) {
      hookfuse::detail::fail<IoError>(path_.string() + ": write to a closed RecordWriter");
    }
    append_record(buffer_, payload);
    ++records_;
    if (buffer_.size() >= buffer_bytes_) write_buffer();
  }

  /// Hands every buffered record to the operating system (`fflush`, TF's RecordWriter::Flush;
  /// no fsync). Throws IoError naming the path on a short write (disk full, ...).
  void flush() {
    if (file_ == nullptr) return;
    write_buffer();
    if (std::fflush(file_) != 0) {
      hookfuse::detail::fail<IoError>(
          detail::tfrecord::system_message(path_, "flush failed", errno));
    }
  }

  /// Flushes and closes the file; later calls do nothing. Throws IoError as `flush()` does, or
  /// when fclose reports an error.
  void close() {
    if (file_ == nullptr) return;
    try {
      flush();
    } catch (...) {
      std::fclose(std::exchange(file_, nullptr));
      throw;
    }
    if (std::fclose(std::exchange(file_, nullptr)) != 0) {
      hookfuse::detail::fail<IoError>(
          detail::tfrecord::system_message(path_, "close failed", errno));
    }
  }

  [[nodiscard]] bool is_open() const noexcept { return file_ != nullptr; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// Records written by this writer (buffered ones included).
  [[nodiscard]] std::size_t records_written() const noexcept { return records_; }
  /// Bytes the file holds once the buffer is written: its size at open plus every framed record.
  [[nodiscard]] std::uint64_t size_bytes() const noexcept { return offset_ + buffer_.size(); }

 private:
  void write_buffer() {
    if (buffer_.empty()) return;
    // In calls of at most kMaxIoChunkBytes (1 GiB): systems refuse single writes above 2 GiB.
    std::size_t n = 0;
    while (n < buffer_.size()) {
      const std::size_t chunk = std::min(buffer_.size() - n, detail::kMaxIoChunkBytes);
      const std::size_t done = std::fwrite(buffer_.data() + n, 1, chunk, file_);
      n += done;
      if (done != chunk) break;
    }
    if (n != buffer_.size()) {
      const int err = errno;
      // The file now ends inside a record; a reader stops at the last complete one.
      buffer_.erase(0, n);
      offset_ += n;
      hookfuse::detail::fail<IoError>(
          detail::tfrecord::system_message(path_,
                                           "short write (" + std::to_string(n) + " of " +
                                               std::to_string(n + buffer_.size()) + " bytes)",
                                           err));
    }
    offset_ += n;
    buffer_.clear();
  }

  void close_quietly() noexcept {
    if (file_ == nullptr) return;
    try {
      close();
    } catch (const std::exception& e) {
      StderrLogger{}.log(Severity::error, e.what());
    }
  }

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  std::size_t buffer_bytes_ = kDefaultBufferBytes;
  std::uint64_t offset_ = 0;
  std::size_t records_ = 0;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using RecordWriter = BasicRecordWriter<void>;

/// Reads TFRecord files, as TensorFlow's `tf.data.TFRecordDataset` / io::RecordReader
/// (uncompressed): both CRCs of every record are checked. A corrupt record throws
/// DataLossError naming the file, the record's index (from 0) and byte offset, and the field at
/// fault; every later `read` then returns false.
///
/// The file may grow while it is read (TensorBoard tails the event files of a running job). A
/// final record cut short (the file ends inside its header, payload or footer: the writer is
/// mid-record, or was killed there) is not an error: `read` logs one warning through the logger
/// and returns false without moving past it, as TensorFlow's RecordReader keeps its offset on
/// a partial record and TensorBoard's EventFileLoader retries from there. A later `read` looks
/// at the file's size again and returns that record once the writer appended the rest; likewise
/// a `read` that returned false at the end of the file returns records appended since.
///
/// A length field is believed only after its CRC matched, and never beyond the bytes the file
/// holds, so a corrupt or forged length cannot make the reader allocate more than the file
/// holds. Reads go through pread in calls of at most 1 GiB (records above 2 GiB included).
template <class = void>
class BasicRecordReader {
 public:
  /// Opens `path` for reading. Throws NotFoundError when it does not exist, IoError when it is
  /// not a regular file ("<path>: is a FIFO, not a regular file": checked before open, which
  /// never blocks) or cannot be opened.
  explicit BasicRecordReader(std::filesystem::path path) : path_(std::move(path)) {
    int err = 0;
    fd_ = detail::open_read_only(path_, err);
    if (!fd_) {
      if (err == ENOENT) hookfuse::detail::fail<NotFoundError>(path_.string() + ": no such file");
      hookfuse::detail::fail<IoError>(
          detail::tfrecord::system_message(path_, "cannot open for reading", err));
    }
    size_ = detail::regular_file_size(fd_, path_);
  }
  BasicRecordReader(const BasicRecordReader&) = delete;
  BasicRecordReader& operator=(const BasicRecordReader&) = delete;
  BasicRecordReader(BasicRecordReader&& other) noexcept = default;
  BasicRecordReader& operator=(BasicRecordReader&&) = delete;
  ~BasicRecordReader() = default;

  /// Reads the next record's payload into `payload`. Returns false at the end of the file and
  /// at a truncated final record (logged once per record as a warning to `logger`); a later
  /// call retries from the same offset, so records the writer appends meanwhile are read.
  /// Throws DataLossError for a CRC mismatch (and returns false ever after), IoError for a
  /// failed read or a file that shrank below the records already read.
  template <Logger L>
  bool read(std::string& payload, L& logger) {
    if (done_) return false;
    if (!available(1)) {
      truncated_ = false;
      return false;  // the end of the file, for now
    }
    if (!available(kRecordHeaderBytes)) {
      return stop_truncated(logger, size_ - offset_, kRecordHeaderBytes, "header");
    }
    std::array<unsigned char, kRecordHeaderBytes> header{};
    read_exactly(offset_, header.data(), header.size());
    const std::uint64_t length = detail::tfrecord::get_le64(header.data());
    const std::uint32_t stored = detail::tfrecord::get_le32(header.data() + 8);
    const std::uint32_t computed = masked_crc32c(header.data(), 8);
    if (stored != computed) {
      corrupt("length field (" + std::to_string(length) + " bytes) fails its CRC (stored " +
              detail::tfrecord::hex32(stored) + ", computed " + detail::tfrecord::hex32(computed) +
              ")");
    }
    const std::uint64_t need =
        length > UINT64_MAX - kRecordOverheadBytes ? UINT64_MAX : length + kRecordOverheadBytes;
    if (!available(need)) {
      return stop_truncated(logger, size_ - offset_, need, "payload or its CRC");
    }
    payload.resize(static_cast<std::size_t>(length));
    read_exactly(offset_ + kRecordHeaderBytes, payload.data(), payload.size());
    std::array<unsigned char, 4> footer{};
    read_exactly(offset_ + kRecordHeaderBytes + length, footer.data(), footer.size());
    const std::uint32_t stored_data = detail::tfrecord::get_le32(footer.data());
    const std::uint32_t computed_data = masked_crc32c(payload.data(), payload.size());
    if (stored_data != computed_data) {
      corrupt("payload of " + std::to_string(length) + " bytes fails its CRC (stored " +
              detail::tfrecord::hex32(stored_data) + ", computed " +
              detail::tfrecord::hex32(computed_data) + ")");
    }
    offset_ += need;
    ++index_;
    truncated_ = false;
    return true;
  }

  /// `read(payload, logger)` with the default logger (stderr).
  bool read(std::string& payload) {
    StderrLogger logger;
    return read(payload, logger);
  }

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// Complete records read so far; also the index of the next record.
  [[nodiscard]] std::size_t records_read() const noexcept { return index_; }
  /// Byte offset of the next record (after the last complete one).
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
  /// The file's size in bytes when it was last looked at (at open, and by a `read` that needed
  /// more bytes than that).
  [[nodiscard]] std::uint64_t file_size() const noexcept { return size_; }
  /// True when the last `read` met a truncated final record (a later one may complete it).
  [[nodiscard]] bool truncated() const noexcept { return truncated_; }

 private:
  [[noreturn]] void corrupt(const std::string& what) {
    done_ = true;  // the records after a corrupt one are not trusted
    hookfuse::detail::fail<DataLossError>(path_.string() + ": record " + std::to_string(index_) +
                                          " at byte offset " + std::to_string(offset_) + ": " +
                                          what);
  }

  /// True when the file holds `n` bytes from offset_; looks at its size again (fstat) first
  /// when the size last seen is short. IoError when the file shrank below offset_.
  bool available(std::uint64_t n) {
    if (size_ - offset_ >= n) return true;
    size_ = detail::regular_file_size(fd_, path_);
    if (size_ < offset_) {
      done_ = true;
      hookfuse::detail::fail<IoError>(
          path_.string() + ": the file shrank to " + std::to_string(size_) +
          " bytes while being read, below the " + std::to_string(offset_) + " bytes of the " +
          std::to_string(index_) + " records already read");
    }
    return size_ - offset_ >= n;
  }

  template <Logger L>
  bool stop_truncated(L& logger, std::uint64_t have, std::uint64_t need, const char* part) {
    truncated_ = true;
    if (warned_offset_ != offset_) {
      warned_offset_ = offset_;
      const std::string line =
          path_.string() + ": record " + std::to_string(index_) + " at byte offset " +
          std::to_string(offset_) + " is truncated (" + part +
          " cut short: " + std::to_string(have) + " of " + std::to_string(need) +
          " bytes present); stopping after the " + std::to_string(index_) +
          " complete records before it (was the writer stopped mid-record? a later read retries)";
      logger.log(Severity::warning, line);
    }
    return false;
  }

  void read_exactly(std::uint64_t at, void* out, std::size_t n) {
    if (!detail::pread_exact(fd_, path_, at, out, n)) {
      // The file shrank since its size was looked at.
      hookfuse::detail::fail<IoError>(path_.string() + ": record " + std::to_string(index_) +
                                      " at byte offset " + std::to_string(offset_) +
                                      ": the file shrank while being read (expected " +
                                      std::to_string(n) + " bytes at byte offset " +
                                      std::to_string(at) + ")");
    }
  }

  std::filesystem::path path_;
  detail::Fd fd_;
  std::uint64_t size_ = 0;
  std::uint64_t offset_ = 0;
  std::uint64_t warned_offset_ = UINT64_MAX;
  std::size_t index_ = 0;
  bool truncated_ = false;
  bool done_ = false;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using RecordReader = BasicRecordReader<void>;

/// Every complete record of the TFRecord file `path`, in order; warnings (a truncated final
/// record) go to `logger`. Throws as RecordReader does.
template <Logger L>
std::vector<std::string> read_records(const std::filesystem::path& path, L& logger) {
  RecordReader reader(path);
  std::vector<std::string> records;
  std::string payload;
  while (reader.read(payload, logger)) records.push_back(payload);
  return records;
}

/// `read_records(path, logger)` logging to stderr.
template <class = void>
std::vector<std::string> read_records(const std::filesystem::path& path) {
  StderrLogger logger;
  return read_records(path, logger);
}

}  // namespace hookfuse::io
