// hookfuse/detail/numpy_digits.hpp: the digits numpy's Dragon4 prints for a float (shortest
// round-trip, or the exact value rounded at a number of fraction digits), from std::to_chars,
// split as numpy's array printer splits them (integer part, fraction, exponent).
//
// Used by detail/numpy_format.hpp; hosted builds only (std::to_chars for floating point, see
// docs/embedded.md).
#pragma once

#include <charconv>
#include <system_error>

#include "hookfuse/config.hpp"

namespace hookfuse::detail::numpy_impl {

/// A number's text split as numpy splits it: integer part (with sign), fraction digits, and
/// for scientific notation the exponent's sign and digits.
struct Parts {
  char int_part[24] = {};
  int int_len = 0;
  char frac[24] = {};
  int frac_len = 0;
  char exp_sign = '+';
  char exp_digits[8] = {};
  int exp_len = 0;  // 0: positional
};

HOOKFUSE_COLD inline void copy(char* dst, int& len, int cap, const char* b, const char* e) {
  len = 0;
  for (; b < e && len < cap; ++b) dst[len++] = *b;
}

/// Splits to_chars' text ("-12.5", "1.25e-05", "3e+38").
HOOKFUSE_COLD inline Parts split(const char* b, const char* e) {
  Parts p;
  const char* dot = b;
  while (dot < e && *dot != '.' && *dot != 'e') ++dot;
  copy(p.int_part, p.int_len, sizeof p.int_part, b, dot);
  const char* f = dot < e && *dot == '.' ? dot + 1 : dot;
  const char* fe = f;
  while (fe < e && *fe != 'e') ++fe;
  copy(p.frac, p.frac_len, sizeof p.frac, f, fe);
  if (fe < e) {  // "e+05"
    p.exp_sign = fe + 1 < e ? fe[1] : '+';
    copy(p.exp_digits, p.exp_len, sizeof p.exp_digits, fe + 2, e);
  }
  return p;
}

/// Scientific parts ("d.ddd", exponent) as positional ones: "1.2345679e+08" -> "123456790".
HOOKFUSE_COLD inline Parts to_positional(const Parts& sci) {
  Parts p;
  int exp10 = 0;
  for (int k = 0; k < sci.exp_len; ++k) exp10 = exp10 * 10 + (sci.exp_digits[k] - '0');
  if (sci.exp_sign == '-') exp10 = -exp10;
  const bool negative = sci.int_len > 0 && sci.int_part[0] == '-';
  char all[24];  // the significant digits, without sign
  int n = 0;
  for (int k = negative ? 1 : 0; k < sci.int_len && n < 24; ++k) all[n++] = sci.int_part[k];
  for (int k = 0; k < sci.frac_len && n < 24; ++k) all[n++] = sci.frac[k];
  if (negative) p.int_part[p.int_len++] = '-';
  if (exp10 < 0) {
    p.int_part[p.int_len++] = '0';
    for (int k = 0; k < -exp10 - 1 && p.frac_len < 24; ++k) p.frac[p.frac_len++] = '0';
    for (int k = 0; k < n && p.frac_len < 24; ++k) p.frac[p.frac_len++] = all[k];
  } else {
    for (int k = 0; k <= exp10 && p.int_len < 24; ++k)
      p.int_part[p.int_len++] = k < n ? all[k] : '0';
    for (int k = exp10 + 1; k < n && p.frac_len < 24; ++k) p.frac[p.frac_len++] = all[k];
  }
  return p;
}

/// Dragon4 in numpy's "unique" mode: the shortest round-trip digits of `x` in its own type;
/// when `precision` >= 0 and they need more fraction digits, `x` correctly rounded to
/// `precision` fraction digits with trailing zeros dropped. Finite x with |x| < 1e17 when
/// positional (numpy prints larger ones in scientific notation).
template <class T>
HOOKFUSE_COLD Parts digits(T x, bool scientific, int precision) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  Parts p = split(buf, r.ptr);
  if (!scientific) p = to_positional(p);
  if (precision >= 0 && p.frac_len > precision) {
    const auto fmt = scientific ? std::chars_format::scientific : std::chars_format::fixed;
    r = std::to_chars(buf, buf + sizeof buf, x, fmt, precision);
    p = split(buf, r.ptr);
    while (p.frac_len > 0 && p.frac[p.frac_len - 1] == '0') --p.frac_len;
  }
  return p;
}

/// An array element in positional notation (numpy passes min_digits = 0): digits(x, false,
/// precision), except that Dragon4 then never stops before the units digit, so a value whose
/// shortest digits end before it prints its exact integer part: float32 99999992 is
/// "99999992." in an array (its shortest digits, and str() of the scalar, say 99999990). Only
/// values without fraction digits can differ (for a float32, those of 2^24 or more).
template <class T>
HOOKFUSE_COLD Parts positional_digits(T x, int precision) {
  Parts p = digits(x, false, precision);
  if (p.frac_len == 0) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, 0);
    p = split(buf, r.ptr);
  }
  return p;
}

/// numpy's min_digits = precision in scientific notation: `x` correctly rounded to exactly
/// `precision` fraction digits (more digits of its exact value than the shortest ones, if need
/// be: 0.6666667f prints 6.6666669e-01 at precision 8).
template <class T>
HOOKFUSE_COLD Parts exact_scientific(T x, int precision) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific, precision);
  return split(buf, r.ptr);
}

}  // namespace hookfuse::detail::numpy_impl
