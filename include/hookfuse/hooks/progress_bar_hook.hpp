// hookfuse/hooks/progress_bar_hook.hpp: ProgressBarHook, Keras' progress bar
// (tf.keras.utils.Progbar, verbose=1, as tf.keras 2.x draws it) over training steps, with
// steps/sec.
//
// Writes to a std::ostream and asks isatty(3) whether it is a terminal, so hosted builds only:
// hookfuse/hookfuse.hpp leaves it out of HOOKFUSE_EMBEDDED and HOOKFUSE_NO_EXCEPTIONS builds.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <iostream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "hookfuse/clock.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/hooks/timer.hpp"

namespace hookfuse {
namespace detail {

/// Appends printf's `format` of one number (the format is a literal at every call site).
template <class T>
void append_printf(std::string& out, const char* format, T value) {
  char buf[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  const int n = std::snprintf(buf, sizeof buf, format, value);
#pragma GCC diagnostic pop
  if (n > 0) out.append(buf, static_cast<std::size_t>(std::min<int>(n, sizeof buf - 1)));
}

/// Keras' remaining time: "%d:%02d:%02d" past an hour, "%d:%02d" past a minute, else "%ds"
/// (Python's %d truncates the float seconds).
inline void append_keras_eta(std::string& out, double eta) {
  char buf[64];
  int n = 0;
  if (eta > 3600)
    n = std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld",
                      static_cast<long long>(std::floor(eta / 3600)),
                      static_cast<long long>(std::floor(std::fmod(eta, 3600.0) / 60)),
                      static_cast<long long>(std::fmod(eta, 60.0)));
  else if (eta > 60)
    n = std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(std::floor(eta / 60)),
                      static_cast<long long>(std::fmod(eta, 60.0)));
  else
    n = std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(eta));
  if (n > 0) out.append(buf, static_cast<std::size_t>(std::min<int>(n, sizeof buf - 1)));
}

/// Keras' time per step: " %.0fs/step" from a second (or exactly 0), " %.0fms/step" from a
/// millisecond, else " %.0fus/step".
inline void append_keras_time_per_step(std::string& out, double seconds) {
  if (seconds >= 1 || seconds == 0)
    append_printf(out, " %.0fs/step", seconds);
  else if (seconds >= 1e-3)
    append_printf(out, " %.0fms/step", seconds * 1e3);
  else
    append_printf(out, " %.0fus/step", seconds * 1e6);
}

/// Keras' value: "%.4f" when |v| > 1e-3, else "%.4e"; NaN is "nan" (Python's spelling for any
/// NaN, where glibc may print "-nan").
inline void append_keras_value(std::string& out, double v) {
  if (std::isnan(v))
    out += "nan";
  else if (std::fabs(v) > 1e-3)
    append_printf(out, "%.4f", v);
  else
    append_printf(out, "%.4e", v);
}

/// Whether `stream` is one of the standard streams and that descriptor is a terminal.
inline bool is_terminal(const std::ostream* stream) {
  if (stream == &std::cerr || stream == &std::clog) return ::isatty(STDERR_FILENO) == 1;
  if (stream == &std::cout) return ::isatty(STDOUT_FILENO) == 1;
  return false;
}

}  // namespace detail

