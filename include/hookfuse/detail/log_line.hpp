// hookfuse/detail/log_line.hpp: the builder the built-in hooks format their log lines with.
//
// A LogLine is a fixed buffer on the stack (no heap, so embedded builds use it as is) and a
// write position. Its appenders are the detail/format.hpp ones: text, integers, printf's "%g"
// and "%.Nf"; anything else that writes through (char*& out, char* end) goes through
// cursor() and end(). A line longer than the buffer is cut at N - 1 characters, silently, like
// append_text; the text is always NUL-terminated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"

namespace hookfuse::detail {

/// A log line of at most N - 1 characters (N: the buffer size in bytes, NUL included;
/// HOOKFUSE_LOG_LINE_CAPACITY by default), built by the append calls in order.
template <std::size_t N = HOOKFUSE_LOG_LINE_CAPACITY>
class LogLine {
  static_assert(N >= 1, "LogLine: the buffer needs room for the terminating NUL (N >= 1)");

 public:
  LogLine() = default;
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;

  /// Appends `s` as is. (`s` by reference: GCC -Os copies a by-value view once more here.)
  LogLine& append(const std::string_view& s) {
    append_text(out_, end(), s);
    return *this;
  }
  /// Appends `v` in decimal ("-" for negatives).
  LogLine& append(std::int64_t v) {
    append_int(out_, end(), v);
    return *this;
  }
  /// Appends `v` (float or double) as printf's "%g" ("nan", "inf", "-inf" spelled out).
  template <class T>
  LogLine& append_g(T v) {
    detail::append_g(out_, end(), v);
    return *this;
  }
  /// Appends `v` (float or double) as printf's "%.<decimals>f".
  template <class T>
  LogLine& append_fixed(T v, int decimals) {
    detail::append_fixed(out_, end(), v, decimals);
    return *this;
  }

  /// The write position, for appenders of the form f(char*& out, char* end, ...).
  char*& cursor() { return out_; }
  /// One past the buffer's last byte: the `end` those appenders take.
  char* end() { return buf_ + N; }
  /// The text appended so far, NUL-terminated (at least one append call must have run).
  const char* c_str() const { return buf_; }
  /// The text appended so far (no NUL).
  std::string_view view() const { return {buf_, static_cast<std::size_t>(out_ - buf_)}; }

 private:
  char buf_[N];
  char* out_ = buf_;
};

}  // namespace hookfuse::detail
