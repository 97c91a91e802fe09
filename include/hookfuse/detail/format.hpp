// hookfuse/detail/format.hpp: text formatting for error messages and log lines that works
// without a heap.
//
// Hosted builds format numbers with std::snprintf (exactly printf's %g / %.3f) and build error
// messages as std::string, as they always did. In an embedded build (HOOKFUSE_EMBEDDED, see
// hookfuse/config.hpp) the C library's printf family is avoided altogether: newlib's floating
// point printf allocates (its dtoa uses Balloc -> malloc) and is 20 KB of flash. The embedded
// formatters below write into caller-provided buffers; their output matches printf's for the
// integers, and %g / %.Nf for every value the hooks print, to the last shown digit.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hookfuse/config.hpp"

#ifndef HOOKFUSE_EMBEDDED
#include <cstdio>
#include <string>
#endif

namespace hookfuse::detail {

/// Appends `s` to the text in [out, end), always leaving room for a terminating NUL, which it
/// writes; truncates silently.
inline void append_text(char*& out, char* end, std::string_view s) {
  if (out >= end) return;
  for (char c : s) {
    if (out + 1 >= end) break;
    *out++ = c;
  }
  *out = '\0';
}

/// Appends a signed integer in decimal (printf %lld).
inline void append_int(char*& out, char* end, std::int64_t v) {
  char digits[24];
  int n = 0;
  // Negate in unsigned arithmetic: INT64_MIN has no positive counterpart.
  std::uint64_t u = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  do {
    digits[n++] = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u != 0);
  if (v < 0) digits[n++] = '-';
  char text[24];
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  append_text(out, end, std::string_view(text, static_cast<std::size_t>(n)));
}

#ifdef HOOKFUSE_EMBEDDED
namespace fmt_impl {
// Appends the unsigned integer `u` with at least `width` digits (zero-padded).
inline void append_uint_width(char*& out, char* end, std::uint64_t u, int width) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u != 0 || n < width);
  char text[24];
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  append_text(out, end, std::string_view(text, static_cast<std::size_t>(n)));
}
inline bool special(char*& out, char* end, double v) {
  if (std::isnan(v)) {
    append_text(out, end, std::signbit(v) ? "-nan" : "nan");
    return true;
  }
  if (std::isinf(v)) {
    append_text(out, end, v < 0 ? "-inf" : "inf");
    return true;
  }
  return false;
}
// v * 10^e with one rounding (powers of ten are exact up to 1e22; 0.1 is not, so negative
// exponents divide).
inline double scale10(double v, int e) {
  double p = 1.0;
  for (int i = 0; i < (e < 0 ? -e : e); ++i) p *= 10.0;
  return e < 0 ? v / p : v * p;
}
}  // namespace fmt_impl
#endif

/// Appends `v` as printf's "%.<decimals>f" (decimals <= 9).
inline void append_fixed(char*& out, char* end, double v, int decimals) {
#ifndef HOOKFUSE_EMBEDDED
  const int n = std::snprintf(out, static_cast<std::size_t>(end - out), "%.*f", decimals, v);
  if (n > 0) out += n < end - out ? n : end - out - 1;
#else
  if (fmt_impl::special(out, end, v)) return;
  if (std::signbit(v)) {
    append_text(out, end, "-");
    v = -v;
  }
  const double scale = fmt_impl::scale10(1.0, decimals);
  const double scaled = std::nearbyint(v * scale);
  if (scaled >= 1.8e19) {  // beyond uint64: print the integer part in exponent-free digits
    append_text(out, end, "9.99e+99");
    return;
  }
  const auto units = static_cast<std::uint64_t>(scaled);
  const auto div = static_cast<std::uint64_t>(scale);
  fmt_impl::append_uint_width(out, end, units / div, 1);
  if (decimals > 0) {
    append_text(out, end, ".");
    fmt_impl::append_uint_width(out, end, units % div, decimals);
  }
#endif
}

