// hookfuse/detail/numpy_format.hpp: numpy's str() of a scalar or an array of rank <= 2, as
// TensorFlow's LoggingTensorHook prints fetched values ("%s" % value), into a fixed buffer.
//
// The rules are numpy's (1.14 and later) with its default print options: a rank-0 value is a
// numpy scalar, an array goes through array2string with precision 8, floatmode 'maxprec',
// sign '-', linewidth 75, threshold 1000 and edgeitems 3; suppress_small is numpy's default
// (off) unless NumpyPrintOptions::suppress is set, as TensorFlow's hook sets it while it logs
// (np.set_printoptions(suppress=True)).
//   * float scalars: shortest round-trip digits of their own type (float32 digits for a
//     float32), positional when 1e-4 <= |x| < 1e16 or x == 0 ("121.0", "0.6931472"),
//     scientific otherwise ("1e-05", "3.4028235e+38"); "nan", "inf", "-inf". suppress does not
//     change them (numpy scalars' str() ignores the print options).
//   * integers: exact decimal.
//   * float arrays: each element's shortest digits, cut at 8 fractional digits (the exact
//     value rounded, so 1e-9 prints "0." and -1e-9 "-0."), and in positional notation never
//     short of the units digit (float32 99999992 prints "99999992.", where the scalar's str()
//     is "99999990.0"); scientific for the whole array when, over the finite non-zero
//     magnitudes shown, max >= 1e8 or, without suppress, min < 1e-4 or max / min > 1e3
//     ("[1.e-05 1.e+00]"; with suppress "[0.00001 1.     ]"); then every element shares
//     the integer width, the number of fractional digits (scientific: padded with zeros,
//     positional: padded with spaces) and the exponent width; "nan" and "inf" are
//     right-aligned to the same width.
//   * integer arrays: right-aligned to the widest of the shown minimum and maximum.
//   * layout: "[" + elements separated by " ", lines wrapped before column 75 with the
//     continuation indented under the first element; rows of a matrix on their own lines
//     ("[[a b]\n [c d]]"); above 1000 elements only the first and last 3 items of each axis
//     longer than 6 are shown, with "..." between them.
//
// Digits come from std::to_chars (shortest round-trip, or correctly rounded at a precision;
// detail/numpy_digits.hpp), so this header is for hosted builds; HOOKFUSE_EMBEDDED builds keep
// detail/format.hpp's printf-like formatting (docs/embedded.md explains why).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "hookfuse/detail/format.hpp"
#include "hookfuse/detail/numpy_digits.hpp"

namespace hookfuse::detail {

/// The numpy print options (np.set_printoptions) that differ from numpy's defaults where
/// hookfuse prints values; a default-constructed value is numpy's defaults.
struct NumpyPrintOptions {
  /// numpy's `suppress`: float arrays stay positional unless their largest finite magnitude is
  /// >= 1e8, rather than also switching to scientific notation for a magnitude below 1e-4 or a
  /// max / min ratio above 1000. Scalars are not affected.
  bool suppress = false;
};

namespace numpy_impl {

/// Writes into [out, end) keeping room for a terminating NUL, and knows the current column.
struct Writer {
  char* out;
  char* end;
  char* line_start;

  void put(std::string_view s) { append_text(out, end, s); }
  void spaces(std::ptrdiff_t n) {
    for (std::ptrdiff_t i = 0; i < n; ++i) put(" ");
  }
  std::ptrdiff_t column() const { return out - line_start; }
  /// Python's line.rstrip() + "\n".
  void newline() {
    while (out > line_start && out[-1] == ' ') --out;
    put("\n");
    line_start = out;
  }
};

inline void put_parts(Writer& w, const Parts& p) {
  w.put(std::string_view(p.int_part, static_cast<std::size_t>(p.int_len)));
}

/// numpy's str() of a float scalar (np.float32 / np.float64).
template <class T>
void put_float_scalar(Writer& w, T x) {
  if (std::isnan(x)) return w.put("nan");
  if (std::isinf(x)) return w.put(x < 0 ? "-inf" : "inf");
  const long double a = std::fabs(static_cast<long double>(x));
  const bool positional = a == 0 || (a < 1.e16L && a >= 1.e-4L);
  const Parts p = digits(x, !positional, -1);
  put_parts(w, p);
  if (positional) {  // trim mode LeaveOneZero: "121.0"
    w.put(".");
    if (p.frac_len == 0) w.put("0");
  } else if (p.frac_len > 0) {  // trim mode DptZeros: "1e+16", "1.5e-05"
    w.put(".");
  }
  w.put(std::string_view(p.frac, static_cast<std::size_t>(p.frac_len)));
  if (!positional) {
    const char e[2] = {'e', p.exp_sign};
    w.put(std::string_view(e, 2));
    w.put(std::string_view(p.exp_digits, static_cast<std::size_t>(p.exp_len)));
  }
}

inline int int_text(char (&buf)[24], std::int64_t v) {
  char* out = buf;
  append_int(out, buf + sizeof buf, v);
  return static_cast<int>(out - buf);
}

/// The axes of a value as numpy sees them: rank 0 (one element), 1 ([cols]) or 2.
struct Shape {
  int rank;
  std::ptrdiff_t rows;
  std::ptrdiff_t cols;
};

/// Which indices of an axis of length n are shown: all, or the first and last 3 with a
/// summary between.
struct AxisView {
  std::ptrdiff_t n;
  bool summary;
  std::ptrdiff_t count() const { return summary ? 6 : n; }
  std::ptrdiff_t index(std::ptrdiff_t k) const { return summary && k >= 3 ? n - 6 + k : k; }
};
inline constexpr std::ptrdiff_t edge_items = 3;
inline constexpr std::ptrdiff_t threshold = 1000;
inline constexpr std::ptrdiff_t line_width = 75;
inline constexpr double max_fixed = 1e8;
inline constexpr double min_fixed = 1e-4;
inline constexpr int precision = 8;

/// numpy's FloatingFormat (floatmode 'maxprec') fitted to the shown elements.
template <class T>
struct FloatFormat {
  bool exp_format = false;
  int pad_left = 0;
  int pad_right = 0;
  int precision = numpy_impl::precision;
  int exp_size = -1;

