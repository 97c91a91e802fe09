// hookfuse/hooks/csv_logger_hook.hpp: CSVLoggerHook (Keras' tf.keras.callbacks.CSVLogger, per
// step instead of per epoch).
//
// Writes a file through io::CsvWriter (stdio), so hosted builds only: hookfuse/hookfuse.hpp
// leaves it out of HOOKFUSE_EMBEDDED and HOOKFUSE_NO_EXCEPTIONS builds.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/python_float.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/io/csv_writer.hpp"

namespace hookfuse {

/// Appends one row per firing run to a CSV file: the global step, then the value of each named
/// scalar tensor, as Keras' CSVLogger(filename, separator=',', append=False) appends one row per
/// epoch:
///
///     CSVLoggerHook<"loss", "accuracy">("train.csv", {.every_n_iter = 10})
///
/// File (Keras' layout, csv.excel dialect): the header `step,loss,accuracy` (Keras:
/// `epoch,<metric names>`), then rows such as `1,2.302585124969482,0.09375`, each ended by
/// "\r\n" as Python's csv module ends them (io::CsvWriterOptions::line_terminator). Values are
/// written as Python writes a float, repr() of the value widened to double: a float32 0.1 is
/// 0.10000000149011612, 1 is 1.0, NaN nan, infinities inf and -inf (detail/python_float.hpp);
/// int32/int64 tensors as integers. Names keep the order given (Keras sorts its keys).
///
/// Cadence: counts the runs of this session, as LoggingTensorHook's every_n_iter: rows for runs
/// 1, 1 + n, 1 + 2n, ... The step column is the global step after the run (what
/// SummarySaverHook stamps the same values with, so the CSV and TensorBoard agree): from a
/// fresh global step with n = 10, steps 1, 11, 21, ... The tensors are fetched only in the runs
/// that write a row; other runs cost one counter decrement.
///
/// With `append`, rows are added to an existing file and the header is written only if the file
/// was empty or did not exist (Keras' append behaviour). Each row is flushed as it is written, so
/// a killed run leaves complete lines. Several hooks (or sessions) may share one writer, passed
/// as std::shared_ptr<io::CsvWriter>; a header is written into an empty file only.
///
/// Errors: io::IoError naming the path when the file cannot be opened (at construction) or
/// written (in after_run); std::invalid_argument for every_n_iter <= 0 or a null writer;
/// ValueError from after_run naming the tensor and its shape when a named tensor is not one
/// element (Keras would write a list; a CSV column holds one number here).
template <fixed_string... Names>
class CSVLoggerHook {
 public:
  static_assert(sizeof...(Names) > 0, "hookfuse: CSVLoggerHook needs at least one tensor name");

  struct Options {
    /// Write a row every this many runs (> 0), starting with the first run.
    std::int64_t every_n_iter = 1;
    /// Between fields (Keras' `separator`).
    char separator = ',';
    /// Append to the file instead of truncating it (Keras' `append`).
    bool append = false;
  };

  /// Opens (creates or truncates; appends with options.append) `filename` now.
  explicit CSVLoggerHook(const std::filesystem::path& filename, Options options = {})
      : CSVLoggerHook(std::make_shared<io::CsvWriter>(
                          filename, io::CsvWriterOptions{.separator = options.separator,
                                                         .append = options.append}),
                      options.every_n_iter) {}

  /// Writes through `writer`, shared with whoever else holds it.
  explicit CSVLoggerHook(std::shared_ptr<io::CsvWriter> writer, std::int64_t every_n_iter = 1)
      : writer_(std::move(writer)), every_n_iter_(every_n_iter) {
    if (!writer_) detail::fail<std::invalid_argument>("CSVLoggerHook: the writer is null");
    if (every_n_iter_ <= 0)
      detail::fail<std::invalid_argument>((detail::ErrorMessage()
                                           << "CSVLoggerHook: every_n_iter must be > 0, got "
                                           << static_cast<long long>(every_n_iter_))
                                              .str());
  }

  /// Starts a session: its first run writes a row.
  void begin() { runs_to_next_row_ = 0; }

  SessionRunArgs<Names...> before_run(SessionRunContext&) { return {runs_to_next_row_ == 0}; }

  void after_run(SessionRunContext& ctx, const SessionRunValues<Names...>& values) {
    if (runs_to_next_row_ != 0) {
      --runs_to_next_row_;
      return;
    }
    runs_to_next_row_ = every_n_iter_ - 1;
    write_row(ctx.global_step(), values);
  }

  /// The file's writer.
  const std::shared_ptr<io::CsvWriter>& writer() const { return writer_; }

 private:
  static constexpr std::size_t num_fields = sizeof...(Names) + 1;

  void write_row(std::int64_t step, const SessionRunValues<Names...>& values) {
    char text[num_fields][detail::python_float_capacity];
    std::array<std::string_view, num_fields> fields;
    auto put = [&](std::size_t i, auto&& append) {
      char* out = text[i];
      text[i][0] = '\0';
      append(out, text[i] + sizeof text[i]);
      fields[i] = std::string_view(text[i], static_cast<std::size_t>(out - text[i]));
    };
    put(0, [&](char*& out, char* end) { detail::append_int(out, end, step); });
    std::size_t i = 0;
    (
        [&] {
          ++i;  // field i holds values.results[i - 1]
          put(i,
              [&](char*& out, char* end) { append_value<Names>(out, end, values.results[i - 1]); });
        }(),
        ...);
    // After the values are checked: a refused tensor leaves the file as it was.
    if (writer_->header_needed()) {
      const std::array<std::string_view, num_fields> header{std::string_view("step"),
                                                            Names.view()...};
      writer_->write_row(header);
    }
    writer_->write_row(fields);
  }

  template <fixed_string Name>
  static void append_value(char*& out, char* end, const TensorValue& t) {
    if (t.size() != 1)
      detail::fail<ValueError>((detail::ErrorMessage() << "CSVLoggerHook: tensor '" << Name.view()
                                                       << "' is [" << static_cast<long long>(t.rows)
                                                       << ", " << static_cast<long long>(t.cols)
                                                       << "], expected one element ([1, 1])")
                                   .str());
    if (t.dtype == DType::int32 || t.dtype == DType::int64)
      detail::append_int(out, end, t.item_int());
    else
      detail::append_python_float(out, end, t.item());
  }

  std::shared_ptr<io::CsvWriter> writer_;
  std::int64_t every_n_iter_;
  std::int64_t runs_to_next_row_ = 0;
};

}  // namespace hookfuse