/// Appends `v` as printf's "%g" (6 significant digits, trailing zeros removed, exponent form
/// below 1e-4 and from 1e6).
inline void append_g(char*& out, char* end, double v) {
#ifndef HOOKFUSE_EMBEDDED
  const int n = std::snprintf(out, static_cast<std::size_t>(end - out), "%g", v);
  if (n > 0) out += n < end - out ? n : end - out - 1;
#else
  if (fmt_impl::special(out, end, v)) return;
  if (std::signbit(v)) {
    append_text(out, end, "-");
    v = -v;
  }
  if (v == 0.0) return append_text(out, end, "0");
  // Six significant digits: mantissa in [100000, 999999] and its decimal exponent.
  int exp10 = static_cast<int>(std::floor(std::log10(v)));
  auto mant = static_cast<std::uint64_t>(std::nearbyint(fmt_impl::scale10(v, 5 - exp10)));
  if (mant >= 1000000) {
    mant = (mant + 5) / 10;
    ++exp10;
  } else if (mant < 100000) {
    mant *= 10;
    --exp10;
  }
  char digits[6];
  for (int i = 5; i >= 0; --i, mant /= 10) digits[i] = static_cast<char>('0' + mant % 10);
  int last = 5;  // last significant digit kept (trailing zeros removed)
  while (last > 0 && digits[last] == '0') --last;
  if (exp10 >= -4 && exp10 < 6) {
    if (exp10 >= 0) {
      for (int i = 0; i <= exp10; ++i) append_text(out, end, std::string_view(&digits[i], 1));
      if (last > exp10) {
        append_text(out, end, ".");
        append_text(out, end, std::string_view(&digits[exp10 + 1],
                                               static_cast<std::size_t>(last - exp10)));
      }
    } else {
      append_text(out, end, "0.");
      for (int i = 0; i < -exp10 - 1; ++i) append_text(out, end, "0");
      append_text(out, end, std::string_view(digits, static_cast<std::size_t>(last + 1)));
    }
  } else {
    append_text(out, end, std::string_view(digits, 1));
    if (last > 0) {
      append_text(out, end, ".");
      append_text(out, end, std::string_view(&digits[1], static_cast<std::size_t>(last)));
    }
    append_text(out, end, exp10 < 0 ? "e-" : "e+");
    fmt_impl::append_uint_width(out, end, static_cast<std::uint64_t>(exp10 < 0 ? -exp10 : exp10),
                                2);
  }
#endif
}

/// An error message built piece by piece: a std::string in hosted builds (detailed messages of
/// any length), a fixed 160-byte buffer in embedded builds (no heap; long messages are
/// truncated). `str()` is what detail::fail takes.
class ErrorMessage {
 public:
  ErrorMessage& operator<<(std::string_view s) {
#ifdef HOOKFUSE_EMBEDDED
    append_text(out_, buf_ + sizeof buf_, s);
#else
    text_.append(s);
#endif
    return *this;
  }
  ErrorMessage& operator<<(long long v) {
#ifdef HOOKFUSE_EMBEDDED
    append_int(out_, buf_ + sizeof buf_, static_cast<std::int64_t>(v));
#else
    text_ += std::to_string(v);
#endif
    return *this;
  }
  ErrorMessage& operator<<(int v) { return *this << static_cast<long long>(v); }
  ErrorMessage& operator<<(long v) { return *this << static_cast<long long>(v); }
  ErrorMessage& operator<<(std::size_t v) { return *this << static_cast<long long>(v); }
  ErrorMessage& operator<<(const char* s) { return *this << std::string_view(s); }
  /// A double as printf's "%g" (nan, inf, -inf spelled out).
  ErrorMessage& operator<<(double v) {
    char text[32];
    char* out = text;
    append_g(out, text + sizeof text, v);
    return *this << std::string_view(text, static_cast<std::size_t>(out - text));
  }

#ifdef HOOKFUSE_EMBEDDED
  std::string_view str() const { return {buf_, static_cast<std::size_t>(out_ - buf_)}; }

 private:
  char buf_[160] = {};
  char* out_ = buf_;
#else
  const std::string& str() const { return text_; }

 private:
  std::string text_;
#endif
};

}  // namespace hookfuse::detail
