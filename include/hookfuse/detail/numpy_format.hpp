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

#include "hookfuse/config.hpp"
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

HOOKFUSE_COLD inline void put_parts(Writer& w, const Parts& p) {
  w.put(std::string_view(p.int_part, static_cast<std::size_t>(p.int_len)));
}

/// The elements to print: element (i, j) is data[i * row_stride + j * col_stride], of type
/// float, double, std::int32_t or std::int64_t (`kind`). One non-template type for all four,
/// so that the formatting below is compiled once per translation unit rather than once per
/// element type (issue 12: four instantiations cost 0.7 s of g++ -O3 time in every file that
/// logs tensors).
struct Elements {
  enum class Kind { f32, f64, i32, i64 };
  const void* data;
  std::ptrdiff_t row_stride;
  std::ptrdiff_t col_stride;
  Kind kind;

  bool floating() const { return kind == Kind::f32 || kind == Kind::f64; }
  /// True for float32: digits are float32's own (shortest round trip of the float).
  bool single() const { return kind == Kind::f32; }
  std::ptrdiff_t offset(std::ptrdiff_t i, std::ptrdiff_t j) const {
    return i * row_stride + j * col_stride;
  }
  /// A floating element as double: exact for float32 too.
  double real(std::ptrdiff_t i, std::ptrdiff_t j) const {
    if (kind == Kind::f32)
      return static_cast<double>(static_cast<const float*>(data)[offset(i, j)]);
    return static_cast<const double*>(data)[offset(i, j)];
  }
  /// An integer element as int64: exact for int32 too.
  std::int64_t integer(std::ptrdiff_t i, std::ptrdiff_t j) const {
    if (kind == Kind::i32) return static_cast<const std::int32_t*>(data)[offset(i, j)];
    return static_cast<const std::int64_t*>(data)[offset(i, j)];
  }
};

/// The digit functions of numpy_digits.hpp for x in its own type: float when `single` (x is
/// then a float widened to double, so the narrowing is exact), double otherwise.
HOOKFUSE_COLD inline Parts digits_of(double x, bool single, bool scientific, int precision) {
  return single ? digits(static_cast<float>(x), scientific, precision)
                : digits(x, scientific, precision);
}
HOOKFUSE_COLD inline Parts positional_digits_of(double x, bool single, int precision) {
  return single ? positional_digits(static_cast<float>(x), precision)
                : positional_digits(x, precision);
}
HOOKFUSE_COLD inline Parts exact_scientific_of(double x, bool single, int precision) {
  return single ? exact_scientific(static_cast<float>(x), precision)
                : exact_scientific(x, precision);
}

