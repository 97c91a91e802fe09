// hookfuse/io/detail/posix_file.hpp: POSIX file plumbing of the io layer: an owned descriptor,
// positioned reads, and a file written under a temporary name then fsync'd and renamed into
// place, so that the final name only ever shows complete contents.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/io/errors.hpp"

namespace hookfuse::io::detail {

/// The system's text for an errno value ("No space left on device").
template <class = void>
[[nodiscard]] std::string errno_text(int err) {
  return std::generic_category().message(err);
}

/// Throws IoError "<path>: <what>: <reason for err>".
template <class = void>
[[noreturn]] void fail_io(const std::filesystem::path& path, const std::string& what, int err) {
  ::hookfuse::detail::fail<IoError>(path.string() + ": " + what + ": " + errno_text(err));
}

/// An owned file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] explicit operator bool() const noexcept { return fd_ >= 0; }
  /// Gives up ownership: returns the descriptor, which the caller now closes.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  /// Closes now; returns close()'s errno, or 0.
  int reset() noexcept {
    int err = 0;
    if (fd_ >= 0 && ::close(fd_) != 0) err = errno;
    fd_ = -1;
    return err;
  }

 private:
  int fd_ = -1;
};

/// The largest byte count one read()/pread()/write() call of the io layer asks for: 1 GiB.
/// Linux transfers at most 0x7ffff000 bytes per call and other systems refuse larger counts
/// (EINVAL), so tensors above 2 GiB are read and written in chunks of this size.
inline constexpr std::size_t kMaxIoChunkBytes = std::size_t{1} << 30;

/// What a file of mode `mode` is, for messages: "a FIFO", "a directory", "a character device",
/// "a block device", "a socket", "a symbolic link", "a regular file", "a special file".
template <class = void>
[[nodiscard]] const char* file_type_text(mode_t mode) noexcept {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

/// Throws IoError "<path>: is a FIFO, not a regular file" unless `mode` is a regular file's.
template <class = void>
void require_regular_file(mode_t mode, const std::filesystem::path& path) {
  if (S_ISREG(mode)) return;
  ::hookfuse::detail::fail<IoError>(path.string() + ": is " + file_type_text(mode) +
                                    ", not a regular file");
}

/// Opens the regular file `path` read-only without ever blocking on what is not one: stat()
/// first, then open() with O_NONBLOCK (a FIFO swapped in between does not block the open),
/// fstat() of the descriptor, and O_NONBLOCK cleared again. Returns an empty Fd and sets `err`
/// when stat() or open() fails (ENOENT for a missing file). Throws IoError naming `path` and
/// what it is when it is not a regular file ("<path>: is a FIFO, not a regular file").
template <class = void>
[[nodiscard]] Fd open_read_only(const std::filesystem::path& path, int& err) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    err = errno;
    return Fd();
  }
  require_regular_file(st.st_mode, path);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    err = errno;
    return Fd();
  }
  if (::fstat(fd.get(), &st) != 0) {
    err = errno;
    return Fd();
  }
  require_regular_file(st.st_mode, path);
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    err = errno;
    return Fd();
  }
  err = 0;
  return fd;
}

/// Size in bytes of an open regular file; IoError naming `path` and what it is otherwise.
template <class = void>
[[nodiscard]] std::uint64_t regular_file_size(const Fd& fd, const std::filesystem::path& path) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail_io(path, "cannot stat", errno);
  require_regular_file(st.st_mode, path);
  return static_cast<std::uint64_t>(st.st_size);
}

/// pread(2), the default system call of pread_exact (tests substitute their own).
struct SysPread {
  ssize_t operator()(int fd, void* buf, std::size_t n, off_t offset) const noexcept {
    return ::pread(fd, buf, n, offset);
  }
};

/// write(2), the default system call of write_fully (tests substitute their own).
struct SysWrite {
  ssize_t operator()(int fd, const void* buf, std::size_t n) const noexcept {
    return ::write(fd, buf, n);
  }
};

