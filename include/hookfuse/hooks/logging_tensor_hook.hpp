// hookfuse/hooks/logging_tensor_hook.hpp: LoggingTensorHook (tf.compat.v1.train.LoggingTensorHook).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "hookfuse/clock.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/log_line.hpp"
#ifndef HOOKFUSE_EMBEDDED
#include "hookfuse/detail/numpy_format.hpp"
#endif
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/hooks/timer.hpp"
#include "hookfuse/logging.hpp"

namespace hookfuse {

/// No formatter: lines read as TensorFlow's, "loss = 0.6931472, accuracy = 0.5 (0.012 sec)":
/// "<name> = <numpy str() of the value>" joined by ", ", then " (<seconds, 3 decimals> sec)"
/// when timed; values print under np.set_printoptions(suppress=True), as TensorFlow's hook sets
/// it while logging ("[0.00001 1.     ]", not "[1.e-05 1.e+00]"; see detail::append_tensor).
struct DefaultTensorFormatter {};

/// The default line with each tensor shown under a key of its own instead of its name, as
/// TensorFlow's hook shows the keys of a `tensors` dict: the Estimator's
/// LoggingTensorHook({'loss': loss, 'step': global_step}) is
/// BasicLoggingTensorHook<LoggingPolicies<C, L, TensorTags<"loss", "step">>, "loss",
/// "global_step">, logging "loss = 0.6931472, step = 1". One tag per tensor, in order.
template <fixed_string... Tags>
struct TensorTags {};

namespace detail {
template <class F>
inline constexpr bool is_tensor_tags_v = false;
template <fixed_string... Tags>
inline constexpr bool is_tensor_tags_v<TensorTags<Tags...>> = true;
}  // namespace detail

/// The policies of a LoggingTensorHook: clock, logger and formatter. A formatter is called as
/// `formatter(values)` with the hook's SessionRunValues and returns the line to log (anything
/// convertible to std::string_view), replacing the default line, as TensorFlow's `formatter`.
template <Clock C = SteadyClock, Logger L = StderrLogger, class F = DefaultTensorFormatter>
struct LoggingPolicies {
  using clock = C;
  using logger = L;
  using formatter = F;
};

namespace detail {
/// The rank numpy gives a fetched tensor, from its [rows, cols] storage: [1, 1] is a scalar
/// (the loss, a metric, global_step: TensorFlow returns a numpy scalar), [1, n] with n != 1 a
/// 1-D array (a bias [n] is stored [1, n]), anything else 2-D ([n, 1] included: a Dense kernel
/// with one unit, predictions [batch, 1]). A variable whose TensorFlow shape is [1] or [1, 1],
/// or [1, n] is ambiguous here; pass the rank to append_tensor to print it as TensorFlow would.
inline int numpy_rank(const TensorValue& t) {
  if (t.rows == 1) return t.cols == 1 ? 0 : 1;
  return 2;
}

/// Appends numpy's str() of `t` ("%s" % value, see detail/numpy_format.hpp), with numpy rank
/// `rank` (0: t is one element, 1: t is [1, n], 2), under numpy's default print options, or
/// under np.set_printoptions(suppress=True) when `suppress` is true, as TensorFlow's
/// LoggingTensorHook logs it. HOOKFUSE_EMBEDDED builds print printf's %g instead, whatever
/// `suppress` (docs/embedded.md).
HOOKFUSE_COLD inline void append_tensor(char*& out, char* end, const TensorValue& t, int rank,
                                        bool suppress = false) {
  if (t.data == nullptr) return append_text(out, end, "None");
#ifndef HOOKFUSE_EMBEDDED
  using Kind = numpy_impl::Elements::Kind;
  Kind kind = Kind::f32;
  switch (t.dtype) {
    case DType::float32: kind = Kind::f32; break;
    case DType::float64: kind = Kind::f64; break;
    case DType::int32: kind = Kind::i32; break;
    case DType::int64: kind = Kind::i64; break;
  }
  append_numpy_str(out, end, rank, t.rows, t.cols,
                   numpy_impl::Elements{t.data, t.row_stride, t.col_stride, kind},
                   NumpyPrintOptions{.suppress = suppress});
#else
  // printf's %g for each floating-point element, integers in full, on one line, at most 16
  // elements.
  (void)suppress;
  auto text = [&](const char* s) { append_text(out, end, s); };
  auto element = [&](Eigen::Index i, Eigen::Index j) {
    const Eigen::Index k = i * t.row_stride + j * t.col_stride;
    switch (t.dtype) {
      case DType::float32: return append_g(out, end, static_cast<const float*>(t.data)[k]);
      case DType::float64: return append_g(out, end, static_cast<const double*>(t.data)[k]);
      case DType::int32: return append_int(out, end, static_cast<const std::int32_t*>(t.data)[k]);
      case DType::int64: return append_int(out, end, static_cast<const std::int64_t*>(t.data)[k]);
    }
  };
  if (rank == 0) return element(0, 0);
  int shown = 0;
  text(rank == 2 ? "[[" : "[");
  for (Eigen::Index i = 0; i < t.rows; ++i) {
    if (i > 0) text("] [");
    for (Eigen::Index j = 0; j < t.cols; ++j, ++shown) {
      if (shown == 16) return text(" ...]");
      if (j) text(" ");
      element(i, j);
    }
  }
  text(rank == 2 ? "]]" : "]");
#endif
}
HOOKFUSE_COLD inline void append_tensor(char*& out, char* end, const TensorValue& t) {
  append_tensor(out, end, t, numpy_rank(t));
}
}  // namespace detail

/// Logs the values of the named tensors every `every_n_iter` runs or every `every_n_secs`
/// seconds, and/or once at the end (at_end). Counts the runs of this session, not global steps:
/// with every_n_iter = 10 it logs at runs 1, 11, 21, ... The first line has no time; later ones
/// end with " (<seconds since the previous line> sec)". Throws std::invalid_argument unless
/// at_end and/or exactly one interval is given, or for every_n_iter <= 0.
template <class Policies, fixed_string... Names>
class BasicLoggingTensorHook {
  using C = typename Policies::clock;
  using L = typename Policies::logger;
  using F = typename Policies::formatter;