/// A progress bar over training steps with the named tensors' running averages, drawn as
/// tf.keras 2.x's Progbar (verbose=1) draws it:
///
///      600/1875 [========>.....................] - ETA: 1s - 1101.7 steps/sec - loss: 0.7210
///     1875/1875 [==============================] - 2s 814us/step - 1229.3 steps/sec - loss: 0.4971
///
///     ProgressBarHook<"loss", "accuracy">({.total = 1875})
///
/// The count is the global step after the run, "<current>/<total>" with current padded to the
/// digits of total; the bar is `width` characters: int(width * current / total) of them drawn,
/// '=' each and the last '>' while current < total, '.' for the rest. Then " - ETA: <time>"
/// (Keras' "%d:%02d:%02d" past an hour, "%d:%02d" past a minute, else "%ds") while the total is
/// not reached, or " - <elapsed>s <time per step>" (" 45ms/step"; "s" from a second, "us" below
/// a millisecond) on the last line; then " - <rate> steps/sec" ("%.1f", not in Keras; left out
/// while no time has passed), and " - <name>: <value>" per tensor ("%.4f", or "%.4e" when
/// |value| <= 1e-3). Without a total (Keras' target=None) the count is "%7d/Unknown", no bar and
/// no ETA, and each line shows the elapsed time and time per step.
///
/// Times come from the clock policy. The time per step is Keras' estimate: after the first run,
/// (now - end of the first run) / (steps since it), which leaves the slow first step out;
/// before that (now - start) / steps, where start is the time the first run began. ETA is that
/// times the steps left. Values are averaged since the session began, as Keras averages a
/// metric over an epoch: each fetched value counts for the steps since the previous fetch
/// (Keras' Progbar.update weighting); a name in `stateful_metrics` shows its last value
/// instead. A non-scalar tensor shows its mean (numpy's mean, as Keras). A tensor not fetched
/// yet (a session that ends before the first line off a terminal) is not shown.
///
/// Where it draws: on a terminal (stream is std::cerr/std::clog/std::cout and isatty says so,
/// or is_tty = true) the line is redrawn in place ('\r', padded with spaces over a longer
/// previous line) after the first run, then after a run that starts at least `interval`
/// seconds (Keras: 0.05) after the last drawing, and after the run that reaches the total; the
/// last line ends with '\n'. Elsewhere (a file, a pipe, a CI log, or is_tty = false) it prints
/// whole lines, no '\r': one every `every_n_iter` runs and one when the total is reached. If the
/// session ends before (input exhausted, another hook's stop) end() prints the last line with
/// the values fetched so far; a session that runs on past the total keeps drawing at the same
/// cadence, with a full bar and no ETA, and end() ends its last line. The tensors are fetched only
/// in runs that draw; other runs cost a counter (a clock read on a terminal). Counts and averages
/// restart in begin().
///
/// Errors: std::invalid_argument for total <= 0, width <= 0, every_n_iter <= 0, interval < 0
/// or a stateful_metrics name that is not one of Names (the message names it).
template <Clock C, fixed_string... Names>
class BasicProgressBarHook {
  static constexpr std::size_t num_names = sizeof...(Names);
  static constexpr std::size_t num_slots = num_names == 0 ? 1 : num_names;

 public:
  struct Options {
    /// The global step the bar ends at (Keras' `target`); none: unknown, no bar and no ETA.
    std::optional<std::int64_t> total = std::nullopt;
    /// Characters of the bar (tf.keras 2.x: 30).
    int width = 30;
    /// Where lines go; nullptr: std::cerr.
    std::ostream* stream = nullptr;
    /// Overrides the terminal test (tests, or a terminal that isatty misses).
    std::optional<bool> is_tty = std::nullopt;
    /// On a terminal: seconds between redraws at least (Keras' `interval`).
    double interval = 0.05;
    /// Not on a terminal: a line every this many runs.
    std::int64_t every_n_iter = 100;
    /// Names shown as their last value instead of an average (Keras' `stateful_metrics`); read
    /// by the constructor only.
    std::initializer_list<std::string_view> stateful_metrics = {};
  };