/// Reads exactly `size` bytes at `offset` into `out`, in calls of at most `max_chunk` bytes,
/// retrying short reads and EINTR. Returns false at a premature end of file (the caller
/// reports truncation); IoError naming `path` and the offset on a read error.
template <class Pread = SysPread>
[[nodiscard]] bool pread_exact(const Fd& fd, const std::filesystem::path& path,
                               std::uint64_t offset, void* out, std::size_t size,
                               std::size_t max_chunk = kMaxIoChunkBytes, Pread pread = {}) {
  auto* p = static_cast<unsigned char*>(out);
  if (max_chunk == 0) max_chunk = 1;
  while (size > 0) {
    const ssize_t n = pread(fd.get(), p, std::min(size, max_chunk), static_cast<off_t>(offset));
    if (n < 0) {
      const int err = errno;  // before the message's allocations
      if (err == EINTR) continue;
      fail_io(path,
              "read of " + std::to_string(std::min(size, max_chunk)) + " bytes at offset " +
                  std::to_string(offset) + " failed",
              err);
    }
    if (n == 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return true;
}

/// Writes all `size` bytes of `data` to `fd`, in calls of at most `max_chunk` bytes, retrying
/// short writes and EINTR. Returns 0, or the errno of the failed call (EIO for a call that
/// wrote nothing); `written` is then the bytes written before it. Never throws.
template <class Write = SysWrite>
[[nodiscard]] int write_fully(int fd, const void* data, std::size_t size, std::size_t& written,
                              std::size_t max_chunk = kMaxIoChunkBytes, Write write = {}) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  written = 0;
  if (max_chunk == 0) max_chunk = 1;
  while (written < size) {
    const ssize_t n = write(fd, p + written, std::min(size - written, max_chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // no progress: report an I/O error rather than loop forever
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

/// `p` made absolute against the current directory (as given if that fails): files are named
/// in full in messages, and a later chdir does not move where a writer renames its files.
template <class = void>
[[nodiscard]] std::filesystem::path absolute_path(const std::filesystem::path& p) {
  std::error_code ec;
  auto a = std::filesystem::absolute(p, ec);
  return ec ? p : a;
}

/// The folder holding `file` ("." for a bare name).
template <class = void>
[[nodiscard]] std::filesystem::path parent_dir(const std::filesystem::path& file) {
  auto dir = file.parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

/// fsync of a directory, so that renames and unlinks in it are on disk. IoError naming the
/// directory and, when given, `for_file`, the file whose rename or removal it makes durable
/// ("<for_file>: fsync of its directory <dir> failed: <reason>").
template <class = void>
void fsync_directory(const std::filesystem::path& dir, const std::filesystem::path& for_file = {}) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (for_file.empty()) fail_io(dir, "cannot open directory to fsync it", err);
    fail_io(for_file, "cannot open its directory " + dir.string() + " to fsync it", err);
  }
  Fd owned(fd);
  if (::fsync(fd) != 0) {
    const int err = errno;
    if (for_file.empty()) fail_io(dir, "fsync of the directory failed", err);
    fail_io(for_file, "fsync of its directory " + dir.string() + " failed", err);
  }
}

/// A file written under a temporary name beside its final one ("<final>.tempstate<16 hex>", as
/// TensorFlow names its temporaries), then made durable and renamed into place by commit().
/// Destroyed without commit(), it removes the temporary file: nothing partial is ever left
/// under the final name. Every failure is an IoError naming the final path, the temporary one
/// and the system's reason.
template <class = void>
class BasicTempFile {
 public:
  explicit BasicTempFile(std::filesystem::path final_path) : final_(std::move(final_path)) {
    std::random_device rd;
    const std::uint64_t r = (std::uint64_t{rd()} << 32) ^ rd() ^
                            (static_cast<std::uint64_t>(::getpid()) << 16) ^ ++counter();
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tempstate%016llx", static_cast<unsigned long long>(r));
    temp_ = std::filesystem::path(final_.string() + suffix);
    const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) fail_io(final_, "cannot create temporary file " + temp_.string(), errno);
    fd_ = Fd(fd);
    buffer_.reserve(kBufferSize);
  }
  BasicTempFile(const BasicTempFile&) = delete;
  BasicTempFile& operator=(const BasicTempFile&) = delete;
  ~BasicTempFile() { discard(); }

  /// Appends `size` bytes (buffered).
  void append(const void* data, std::size_t size) {
    const auto* p = static_cast<const char*>(data);
    if (buffer_.size() + size > kBufferSize) flush();
    if (size >= kBufferSize) {
      write_all(p, size);
    } else {
      buffer_.insert(buffer_.end(), p, p + size);
    }
    size_ += size;
  }

  /// Writes the buffer out to the file (no fsync).
  void flush() {
    if (!buffer_.empty()) {
      write_all(buffer_.data(), buffer_.size());
      buffer_.clear();
    }
  }

  /// flush(), then fsync: the bytes are on disk.
  void sync() {
    flush();
    if (::fsync(fd_.get()) != 0) fail_io(final_, "fsync of " + temp_.string() + " failed", errno);
  }

  /// sync(), then close: the temporary file is complete on disk, ready to be renamed. Does
  /// nothing once closed. Lets a caller finish every file before replacing anything.
  void close_synced() {
    if (!fd_) return;
    sync();
    if (const int err = fd_.reset(); err != 0) {
      fail_io(final_, "close of " + temp_.string() + " failed", err);
    }
  }

  /// close_synced(), then rename the temporary file to the final name (replacing a file of
  /// that name atomically). The caller fsyncs the directory to make the rename durable.
  void commit() {
    close_synced();
    if (::rename(temp_.c_str(), final_.c_str()) != 0) {
      fail_io(final_, "cannot rename " + temp_.string() + " into place", errno);
    }
    committed_ = true;
  }

  /// Closes and removes the temporary file, unless committed. Never throws.
  void discard() noexcept {
    if (committed_ || temp_.empty()) return;
    fd_.reset();
    ::unlink(temp_.c_str());
    temp_.clear();
  }

  /// Bytes appended so far.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  [[nodiscard]] const std::filesystem::path& final_path() const noexcept { return final_; }
  [[nodiscard]] const std::filesystem::path& temp_path() const noexcept { return temp_; }

 private:
  static constexpr std::size_t kBufferSize = std::size_t{1} << 18;  // 256 KiB

  static std::atomic<std::uint64_t>& counter() noexcept {
    static std::atomic<std::uint64_t> c{0};
    return c;
  }

  void write_all(const char* p, std::size_t size) {
    std::size_t written = 0;
    if (const int err = write_fully(fd_.get(), p, size, written); err != 0) {
      fail_io(final_,
              "write to " + temp_.string() + " failed after " + std::to_string(written) + " of " +
                  std::to_string(size) + " bytes",
              err);
    }
  }

  std::filesystem::path final_;
  std::filesystem::path temp_;
  Fd fd_;
  std::vector<char> buffer_;
  std::uint64_t size_ = 0;
  bool committed_ = false;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using TempFile = BasicTempFile<void>;

}  // namespace hookfuse::io::detail