  template <class Get>
  FloatFormat(const AxisView& rv, const AxisView& cv, Get get, NumpyPrintOptions options) {
    bool any_finite = false, any_nonfinite = false, neg_inf = false;
    T max_v = 0, min_v = 0;
    bool any_nonzero = false;
    for (std::ptrdiff_t i = 0; i < rv.count(); ++i)
      for (std::ptrdiff_t j = 0; j < cv.count(); ++j) {
        const T x = get(rv.index(i), cv.index(j));
        if (!std::isfinite(x)) {
          any_nonfinite = true;
          neg_inf = neg_inf || (std::isinf(x) && x < 0);
          continue;
        }
        any_finite = true;
        if (x == 0) continue;
        const T a = std::fabs(x);
        if (!any_nonzero || a > max_v) max_v = a;
        if (!any_nonzero || a < min_v) min_v = a;
        any_nonzero = true;
      }
    if (any_nonzero) {
      const T ratio = max_v / min_v;  // in T, as numpy divides two T scalars; inf is fine
      exp_format = static_cast<double>(max_v) >= max_fixed ||
                   (!options.suppress && (static_cast<double>(min_v) < min_fixed ||
                                          static_cast<double>(ratio) > 1000.0));
    }
    if (any_finite) {
      int max_frac = 0;
      for (std::ptrdiff_t i = 0; i < rv.count(); ++i)
        for (std::ptrdiff_t j = 0; j < cv.count(); ++j) {
          const T x = get(rv.index(i), cv.index(j));
          if (!std::isfinite(x)) continue;
          const Parts p = exp_format ? digits(x, true, numpy_impl::precision)
                                     : positional_digits(x, numpy_impl::precision);
          pad_left = p.int_len > pad_left ? p.int_len : pad_left;
          max_frac = p.frac_len > max_frac ? p.frac_len : max_frac;
          exp_size = p.exp_len > exp_size ? p.exp_len : exp_size;
        }
      if (exp_format) {
        precision = max_frac;
        pad_right = exp_size + 2 + precision;
      } else {
        exp_size = -1;
        pad_right = max_frac;
      }
    }
    if (any_nonfinite) {  // room for "nan", "inf", "-inf" right of the integer column
      const int offset = pad_right + 1;
      const int inf_len = 3 + (neg_inf ? 1 : 0);
      if (3 - offset > pad_left) pad_left = 3 - offset;
      if (inf_len - offset > pad_left) pad_left = inf_len - offset;
    }
  }

  int width() const { return pad_left + pad_right + 1; }