  explicit BasicProgressBarHook(Options options = {}, C clock = C{})
      : total_(options.total),
        width_(options.width),
        stream_(options.stream != nullptr ? options.stream : &std::cerr),
        tty_(options.is_tty.value_or(detail::is_terminal(stream_))),
        interval_(options.interval),
        every_n_iter_(options.every_n_iter),
        clock_(clock) {
    if (total_ && *total_ <= 0)
      fail_option("total must be > 0 (or none for an unknown total), got", *total_);
    if (width_ <= 0) fail_option("width must be > 0, got", width_);
    if (every_n_iter_ <= 0) fail_option("every_n_iter must be > 0, got", every_n_iter_);
    if (!(interval_ >= 0))
      detail::fail<std::invalid_argument>((detail::ErrorMessage()
                                           << "ProgressBarHook: interval must be >= 0 seconds, got "
                                           << interval_)
                                              .str());
    for (std::string_view name : options.stateful_metrics) {
      std::size_t i = 0;
      bool found = false;
      (void)i;  // unused without names
      ((Names.view() == name ? (stateful_[i] = found = true) : false, ++i), ...);
      if (!found)
        detail::fail<std::invalid_argument>((detail::ErrorMessage()
                                             << "ProgressBarHook: stateful_metrics names '" << name
                                             << "', which is not one of the hook's tensors")
                                                .str());
    }
    line_.reserve(static_cast<std::size_t>(width_) + 160 + num_names * 48);
    begin();
  }

  /// Starts a session: counts, averages and times start again.
  void begin() {
    started_ = false;
    runs_ = 0;
    runs_to_line_ = every_n_iter_ - 1;
    first_end_time_.reset();
    shown_any_ = false;
    final_shown_ = false;
    reached_total_ = false;
    prev_width_ = 0;
    sums_ = {};
    counts_ = {};
  }

  SessionRunArgs<Names...> before_run(SessionRunContext& ctx) {
    if (!started_) {
      started_ = true;
      start_time_ = clock_.now();
      start_step_ = ctx.global_step();
      seen_so_far_ = start_step_;
    }
    const std::int64_t next =
        detail::saturating_add(ctx.global_step(), ctx.global_step_increment());
    // Only the first run that reaches the total ends the bar; a session that runs on past it
    // (no StopAtStepHook) keeps the usual cadence, without an ETA.
    finalize_ = total_ && next >= *total_ && !reached_total_;
    if (tty_) {
      fire_ =
          finalize_ || !shown_any_ || interval_ == 0 || clock_.now() - last_update_ >= interval_;
    } else {
      fire_ = finalize_ || runs_to_line_ == 0;
      runs_to_line_ = runs_to_line_ == 0 ? every_n_iter_ - 1 : runs_to_line_ - 1;
    }
    return {fire_};
  }

  void after_run(SessionRunContext& ctx, const SessionRunValues<Names...>& values) {
    ++runs_;
    current_ = ctx.global_step();
    std::optional<double> now;
    if (runs_ == 1) {
      now = clock_.now();
      first_end_time_ = *now;
      first_end_step_ = current_;
    }
    if (!fire_) return;
    accumulate(values);
    render(now ? *now : clock_.now(), finalize_);
    if (finalize_) reached_total_ = true;
  }

  /// Prints the last line unless the run that reached the total did.
  template <class Session>
  void end(Session&) {
    if (runs_ > 0 && !final_shown_) render(clock_.now(), true);
  }

  /// Whether lines are redrawn in place (a terminal) or printed one after another.
  bool is_tty() const { return tty_; }

 private:
  template <class T>
  [[noreturn]] static void fail_option(const char* what, T value) {
    detail::fail<std::invalid_argument>((detail::ErrorMessage()
                                         << "ProgressBarHook: " << what << " "
                                         << static_cast<long long>(value))
                                            .str());
  }

  static double mean(const TensorValue& t) {
    if (t.size() == 0) return std::nan("");
    double sum = 0;
    for (Eigen::Index r = 0; r < t.rows; ++r)
      for (Eigen::Index c = 0; c < t.cols; ++c) sum += t.at(r, c);
    return sum / static_cast<double>(t.size());
  }

  void accumulate(const SessionRunValues<Names...>& values) {
    const std::int64_t base = std::max<std::int64_t>(current_ - seen_so_far_, 1);
    for (std::size_t i = 0; i < num_names; ++i) {
      const double v = mean(values.results[i]);
      if (stateful_[i]) {
        sums_[i] = v;
        counts_[i] = 1;
      } else {
        sums_[i] += v * static_cast<double>(base);
        counts_[i] += base;
      }
    }
    seen_so_far_ = current_;
  }

