// hookfuse/io/event_reader.hpp: reads TensorBoard event files back (TF 1's
// `tf.compat.v1.train.summary_iterator`), for tests and tools.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/event.hpp"
#include "hookfuse/io/tfrecord.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse::io {

/// Every complete event of the event file `path`, in file order, decoded (wall_time, step,
/// file_version, summary values with tag, kind and values, session_log). A truncated final
/// record ends the list with one warning to `logger` (a writer stopped mid-record); a CRC
/// mismatch or a malformed Event throws DataLossError naming the file, the record's index and
/// byte offset. NotFoundError when the file does not exist, IoError when it cannot be read.
template <Logger L>
[[nodiscard]] std::vector<Event> read_events(const std::filesystem::path& path, L& logger) {
  RecordReader reader(path);
  std::vector<Event> events;
  std::string payload;
  for (;;) {
    const std::size_t index = reader.records_read();
    const std::uint64_t offset = reader.offset();
    if (!reader.read(payload, logger)) break;
    events.push_back(parse_event(payload, path.string() + ": record " + std::to_string(index) +
                                              " at byte offset " + std::to_string(offset)));
  }
  return events;
}

/// Reads an event file incrementally while its writer may still be appending to it, as
/// TensorBoard's EventFileLoader does: each `read_new` returns the complete events after the
/// ones already returned. A truncated final record (the writer is mid-record) ends a call with
/// one warning to the logger and is read again, from its start, by the next call, which returns
/// it once the rest has been appended. A CRC mismatch or a malformed Event throws DataLossError
/// naming the file, the record's index and byte offset (the reader then returns nothing more);
/// NotFoundError when the file does not exist, IoError when it is not a regular file (a FIFO, a
/// directory: refused before open, never waited on) or cannot be read. Not copyable; movable.
template <class = void>
class BasicEventFileReader {
 public:
  explicit BasicEventFileReader(const std::filesystem::path& path) : reader_(path) {}

  /// The complete events appended since the last call (all of them at the first), in file
  /// order. Throws as described above.
  template <Logger L>
  [[nodiscard]] std::vector<Event> read_new(L& logger) {
    std::vector<Event> events;
    std::string payload;
    for (;;) {
      const std::size_t index = reader_.records_read();
      const std::uint64_t offset = reader_.offset();
      if (!reader_.read(payload, logger)) break;
      events.push_back(parse_event(payload, reader_.path().string() + ": record " +
                                                std::to_string(index) + " at byte offset " +
                                                std::to_string(offset)));
    }
    return events;
  }

  /// `read_new(logger)` with warnings to stderr.
  [[nodiscard]] std::vector<Event> read_new() {
    StderrLogger logger;
    return read_new(logger);
  }

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return reader_.path(); }
  /// Events returned so far.
  [[nodiscard]] std::size_t events_read() const noexcept { return reader_.records_read(); }
  /// Byte offset of the next event's record.
  [[nodiscard]] std::uint64_t offset() const noexcept { return reader_.offset(); }
  /// True when the last `read_new` stopped at a truncated final record.
  [[nodiscard]] bool truncated() const noexcept { return reader_.truncated(); }

 private:
  RecordReader reader_;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using EventFileReader = BasicEventFileReader<void>;

/// `read_events(path, logger)` with warnings to stderr.
[[nodiscard]] inline std::vector<Event> read_events(const std::filesystem::path& path) {
  StderrLogger logger;
  return read_events(path, logger);
}

/// The event files directly in `logdir` (base name containing "tfevents", as TensorBoard's
/// `IsSummaryEventsFile`), sorted by name, which is creation order for TF's names. Empty when
/// `logdir` does not exist.
[[nodiscard]] inline std::vector<std::filesystem::path> event_files(
    const std::filesystem::path& logdir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(logdir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_regular_file(ec) &&
        it->path().filename().string().find("tfevents") != std::string::npos) {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace hookfuse::io
