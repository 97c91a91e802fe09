// hookfuse/io/atomic_file.hpp: crash-safe file replacement (temporary name, fsync, rename).
//
// A file written here is either entirely the new contents or, after any failure or a crash at
// any instant, the previous file under the final name, untouched. The recipe:
//
//   1. create `<final>.tmp-<pid>-<counter>` in the same directory (O_CREAT | O_EXCL, so two
//      writers never share a temporary; the same directory, so rename(2) is atomic);
//   2. write every byte, retrying short writes and EINTR, checking each call;
//   3. fsync(2) the file, then close(2) it (close reports deferred errors on some file systems);
//   4. rename(2) it onto the final name (atomic replacement on POSIX);
//   5. fsync the directory, so the rename itself survives a power loss.
//
// Any failure in 1-4 throws IoError naming the path and the system's reason (strerror), after
// removing the temporary. TensorFlow's counterpart is `file_io.atomic_write_string_to_file`
// (temporary + rename, no fsync); this one also syncs, as the checkpoint guarantees need.
// POSIX only.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/io/detail/posix_file.hpp"
#include "hookfuse/io/errors.hpp"

namespace hookfuse::io {
namespace detail {

/// "<what> <path>: <strerror(err)>", the text of every IoError raised here.
template <class = void>
std::string os_error_text(std::string_view what, const std::filesystem::path& path, int err) {
  std::string text(what);
  text += ' ';
  text += path.string();
  text += ": ";
  text += std::strerror(err);
  return text;
}

template <class = void>
[[noreturn]] void fail_os(std::string_view what, const std::filesystem::path& path, int err) {
  ::hookfuse::detail::fail<IoError>(os_error_text(what, path, err));
}

/// A process-wide counter that, with the pid, makes temporary names unique.
template <class = void>
std::uint64_t next_temp_serial() noexcept {
  static std::atomic<std::uint64_t> serial{0};
  return serial.fetch_add(1, std::memory_order_relaxed);
}

/// The directory part of `path` ("." for a bare file name), for the directory fsync.
template <class = void>
std::filesystem::path parent_or_dot(const std::filesystem::path& path) {
  std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

/// fsync of a directory: makes a completed rename durable. File systems that cannot sync a
/// directory (EINVAL, ENOTSUP) are accepted as they are: the rename is then as durable as
/// that file system makes it.
template <class = void>
void sync_directory(const std::filesystem::path& dir, const std::filesystem::path& for_file) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    fail_os("renamed into place, but cannot open its directory to sync it, for", for_file, errno);
  int result = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (result != 0 && err != EINVAL && err != ENOTSUP)
    fail_os("renamed into place, but fsync of its directory failed, for", for_file, err);
}

}  // namespace detail

/// Writes one file crash-safely, streaming: `write` the bytes in pieces, then `commit`.
///
///     AtomicFileWriter out("ckpt/model.ckpt-100.index");
///     out.write(header);          // any number of pieces
///     out.write(body);
///     out.commit();               // fsync, rename onto the final name, fsync the directory
///
/// Until `commit` returns, the final name still holds the previous file (or nothing). A writer
/// destroyed without `commit` (an exception on the way, an early return) removes its temporary
/// and leaves the final name alone. Not copyable; movable.
///
/// Errors (IoError, message "<what> <path>: <strerror>"): the directory is missing or is not a
/// directory, not writable, the disk is full (ENOSPC) or a file size limit is hit (EFBIG), the
/// rename fails (e.g. the final name is a directory). After an error the temporary is removed.
template <class = void>
class BasicAtomicFileWriter {
 public:
  /// Creates the temporary `<path>.tmp-<pid>-<n>` next to `path` (mode 0666 before the umask).
  explicit BasicAtomicFileWriter(std::filesystem::path path) : path_(std::move(path)) {
    temp_ = path_;
    temp_ += ".tmp-" + std::to_string(static_cast<long long>(::getpid())) + "-" +
             std::to_string(detail::next_temp_serial());
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) detail::fail_os("cannot create a temporary file to write", path_, errno);
  }

  BasicAtomicFileWriter(const BasicAtomicFileWriter&) = delete;
  BasicAtomicFileWriter& operator=(const BasicAtomicFileWriter&) = delete;
  BasicAtomicFileWriter(BasicAtomicFileWriter&& other) noexcept
      : path_(std::move(other.path_)),
        temp_(std::move(other.temp_)),
        fd_(std::exchange(other.fd_, -1)),
        size_(other.size_),
        committed_(std::exchange(other.committed_, true)) {}
  BasicAtomicFileWriter& operator=(BasicAtomicFileWriter&&) = delete;

  /// Removes the temporary unless `commit` succeeded.
  ~BasicAtomicFileWriter() { abandon(); }

  /// Appends `bytes`. Throws IoError (ENOSPC, EFBIG, EIO, ...) after removing the temporary.
  void write(std::span<const std::byte> bytes) {
    if (fd_ < 0) fail_closed("write to");
    // In calls of at most kMaxIoChunkBytes (1 GiB), retrying short writes and EINTR.
    std::size_t written = 0;
    const int err = detail::write_fully(fd_, bytes.data(), bytes.size(), written);
    size_ += written;
    if (err != 0) fail_and_abandon("cannot write", err);
  }

  /// Appends the characters of `text` (no terminator).
  void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }

  /// Syncs and closes the temporary, renames it onto the final name and syncs the directory.
  /// Throws IoError; a failure up to the rename leaves the final name untouched and removes
  /// the temporary. Only when the last step, the directory fsync, fails is the new file already
  /// in place; the message then says "renamed into place, but ...".
  void commit() {
    if (fd_ < 0) fail_closed("commit");
    if (::fsync(fd_) != 0) fail_and_abandon("cannot fsync", errno);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail_and_abandon("cannot close", errno);
    if (::rename(temp_.c_str(), path_.c_str()) != 0) {
      const int err = errno;
      abandon();
      detail::fail_os("cannot rename the temporary file " + temp_.string() + " onto", path_, err);
    }
    committed_ = true;
    detail::sync_directory(detail::parent_or_dot(path_), path_);
  }

  /// The final name.
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// The temporary name written until `commit`.
  [[nodiscard]] const std::filesystem::path& temp_path() const noexcept { return temp_; }
  /// Bytes written so far.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

 private:
  /// Closes and unlinks the temporary if it is still ours; never throws.
  void abandon() noexcept {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
    if (!committed_) {
      ::unlink(temp_.c_str());
      committed_ = true;  // nothing left to clean up
    }
  }

  [[noreturn]] void fail_and_abandon(std::string_view what, int err) {
    abandon();
    detail::fail_os(what, path_, err);
  }

  [[noreturn]] void fail_closed(std::string_view what) {
    ::hookfuse::detail::fail<IoError>(std::string("cannot ") + std::string(what) + " " +
                                      path_.string() +
                                      ": the atomic writer was already committed or failed");
  }

  std::filesystem::path path_;
  std::filesystem::path temp_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  bool committed_ = false;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using AtomicFileWriter = BasicAtomicFileWriter<void>;

/// Replaces the file at `path` with `bytes`, crash-safely (AtomicFileWriter: temporary, fsync,
/// rename, directory fsync). Throws IoError naming `path` and the system's reason; the previous
/// file under `path` is then untouched. Mirrors TensorFlow's
/// `file_io.atomic_write_string_to_file(path, contents)`.
template <class = void>
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  AtomicFileWriter out(path);
  out.write(bytes);
  out.commit();
}

/// write_file_atomically for text (written as is, no terminator).
template <class = void>
void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

}  // namespace hookfuse::io
