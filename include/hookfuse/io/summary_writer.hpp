// hookfuse/io/summary_writer.hpp: SummaryWriter, an event file writer for TensorBoard (TF 1's
// `tf.compat.v1.summary.FileWriter`, TF 2's `tf.summary.create_file_writer`), and the clock it
// takes its wall times from.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include "hookfuse/clock.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/event.hpp"
#include "hookfuse/io/histogram.hpp"
#include "hookfuse/io/summary_proto.hpp"
#include "hookfuse/io/tfrecord.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse::io {

/// Wall-clock time in seconds since the Unix epoch (std::chrono::system_clock), as Python's
/// `time.time()` that TensorFlow stamps events with.
struct UnixClock {
  [[nodiscard]] double now() const {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

/// A Clock readable through a const reference, other than `Self` (keeps copies of ClockHandle
/// out of its converting constructor).
template <class C, class Self>
concept OtherClock = Clock<const C> && !std::same_as<std::remove_cv_t<C>, Self>;

/// A non-owning, copyable reference to any Clock (hookfuse/clock.hpp) whose `now()` is const
/// and gives seconds since the Unix epoch; default-constructed, it reads UnixClock. Tests pass a
/// FakeClock here (it must outlive the writer).
class ClockHandle {
 public:
  ClockHandle() noexcept = default;
  template <OtherClock<ClockHandle> C>
  ClockHandle(C& clock) noexcept  // NOLINT(google-explicit-constructor): a reference wrapper
      : object_(&clock),
        now_([](const void* c) { return static_cast<double>(static_cast<const C*>(c)->now()); }) {}
  [[nodiscard]] double now() const { return now_ != nullptr ? now_(object_) : UnixClock{}.now(); }

 private:
  const void* object_ = nullptr;
  double (*now_)(const void*) = nullptr;
};

/// SummaryWriter's settings, with TensorFlow's defaults.
struct SummaryWriterOptions {
  /// Events held before they are written out (TF's `max_queue`, 10): the writer flushes when
  /// more than this many are pending.
  int max_queue = 10;
  /// Seconds after which pending events are flushed (TF's `flush_secs`, 120; TF 2's
  /// `flush_millis` = 120000). Checked when an event is added: no background thread.
  double flush_secs = 120.0;
  /// Appended to the file name (TF 2's `filename_suffix`, ".v2").
  std::string filename_suffix = ".v2";
  /// How add_scalar stores scalars (rank-0 DT_FLOAT tensors by default, as TF 2).
  ScalarForm scalar_form = ScalarForm::tensor;
  /// Source of wall times (seconds since the Unix epoch), for event stamps, the file name and
  /// the flush deadline.
  ClockHandle clock = {};
};

}  // namespace hookfuse::io

namespace hookfuse::io::detail::events {

/// Process-wide counter of event files opened (TF 2's `ops.uid()` in the file name).
template <class = void>
std::atomic<long long>& file_counter() {
  static std::atomic<long long> counter{0};
  return counter;
}

template <class = void>
std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

}  // namespace hookfuse::io::detail::events

namespace hookfuse::io {

/// The base name TensorFlow 2 gives an event file created at `seconds` (Unix time, whole
/// seconds): `events.out.tfevents.<seconds, 10 digits zero-padded>.<hostname>.<pid>.<n><suffix>`,
/// e.g. `events.out.tfevents.1585499054.host.11684.5.v2`.
template <class = void>
[[nodiscard]] std::string event_file_name(long long seconds, std::string_view hostname,
                                          long long pid, long long n, std::string_view suffix) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%010lld", seconds);
  return "events.out.tfevents." + std::string(secs) + "." + std::string(hostname) + "." +
         std::to_string(pid) + "." + std::to_string(n) + std::string(suffix);
}

/// Writes one TensorBoard event file in a log directory, as TensorFlow's `FileWriter` /
/// `tf.summary.create_file_writer(logdir)`.
///
/// The constructor creates `logdir` (and its parents) if needed, opens a new file named by
/// `event_file_name` (the clock's whole seconds, this host, this process, a process-wide
/// counter, `filename_suffix`) and writes and flushes its first event,
/// Event{wall_time = those whole seconds, file_version = "brain.Event:2"}. Events are then
/// buffered and flushed when more than `max_queue` are pending or more than `flush_secs`
/// seconds have passed since the last flush (checked at each event), at `flush()` and at
/// `close()`. Only whole records reach the file, so a reader sees every flushed event.
///
/// Steps are TensorFlow's global steps (int64); wall times are seconds since the Unix epoch,
/// taken from the clock when not given. Errors: IoError naming the path when the directory
/// cannot be created or the file cannot be opened or written; ValueError for an empty logdir
/// and, from add_histogram, for NaN or infinite values.
///
/// Not copyable or movable: share one through `std::shared_ptr` (`create_file_writer`,
/// SummaryWriterCache), so that every holder writes to the same file. After `close()` events
/// are dropped with a warning, as TF 1's FileWriter does, until `reopen()` starts a new file.
/// Not thread-safe: one thread at a time (hooks run on the session's thread).
template <class = void>
class BasicSummaryWriter {
 public:
  explicit BasicSummaryWriter(std::filesystem::path logdir, SummaryWriterOptions options = {})
      : logdir_(std::move(logdir)), options_(std::move(options)) {
    if (logdir_.empty()) {
      hookfuse::detail::fail<ValueError>("SummaryWriter: logdir is empty; expected a directory");
    }
    open_new_file();
  }
  BasicSummaryWriter(const BasicSummaryWriter&) = delete;
  BasicSummaryWriter& operator=(const BasicSummaryWriter&) = delete;
  /// Closes the file; a write error here is logged to stderr, not thrown.
  ~BasicSummaryWriter() {
    try {
      close();
    } catch (const std::exception& e) {
      StderrLogger{}.log(Severity::error, e.what());
    }
  }