  double time_per_step(double now) const {
    const std::int64_t done = current_ - start_step_;
    if (done <= 0) return 0.0;
    if (first_end_time_ && current_ > first_end_step_)
      return (now - *first_end_time_) / static_cast<double>(current_ - first_end_step_);
    return (now - start_time_) / static_cast<double>(done);
  }

  void render(double now, bool finalize) {
    line_.clear();
    if (tty_) line_ += '\r';
    const std::size_t start = line_.size();
    if (total_) {
      int digits = 1;
      for (std::int64_t t = *total_; t >= 10; t /= 10) ++digits;
      char count[64];
      const int n =
          std::snprintf(count, sizeof count, "%*lld/%lld [", digits,
                        static_cast<long long>(current_), static_cast<long long>(*total_));
      line_.append(count, static_cast<std::size_t>(std::clamp(n, 0, 63)));
      const double progress = static_cast<double>(current_) / static_cast<double>(*total_);
      const int drawn = static_cast<int>(
          std::clamp(static_cast<double>(width_) * progress, 0.0, static_cast<double>(width_)));
      if (drawn > 0) {
        line_.append(static_cast<std::size_t>(drawn - 1), '=');
        line_ += current_ < *total_ ? '>' : '=';
      }
      line_.append(static_cast<std::size_t>(width_ - drawn), '.');
      line_ += ']';
    } else {
      detail::append_printf(line_, "%7lld/Unknown", static_cast<long long>(current_));
    }
    const double per_step = time_per_step(now);
    if (!total_ || finalize || current_ >= *total_) {
      detail::append_printf(line_, " - %.0fs", now - start_time_);
      detail::append_keras_time_per_step(line_, per_step);
    } else {
      line_ += " - ETA: ";
      detail::append_keras_eta(line_, per_step * static_cast<double>(*total_ - current_));
    }
    if (per_step > 0) {
      detail::append_printf(line_, " - %.1f", 1.0 / per_step);
      line_ += " steps/sec";
    }
    std::size_t i = 0;
    (void)i;  // unused without names
    (
        [&] {
          if (counts_[i] > 0) {  // Keras shows a metric from its first value on
            line_ += " - ";
            line_ += Names.view();
            line_ += ": ";
            detail::append_keras_value(line_, sums_[i] / static_cast<double>(counts_[i]));
          }
          ++i;
        }(),
        ...);
    const std::size_t width = line_.size() - start;
    if (tty_ && prev_width_ > width) line_.append(prev_width_ - width, ' ');
    prev_width_ = width;
    if (finalize || !tty_) line_ += '\n';
    stream_->write(line_.data(), static_cast<std::streamsize>(line_.size()));
    stream_->flush();
    last_update_ = now;
    shown_any_ = true;
    final_shown_ = finalize;
  }

  std::optional<std::int64_t> total_;
  int width_;
  std::ostream* stream_;
  bool tty_;
  double interval_;
  std::int64_t every_n_iter_;
  C clock_;
  std::array<bool, num_slots> stateful_{};

  bool started_ = false;
  double start_time_ = 0.0;
  std::int64_t start_step_ = 0;
  std::optional<double> first_end_time_;
  std::int64_t first_end_step_ = 0;
  std::int64_t seen_so_far_ = 0;
  std::int64_t current_ = 0;
  std::int64_t runs_ = 0;
  std::int64_t runs_to_line_ = 0;
  std::array<double, num_slots> sums_{};
  std::array<std::int64_t, num_slots> counts_{};
  double last_update_ = 0.0;
  bool shown_any_ = false;
  bool final_shown_ = false;
  bool reached_total_ = false;
  bool fire_ = false;
  bool finalize_ = false;
  std::size_t prev_width_ = 0;
  std::string line_;
};

/// ProgressBarHook<"loss", "accuracy">({.total = 1875}) with the steady clock.
template <fixed_string... Names>
using ProgressBarHook = BasicProgressBarHook<SteadyClock, Names...>;

}  // namespace hookfuse
