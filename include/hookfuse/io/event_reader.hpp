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