  /// The log directory, as given (TF's `get_logdir()`).
  [[nodiscard]] const std::filesystem::path& logdir() const noexcept { return logdir_; }
  /// The event file being written (the last one, once closed).
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] const SummaryWriterOptions& options() const noexcept { return options_; }
  [[nodiscard]] bool closed() const noexcept { return !records_ || !records_->is_open(); }

  /// Writes `event` as given (TF's `add_event`): its wall_time and step are not touched.
  /// Throws hookfuse::ValueError naming its tags when it serializes to more than
  /// kMaxEventBytes (2 GiB - 1), writing nothing of it; IoError on a failed write.
  void add_event(const Event& event) {
    if (closed()) {
      warn_closed();
      return;
    }
    const std::string bytes = serialize_event(event);
    check_event_size(bytes.size(), event);  // nothing of an oversized event reaches the file
    records_->write(bytes);
    ++pending_;
    if (pending_ > options_.max_queue || options_.clock.now() - last_flush_ > options_.flush_secs) {
      flush();
    }
  }

  /// Writes Event{wall_time, step, summary} (TF's `add_summary(summary, global_step)`);
  /// `wall_time` in seconds since the Unix epoch, the clock's time when absent.
  void add_summary(Summary summary, std::int64_t step,
                   std::optional<double> wall_time = std::nullopt) {
    Event e;
    e.wall_time = wall_time ? *wall_time : options_.clock.now();
    e.step = step;
    e.what = Event::What::summary;
    e.summary = std::move(summary);
    add_event(e);
  }

  /// Writes the scalar `tag` = `value` (stored as float32) at `step`, in the options'
  /// scalar_form (TF 2's `tf.summary.scalar(tag, value, step)`; with ScalarForm::simple_value,
  /// TF 1's `tf.compat.v1.summary.scalar`).
  void add_scalar(std::string_view tag, double value, std::int64_t step,
                  std::optional<double> wall_time = std::nullopt) {
    add_summary(Summary{{scalar_value(tag, value, options_.scalar_form)}}, step, wall_time);
  }