 public:
  static_assert(sizeof...(Names) > 0, "hookfuse: LoggingTensorHook needs at least one tensor name");
  struct Options {
    std::optional<std::int64_t> every_n_iter = std::nullopt;
    std::optional<host_float> every_n_secs = std::nullopt;
    bool at_end = false;
  };

  explicit BasicLoggingTensorHook(Options options, F formatter = F{}, C clock = C{},
                                  L logger = L{})
      : formatter_(formatter), logger_(logger), log_at_end_(options.at_end) {
    const bool only_at_end = options.at_end && !options.every_n_iter && !options.every_n_secs;
    if (!only_at_end && options.every_n_iter.has_value() == options.every_n_secs.has_value())
      detail::fail<std::invalid_argument>(
          "LoggingTensorHook: either at_end and/or exactly one of every_n_iter and every_n_secs "
          "must be provided");
    if (options.every_n_iter && *options.every_n_iter <= 0)
      detail::fail<std::invalid_argument>("LoggingTensorHook: every_n_iter must be > 0");
    if (!only_at_end) timer_.emplace(options.every_n_secs, options.every_n_iter, clock);
  }

  void begin() {
    if (timer_) timer_->reset();
    iter_count_ = 0;
  }

  SessionRunArgs<Names...> before_run(SessionRunContext&) {
    should_trigger_ = timer_ && timer_->should_trigger_for_step(iter_count_);
    return {should_trigger_};
  }

  void after_run(SessionRunContext&, const SessionRunValues<Names...>& values) {
    if (should_trigger_) log_tensors(values);
    ++iter_count_;
  }

  template <class Session>
  void end(Session& session) {
    if (!log_at_end_) return;
    SessionRunValues<Names...> values{};
    std::size_t i = 0;
    ((values.results[i++] = session.template fetch<Names>()), ...);
    log_tensors(values);
  }

  /// The runs until the next trigger of an every_n_iter hook (idle for the session's fast path,
  /// SkipsIdleRuns); 0 for every_n_secs (the clock decides each run); all of them for an
  /// at_end-only hook.
  std::int64_t idle_runs() const {
    if (!timer_) return std::numeric_limits<std::int64_t>::max();
    return timer_->steps_before_trigger(iter_count_);
  }
  /// n runs sat out: counted as n runs without a trigger.
  void skip_runs(std::int64_t n) {
    iter_count_ += n;
    should_trigger_ = false;
  }

  /// Runs seen so far.
  std::int64_t iter_count() const { return iter_count_; }
  L& logger() { return logger_; }

 private:
  HOOKFUSE_COLD void log_tensors(const SessionRunValues<Names...>& values) {
    std::optional<host_float> elapsed = std::nullopt;
    if (timer_) elapsed = timer_->update_last_triggered_step(iter_count_).secs;
    if constexpr (!std::is_same_v<F, DefaultTensorFormatter> && !detail::is_tensor_tags_v<F>) {
      logger_.log(Severity::info, std::string_view(formatter_(values)));
    } else {
      detail::LogLine<> line;
      std::size_t i = 0;
      auto item = [&](std::string_view name) {
        if (i) line.append(", ");
        line.append(name).append(" = ");
        const TensorValue& value = values.results[i++];
        detail::append_tensor(line.cursor(), line.end(), value, detail::numpy_rank(value),
                              /*suppress=*/true);
      };
      if constexpr (detail::is_tensor_tags_v<F>) {
        [&]<fixed_string... Tags>(TensorTags<Tags...>) {
          static_assert(sizeof...(Tags) == sizeof...(Names),
                        "hookfuse: TensorTags<...>: give one tag per tensor the hook logs");
          (item(Tags.view()), ...);
        }(F{});
      } else {
        (item(Names.view()), ...);
      }
      if (elapsed) line.append(" (").append_fixed(*elapsed, 3).append(" sec)");
      logger_.log(Severity::info, line.view());
    }
  }

  std::optional<SecondOrStepTimer<C>> timer_;
  [[no_unique_address]] F formatter_;
  L logger_;
  bool log_at_end_;
  bool should_trigger_ = false;
  std::int64_t iter_count_ = 0;
};

/// LoggingTensorHook<"loss", "accuracy">({.every_n_iter = 100}) with the default policies
/// (steady clock, stderr logger, default line).
template <fixed_string... Names>
using LoggingTensorHook = BasicLoggingTensorHook<LoggingPolicies<>, Names...>;

}  // namespace hookfuse