  void put(Writer& w, T x) const {
    if (!std::isfinite(x)) {
      const std::string_view s = std::isnan(x) ? "nan" : (x < 0 ? "-inf" : "inf");
      w.spaces(width() - static_cast<std::ptrdiff_t>(s.size()));
      return w.put(s);
    }
    const Parts p = exp_format ? exact_scientific(x, precision) : positional_digits(x, precision);
    w.spaces(pad_left - p.int_len);
    put_parts(w, p);
    w.put(".");
    w.put(std::string_view(p.frac, static_cast<std::size_t>(p.frac_len)));
    if (exp_format) {  // trim 'k', min_digits = precision: exactly `precision` digits
      const char e[2] = {'e', p.exp_sign};
      w.put(std::string_view(e, 2));
      for (int k = p.exp_len; k < exp_size; ++k) w.put("0");
      w.put(std::string_view(p.exp_digits, static_cast<std::size_t>(p.exp_len)));
    } else {  // trim '.': digits as they are, then spaces to the shared fraction width
      w.spaces(pad_right - p.frac_len);
    }
  }
};

/// numpy's IntegerFormat: right-aligned to the widest of the shown min and max.
template <class T>
struct IntFormat {
  int width = 0;
  template <class Get>
  IntFormat(const AxisView& rv, const AxisView& cv, Get get, NumpyPrintOptions) {
    for (std::ptrdiff_t i = 0; i < rv.count(); ++i)
      for (std::ptrdiff_t j = 0; j < cv.count(); ++j) {
        char buf[24];
        const int n = int_text(buf, static_cast<std::int64_t>(get(rv.index(i), cv.index(j))));
        width = n > width ? n : width;
      }
  }
  void put(Writer& w, T x) const {
    char buf[24];
    const int n = int_text(buf, static_cast<std::int64_t>(x));
    w.spaces(width - n);
    w.put(std::string_view(buf, static_cast<std::size_t>(n)));
  }
};

/// One row (numpy's last axis) at hanging indent `hang` within `width` columns; the caller has
/// placed the cursor at column hang - 1.
template <class Fmt, class Get>
void put_row(Writer& w, const Fmt& fmt, Get get, std::ptrdiff_t row, const AxisView& cv,
             std::ptrdiff_t hang, std::ptrdiff_t width) {
  const std::ptrdiff_t limit = width - 1;  // room for the "]" (or the separator)
  w.put("[");
  auto word = [&](std::ptrdiff_t len, auto&& write) {
    if (w.column() + len > limit && w.column() > hang) {
      w.newline();
      w.spaces(hang);
    }
    write();
  };
  char probe_buf[64];
  for (std::ptrdiff_t k = 0; k < cv.count(); ++k) {
    if (k == edge_items && cv.summary) {
      word(3, [&] { w.put("..."); });
      w.put(" ");
    }
    const auto x = get(row, cv.index(k));
    Writer probe{probe_buf, probe_buf + sizeof probe_buf, probe_buf};
    fmt.put(probe, x);
    word(probe.column(),
         [&] { w.put(std::string_view(probe_buf, static_cast<std::size_t>(probe.column()))); });
    if (k + 1 < cv.count()) w.put(" ");
  }
  w.put("]");
}

template <class T, class Get>
void put_array(Writer& w, const Shape& s, Get get, NumpyPrintOptions options) {
  if (s.rows * s.cols == 0) return w.put("[]");
  const bool summary = s.rows * s.cols > threshold;
  const AxisView rv{s.rows, summary && s.rows > 2 * edge_items};
  const AxisView cv{s.cols, summary && s.cols > 2 * edge_items};
  using Fmt = std::conditional_t<std::is_floating_point_v<T>, FloatFormat<T>, IntFormat<T>>;
  const Fmt fmt(rv, cv, get, options);
  if (s.rank == 1) return put_row(w, fmt, get, 0, cv, 1, line_width);
  w.put("[");
  for (std::ptrdiff_t k = 0; k < rv.count(); ++k) {
    if (k > 0) {
      w.newline();
      w.spaces(1);
    }
    if (k == edge_items && rv.summary) {
      w.put("...");
      w.newline();
      w.spaces(1);
    }
    put_row(w, fmt, get, rv.index(k), cv, 2, line_width - 1);
  }
  w.put("]");
}

}  // namespace numpy_impl

/// Appends numpy's str() of a value of element type T (float, double, std::int32_t or
/// std::int64_t) with `rank` 0 (a numpy scalar; rows = cols = 1), 1 (an array [cols];
/// rows = 1) or 2 ([rows, cols]); `get(i, j)` returns element (i, j) as T; `options` as set by
/// np.set_printoptions (numpy's defaults unless given). The text ends with a NUL; it is cut off
/// where [out, end) is full.
template <class T, class Get>
void append_numpy_str(char*& out, char* end, int rank, std::ptrdiff_t rows, std::ptrdiff_t cols,
                      Get get, NumpyPrintOptions options = {}) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>,
                "hookfuse: numpy formatting supports float, double, int32 and int64");
  if (out >= end) return;
  numpy_impl::Writer w{out, end, out};
  *out = '\0';
  if (rank == 0) {
    const T x = get(0, 0);
    if constexpr (std::is_floating_point_v<T>) {
      numpy_impl::put_float_scalar(w, x);
    } else {
      char buf[24];
      w.put(std::string_view(
          buf, static_cast<std::size_t>(numpy_impl::int_text(buf, static_cast<std::int64_t>(x)))));
    }
  } else {
    numpy_impl::put_array<T>(w, {rank, rank == 1 ? 1 : rows, cols}, get, options);
  }
  out = w.out;
}

}  // namespace hookfuse::detail