  /// Writes a histogram of `values` under `tag` at `step`, with TensorFlow's default buckets
  /// (`tf.compat.v1.summary.histogram`; see histogram_value). Throws ValueError for NaN or
  /// infinite values, before anything is written.
  void add_histogram(std::string_view tag, std::span<const double> values, std::int64_t step,
                     std::optional<double> wall_time = std::nullopt) {
    add_summary(Summary{{histogram_value(tag, values)}}, step, wall_time);
  }
  void add_histogram(std::string_view tag, std::span<const float> values, std::int64_t step,
                     std::optional<double> wall_time = std::nullopt) {
    add_summary(Summary{{histogram_value(tag, values)}}, step, wall_time);
  }

  /// Writes Event{wall_time, step, session_log} (TF's `add_session_log(session_log,
  /// global_step)`), e.g. SessionLog{SessionLog::START} when a session starts.
  void add_session_log(SessionLog log, std::int64_t step,
                       std::optional<double> wall_time = std::nullopt) {
    Event e;
    e.wall_time = wall_time ? *wall_time : options_.clock.now();
    e.step = step;
    e.what = Event::What::session_log;
    e.session_log = std::move(log);
    add_event(e);
  }

  /// `add_session_log(SessionLog{status}, step, wall_time)`, e.g. `add_session_log(
  /// SessionLog::START, step)` as SummarySaverHook writes at a session's first step.
  void add_session_log(SessionLog::SessionStatus status, std::int64_t step,
                       std::optional<double> wall_time = std::nullopt) {
    SessionLog log;
    log.status = status;
    add_session_log(std::move(log), step, wall_time);
  }

  /// Writes every pending event to the file (TF's `flush()`). Throws IoError on a failed write.
  void flush() {
    if (closed()) return;
    records_->flush();
    pending_ = 0;
    last_flush_ = options_.clock.now();
  }

  /// Flushes and closes the file (TF's `close()`); later calls do nothing. Throws IoError.
  void close() {
    if (closed()) return;
    pending_ = 0;
    records_->close();
  }

  /// After `close()`, opens a new event file in the same directory (TF 1's `reopen()`);
  /// does nothing while the writer is open. Throws IoError as the constructor does.
  void reopen() {
    if (!closed()) return;
    open_new_file();
  }

 private:
  void open_new_file() {
    std::error_code ec;
    std::filesystem::create_directories(logdir_, ec);
    if (ec || !std::filesystem::is_directory(logdir_, ec)) {
      hookfuse::detail::fail<IoError>(logdir_.string() + ": cannot create the log directory: " +
                                      (ec ? ec.message() : std::string("not a directory")));
    }
    const double now = options_.clock.now();
    const auto seconds = static_cast<long long>(std::floor(now));
    path_ = logdir_ / event_file_name(seconds, detail::events::hostname(),
                                      static_cast<long long>(::getpid()),
                                      detail::events::file_counter()++, options_.filename_suffix);
    records_.emplace(path_);
    warned_closed_ = false;
    Event version;
    version.wall_time = static_cast<double>(seconds);
    version.what = Event::What::file_version;
    version.file_version = std::string(kEventFileVersion);
    records_->write(serialize_event(version));
    records_->flush();
    pending_ = 0;
    last_flush_ = now;
  }

  void warn_closed() {
    if (warned_closed_) return;
    warned_closed_ = true;
    StderrLogger{}.log(Severity::warning,
                       "Attempting to use a closed SummaryWriter for " + logdir_.string() +
                           ". The operation will be a noop unless the writer is reopened.");
  }

  std::filesystem::path logdir_;
  SummaryWriterOptions options_;
  std::filesystem::path path_;
  std::optional<RecordWriter> records_;
  int pending_ = 0;
  double last_flush_ = 0.0;
  bool warned_closed_ = false;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using SummaryWriter = BasicSummaryWriter<void>;

/// A new SummaryWriter for `logdir`, shared (TF 2's `tf.summary.create_file_writer`: every
/// call opens a new file; use SummaryWriterCache for one writer per directory). Copies of the
/// returned pointer are cheap and all write to the same file.
template <class = void>
[[nodiscard]] std::shared_ptr<SummaryWriter> create_file_writer(std::filesystem::path logdir,
                                                                SummaryWriterOptions options = {}) {
  return std::make_shared<SummaryWriter>(std::move(logdir), std::move(options));
}

}  // namespace hookfuse::io