/// numpy's str() of a float scalar (np.float32 when `single`, else np.float64).
HOOKFUSE_COLD inline void put_float_scalar(Writer& w, double x, bool single) {
  if (std::isnan(x)) return w.put("nan");
  if (std::isinf(x)) return w.put(x < 0 ? "-inf" : "inf");
  const long double a = std::fabs(static_cast<long double>(x));
  const bool positional = a == 0 || (a < 1.e16L && a >= 1.e-4L);
  const Parts p = digits_of(x, single, !positional, -1);
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

HOOKFUSE_COLD inline int int_text(char (&buf)[24], std::int64_t v) {
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

/// numpy's FloatingFormat (floatmode 'maxprec') fitted to the shown elements of a float32 or
/// float64 array.
struct FloatFormat {
  bool exp_format = false;
  int pad_left = 0;
  int pad_right = 0;
  int precision = numpy_impl::precision;
  int exp_size = -1;

  HOOKFUSE_COLD FloatFormat(const AxisView& rv, const AxisView& cv, const Elements& e,
                            NumpyPrintOptions options) {
    const bool single = e.single();
    bool any_finite = false, any_nonfinite = false, neg_inf = false;
    double max_v = 0, min_v = 0;  // magnitudes of the element type, exact in double
    bool any_nonzero = false;
    for (std::ptrdiff_t i = 0; i < rv.count(); ++i)
      for (std::ptrdiff_t j = 0; j < cv.count(); ++j) {
        const double x = e.real(rv.index(i), cv.index(j));
        if (!std::isfinite(x)) {
          any_nonfinite = true;
          neg_inf = neg_inf || (std::isinf(x) && x < 0);
          continue;
        }
        any_finite = true;
        if (x == 0) continue;
        const double a = std::fabs(x);
        if (!any_nonzero || a > max_v) max_v = a;
        if (!any_nonzero || a < min_v) min_v = a;
        any_nonzero = true;
      }
    if (any_nonzero) {
      // In the element type, as numpy divides two scalars of it; inf is fine. The float
      // quotient is stored in a float, so that it is rounded to float even where the compiler
      // computes in excess precision (x87).
      double ratio = max_v / min_v;
      if (single) {  // max_v and min_v are floats widened: narrowing them back is exact
        const float ratio32 = static_cast<float>(max_v) / static_cast<float>(min_v);
        ratio = static_cast<double>(ratio32);
      }
      exp_format =
          max_v >= max_fixed || (!options.suppress && (min_v < min_fixed || ratio > 1000.0));
    }
    if (any_finite) {
      int max_frac = 0;
      for (std::ptrdiff_t i = 0; i < rv.count(); ++i)
        for (std::ptrdiff_t j = 0; j < cv.count(); ++j) {
          const double x = e.real(rv.index(i), cv.index(j));
          if (!std::isfinite(x)) continue;
          const Parts p = exp_format ? digits_of(x, single, true, numpy_impl::precision)
                                     : positional_digits_of(x, single, numpy_impl::precision);
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

  /// Writes element (i, j) of `e`.
  HOOKFUSE_COLD void put(Writer& w, const Elements& e, std::ptrdiff_t i, std::ptrdiff_t j) const {
    const double x = e.real(i, j);
    if (!std::isfinite(x)) {
      const std::string_view s = std::isnan(x) ? "nan" : (x < 0 ? "-inf" : "inf");
      w.spaces(width() - static_cast<std::ptrdiff_t>(s.size()));
      return w.put(s);
    }
    const Parts p = exp_format ? exact_scientific_of(x, e.single(), precision)
                               : positional_digits_of(x, e.single(), precision);
    w.spaces(pad_left - p.int_len);
    put_parts(w, p);
    w.put(".");
    w.put(std::string_view(p.frac, static_cast<std::size_t>(p.frac_len)));
    if (exp_format) {  // trim 'k', min_digits = precision: exactly `precision` digits
      const char ex[2] = {'e', p.exp_sign};
      w.put(std::string_view(ex, 2));
      for (int k = p.exp_len; k < exp_size; ++k) w.put("0");
      w.put(std::string_view(p.exp_digits, static_cast<std::size_t>(p.exp_len)));
    } else {  // trim '.': digits as they are, then spaces to the shared fraction width
      w.spaces(pad_right - p.frac_len);
    }
  }
};

/// numpy's IntegerFormat: right-aligned to the widest of the shown min and max.
struct IntFormat {
  int width = 0;
  HOOKFUSE_COLD IntFormat(const AxisView& rv, const AxisView& cv, const Elements& e,
                          NumpyPrintOptions) {
    for (std::ptrdiff_t i = 0; i < rv.count(); ++i)
      for (std::ptrdiff_t j = 0; j < cv.count(); ++j) {
        char buf[24];
        const int n = int_text(buf, e.integer(rv.index(i), cv.index(j)));
        width = n > width ? n : width;
      }
  }
  /// Writes element (i, j) of `e`.
  HOOKFUSE_COLD void put(Writer& w, const Elements& e, std::ptrdiff_t i, std::ptrdiff_t j) const {
    char buf[24];
    const int n = int_text(buf, e.integer(i, j));
    w.spaces(width - n);
    w.put(std::string_view(buf, static_cast<std::size_t>(n)));
  }
};

/// Writes a word of `len` columns with `write()`, first wrapping the line when it would pass
/// `limit` and the cursor is past the hanging indent `hang`.
template <class Write>
HOOKFUSE_COLD void put_word(Writer& w, std::ptrdiff_t len, std::ptrdiff_t hang,
                            std::ptrdiff_t limit, Write write) {
  if (w.column() + len > limit && w.column() > hang) {
    w.newline();
    w.spaces(hang);
  }
  write();
}

/// One row (numpy's last axis) at hanging indent `hang` within `width` columns; the caller has
/// placed the cursor at column hang - 1.
template <class Fmt>
HOOKFUSE_COLD void put_row(Writer& w, const Fmt& fmt, const Elements& e, std::ptrdiff_t row,
                           const AxisView& cv, std::ptrdiff_t hang, std::ptrdiff_t width) {
  const std::ptrdiff_t limit = width - 1;  // room for the "]" (or the separator)
  w.put("[");
  char probe_buf[64];
  for (std::ptrdiff_t k = 0; k < cv.count(); ++k) {
    if (k == edge_items && cv.summary) {
      put_word(w, 3, hang, limit, [&] { w.put("..."); });
      w.put(" ");
    }
    Writer probe{probe_buf, probe_buf + sizeof probe_buf, probe_buf};
    fmt.put(probe, e, row, cv.index(k));
    put_word(w, probe.column(), hang, limit,
             [&] { w.put(std::string_view(probe_buf, static_cast<std::size_t>(probe.column()))); });
    if (k + 1 < cv.count()) w.put(" ");
  }
  w.put("]");
}

template <class Fmt>
HOOKFUSE_COLD void put_array_as(Writer& w, const Shape& s, const Elements& e,
                                NumpyPrintOptions options) {
  const bool summary = s.rows * s.cols > threshold;
  const AxisView rv{s.rows, summary && s.rows > 2 * edge_items};
  const AxisView cv{s.cols, summary && s.cols > 2 * edge_items};
  const Fmt fmt(rv, cv, e, options);
  if (s.rank == 1) return put_row(w, fmt, e, 0, cv, 1, line_width);
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
    put_row(w, fmt, e, rv.index(k), cv, 2, line_width - 1);
  }
  w.put("]");
}

HOOKFUSE_COLD inline void put_array(Writer& w, const Shape& s, const Elements& e,
                                    NumpyPrintOptions options) {
  if (s.rows * s.cols == 0) return w.put("[]");
  if (e.floating()) return put_array_as<FloatFormat>(w, s, e, options);
  put_array_as<IntFormat>(w, s, e, options);
}

}  // namespace numpy_impl

/// Appends numpy's str() of the value `e` (float32, float64, int32 or int64 elements) with
/// `rank` 0 (a numpy scalar; rows = cols = 1), 1 (an array [cols]; rows = 1) or 2 ([rows,
/// cols]); `options` as set by np.set_printoptions (numpy's defaults unless given). The text
/// ends with a NUL; it is cut off where [out, end) is full.
HOOKFUSE_COLD inline void append_numpy_str(char*& out, char* end, int rank, std::ptrdiff_t rows,
                                           std::ptrdiff_t cols, const numpy_impl::Elements& e,
                                           NumpyPrintOptions options = {}) {
  if (out >= end) return;
  numpy_impl::Writer w{out, end, out};
  *out = '\0';
  if (rank == 0) {
    if (e.floating()) {
      numpy_impl::put_float_scalar(w, e.real(0, 0), e.single());
    } else {
      char buf[24];
      w.put(std::string_view(buf,
                             static_cast<std::size_t>(numpy_impl::int_text(buf, e.integer(0, 0)))));
    }
  } else {
    numpy_impl::put_array(w, {rank, rank == 1 ? 1 : rows, cols}, e, options);
  }
  out = w.out;
}

}  // namespace hookfuse::detail
