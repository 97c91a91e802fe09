// hookfuse/io/csv_writer.hpp: CsvWriter, a CSV file written row by row, as Python's csv.writer
// with the csv.excel dialect writes it (what Keras' CSVLogger uses).
//
// Knows nothing of sessions or hooks: CSVLoggerHook (hooks/csv_logger_hook.hpp) holds a
// shared handle to one. Each row is written and flushed at once, so a run that is killed
// leaves only complete lines (up to the row being written). Not atomic: a CSV log grows
// while training runs, unlike a checkpoint. Hosted builds only (stdio).
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/io/errors.hpp"

namespace hookfuse::io {

/// How a CsvWriter opens its file and separates fields (Keras' CSVLogger(filename, separator,
/// append) and csv.excel's line terminator).
struct CsvWriterOptions {
  /// Between fields (Keras' `separator`, csv's `delimiter`).
  char separator = ',';
  /// Append to an existing file instead of truncating it (Keras' `append`). Appending to a file
  /// that has content writes no header again (header_needed() is false).
  bool append = false;
  /// After each row: csv.excel's "\r\n", which Keras' CSVLogger writes (its file is opened with
  /// newline='\n', so Python does not translate it). Must not be empty.
  std::string_view line_terminator = "\r\n";
};

/// A CSV file open for writing. Fields that contain the separator, a double quote, '\r' or '\n'
/// are quoted, with inner quotes doubled (csv.QUOTE_MINIMAL); all others are written as given.
/// Errors: io::IoError naming the path and the system's reason when the file cannot be opened
/// ("cannot open CSV file <path> for writing: <strerror>"), written or flushed;
/// std::invalid_argument for a separator that is '"', '\r' or '\n', or an empty line terminator.
/// Not copyable (one FILE); share it with std::shared_ptr.
class CsvWriter {
 public:
  explicit CsvWriter(std::filesystem::path path, CsvWriterOptions options = {})
      : path_(std::move(path)), options_(options) {
    if (options_.separator == '"' || options_.separator == '\r' || options_.separator == '\n')
      ::hookfuse::detail::fail<std::invalid_argument>(
          "CsvWriter: the separator cannot be a double quote, '\\r' or '\\n' (file " +
          path_.string() + ")");
    if (options_.line_terminator.empty())
      ::hookfuse::detail::fail<std::invalid_argument>(
          "CsvWriter: the line terminator is empty (file " + path_.string() + ")");
    file_ = std::fopen(path_.c_str(), options_.append ? "ab" : "wb");
    if (file_ == nullptr) fail_os("cannot open CSV file", errno, " for writing");
    if (options_.append) {
      // Keras writes the header unless the file already has a first line.
      if (std::fseek(file_, 0, SEEK_END) != 0) fail_os("cannot seek in CSV file", errno);
      const long size = std::ftell(file_);
      if (size < 0) fail_os("cannot tell the size of CSV file", errno);
      header_needed_ = size == 0;
    }
  }
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;
  ~CsvWriter() {
    if (file_ != nullptr) std::fclose(file_);
  }

  /// Writes one row, `fields` joined by the separator and ended by the line terminator, and
  /// flushes it to the operating system. The first row written into an empty file is its
  /// header: header_needed() is false after any row. IoError when closed or on a write error.
  void write_row(std::span<const std::string_view> fields) {
    if (file_ == nullptr)
      ::hookfuse::detail::fail<IoError>("CSV file " + path_.string() + " is closed");
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) put(std::string_view(&options_.separator, 1));
      put_field(fields[i]);
    }
    put(options_.line_terminator);
    if (std::fflush(file_) != 0) fail_os("cannot flush CSV file", errno);
    header_needed_ = false;
  }

  /// Flushes and closes the file (the destructor does the same, without reporting errors).
  void close() {
    if (file_ == nullptr) return;
    std::FILE* f = file_;
    file_ = nullptr;
    if (std::fclose(f) != 0) fail_os("cannot close CSV file", errno);
  }

  /// Whether the file is empty so far: opened without append, or appended to an empty or new
  /// file, and no row written yet. The writer of a header asks this (Keras: append_header).
  bool header_needed() const noexcept { return header_needed_; }
  const std::filesystem::path& path() const noexcept { return path_; }
  const CsvWriterOptions& options() const noexcept { return options_; }

 private:
  /// IoError "<what> <path><detail>: <strerror(err)>".
  [[noreturn]] void fail_os(std::string_view what, int err, std::string_view detail = {}) const {
    std::string text(what);
    text += ' ';
    text += path_.string();
    text += detail;
    text += ": ";
    text += std::strerror(err);
    ::hookfuse::detail::fail<IoError>(text);
  }

  void put(std::string_view s) {
    if (s.empty()) return;
    if (std::fwrite(s.data(), 1, s.size(), file_) != s.size())
      fail_os("cannot write to CSV file", errno);
  }

  void put_field(std::string_view field) {
    const bool quote =
        field.find_first_of(std::string_view{&options_.separator, 1}) != std::string_view::npos ||
        field.find_first_of("\"\r\n") != std::string_view::npos;
    if (!quote) return put(field);
    put("\"");
    std::size_t start = 0;
    for (std::size_t q = field.find('"'); q != std::string_view::npos; q = field.find('"', start)) {
      put(field.substr(start, q + 1 - start));  // up to and including the quote
      put("\"");
      start = q + 1;
    }
    put(field.substr(start));
    put("\"");
  }

  std::filesystem::path path_;
  CsvWriterOptions options_;
  std::FILE* file_ = nullptr;
  bool header_needed_ = true;
};

}  // namespace hookfuse::io
