// hookfuse/detail/python_float.hpp: a double as Python's repr() / str() writes it (what
// Python's csv module and Keras' CSVLogger write for a float, and Keras' callbacks print).
//
// Python 3 prints the shortest decimal string that reads back as the same double (David Gay's
// "mode 0", PEP 3101's 'r' format); std::to_chars without a precision computes exactly those
// digits. Only the layout differs: Python uses positional notation while the decimal exponent
// of the first digit is in [-4, 16) and always shows a fractional part ("1.0", "100.0",
// "0.0001"), otherwise scientific notation with a signed exponent of at least two digits
// ("1e-05", "1e+16", "1.2345678901234568e+17"). to_chars picks whichever is shorter, so
// "1" and "1e-04" for the first two: the digits are taken from to_chars' scientific form and
// laid out here the Python way. NaN is "nan" and the infinities "inf", "-inf", as float.__repr__.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <string_view>
#include <system_error>

#include "hookfuse/detail/format.hpp"

namespace hookfuse::detail {

/// Characters append_python_float needs at most ("-1.2345678901234567e-308" and a NUL).
inline constexpr std::size_t python_float_capacity = 32;

/// Appends repr(v) of a NaN or an infinity ("nan" whatever the NaN's sign bit, "inf", "-inf")
/// and returns true; appends nothing and returns false for a finite v. It needs no
/// std::to_chars, so HOOKFUSE_EMBEDDED builds use it too.
inline bool append_python_non_finite(char*& out, char* end, double v) {
  if (std::isnan(v)) append_text(out, end, "nan");
  else if (std::isinf(v)) append_text(out, end, v < 0 ? "-inf" : "inf");
  else return false;
  return true;
}

/// Appends repr(v) of a Python float (see the file comment) to [out, end), truncating like
/// append_text.
inline void append_python_float(char*& out, char* end, double v) {
  if (append_python_non_finite(out, end, v)) return;
  if (std::signbit(v)) {
    append_text(out, end, "-");
    v = -v;
  }
  // "d[.ddd]e[+-]xx": the shortest round-trip digits and the exponent of the first one.
  char sci[python_float_capacity];
  const auto result = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);
  if (result.ec != std::errc{}) return append_text(out, end, "?");  // cannot happen: 32 chars
  const std::string_view text(sci, static_cast<std::size_t>(result.ptr - sci));
  const std::size_t e_at = text.find('e');
  char digits[20];
  std::size_t ndigits = 0;
  for (char c : text.substr(0, e_at))
    if (c != '.' && ndigits < sizeof digits) digits[ndigits++] = c;
  int exponent = 0;
  (void)std::from_chars(text.data() + e_at + (text[e_at + 1] == '+' ? 2 : 1),
                        text.data() + text.size(), exponent);
  const std::string_view all(digits, ndigits);
  const int decpt = exponent + 1;  // digits are 0.d1d2... x 10^decpt
  if (decpt <= -4 || decpt > 16) {
    append_text(out, end, all.substr(0, 1));
    if (ndigits > 1) {
      append_text(out, end, ".");
      append_text(out, end, all.substr(1));
    }
    append_text(out, end, exponent < 0 ? "e-" : "e+");
    const int magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude < 10) append_text(out, end, "0");
    append_int(out, end, magnitude);
  } else if (decpt <= 0) {
    append_text(out, end, "0.");
    for (int i = 0; i < -decpt; ++i) append_text(out, end, "0");
    append_text(out, end, all);
  } else if (static_cast<std::size_t>(decpt) >= ndigits) {
    append_text(out, end, all);
    for (std::size_t i = ndigits; i < static_cast<std::size_t>(decpt); ++i)
      append_text(out, end, "0");
    append_text(out, end, ".0");
  } else {
    const auto point = static_cast<std::size_t>(decpt);
    append_text(out, end, all.substr(0, point));
    append_text(out, end, ".");
    append_text(out, end, all.substr(point));
  }
}

}  // namespace hookfuse::detail
