// hookfuse/detail/format.hpp: text formatting for error messages and log lines that works
// without a heap.
//
// Hosted builds format numbers with std::snprintf (exactly printf's %g / %.3f) and build error
// messages as std::string, as they always did. In an embedded build (HOOKFUSE_EMBEDDED, see
// hookfuse/config.hpp) the C library's printf family is avoided altogether: newlib's floating
// point printf allocates (its dtoa uses Balloc -> malloc) and is 20 KB of flash. The embedded
// formatters below (namespace intfmt) write into caller-provided buffers and work on a float's
// or double's bits in integer arithmetic, so that printing a number brings in neither software
// double arithmetic nor 64-bit division; their output is printf's %g / %.Nf of the same value
// (tests/test_intfmt.cpp compares them on 400,000 bit patterns).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

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

namespace intfmt {
// Number formatting in integer arithmetic only: what an embedded build prints with, for float
// and double alike, so that printing a number pulls in neither the C library's printf nor
// software double arithmetic (libgcc's __adddf3 ... and newlib's log10, floor, rint) nor 64-bit
// division (__aeabi_uldivmod, __udivdi3). Defined in every build (a host test compares it with
// printf); hosted builds print with printf itself.

/// u / 10, with u % 10 in `rem`, in 32-bit divisions, 16 bits at a time.
inline std::uint64_t div10_by_halfwords(std::uint64_t u, unsigned& rem) {
  std::uint64_t q = 0;
  std::uint32_t r = 0;
  for (int shift = 48; shift >= 0; shift -= 16) {
    const std::uint32_t cur = (r << 16) | static_cast<std::uint32_t>((u >> shift) & 0xffffu);
    q |= static_cast<std::uint64_t>(cur / 10) << shift;
    r = cur % 10;
  }
  rem = r;
  return q;
}

/// u / 10, with u % 10 in `rem`: div10_by_halfwords on 32-bit targets.
inline std::uint64_t div10(std::uint64_t u, unsigned& rem) {
  if constexpr (sizeof(void*) >= 8) {
    rem = static_cast<unsigned>(u % 10);
    return u / 10;
  } else {
    return div10_by_halfwords(u, rem);
  }
}

/// Appends `u` in decimal with at least `width` digits (zero-padded), a '.' before the last
/// `point` digits when point > 0.
inline void append_uint(char*& out, char* end, std::uint64_t u, int width, int point = 0) {
  char text[24];
  int n = 0;
  do {
    unsigned digit = 0;
    u = div10(u, digit);
    text[23 - n++] = static_cast<char>('0' + digit);
  } while (u != 0 || n < width);
  if (point > 0) {
    append_text(out, end, std::string_view(&text[24 - n], static_cast<std::size_t>(n - point)));
    append_text(out, end, ".");
  }
  const int tail = point > 0 ? point : n;
  append_text(out, end, std::string_view(&text[24 - tail], static_cast<std::size_t>(tail)));
}

/// A finite IEEE value's magnitude as m * 2^e (m < 2^53; m == 0 for zero), its sign, and
/// whether it is a NaN or an infinity, read from its bits.
struct Binary {
  std::uint64_t m = 0;
  int e = 0;
  bool negative = false, nan = false, inf = false;
};
template <class T>
inline Binary decompose(T v) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  constexpr int mant_bits = std::is_same_v<T, float> ? 23 : 52;
  constexpr int exp_bits = std::is_same_v<T, float> ? 8 : 11;
  constexpr int bias = (1 << (exp_bits - 1)) - 1 + mant_bits;
  using U = std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>;
  const U bits = std::bit_cast<U>(v);
  const U frac = bits & ((U{1} << mant_bits) - 1);
  const int biased = static_cast<int>((bits >> mant_bits) & ((U{1} << exp_bits) - 1));
  Binary b;
  b.negative = (bits >> (mant_bits + exp_bits)) != 0;
  if (biased == (1 << exp_bits) - 1) {
    (frac != 0 ? b.nan : b.inf) = true;
    return b;
  }
  b.m = biased == 0 ? frac : frac | (U{1} << mant_bits);
  b.e = (biased == 0 ? 1 : biased) - bias;
  return b;
}

/// v truncated toward zero to an int64 (clamped to the int64 range; 0 for NaN), from its bits:
/// libgcc's float-to-int64 conversion goes through software double arithmetic on 32-bit targets.
template <class T>
inline std::int64_t truncate_to_int64(T v) {
  const Binary b = decompose(v);
  if (b.nan) return 0;
  // |v| >= 2^63 clamps: to INT64_MIN (-2^63, exact in float and double) or INT64_MAX.
  if (b.inf || b.e + static_cast<int>(std::bit_width(b.m)) > 63)
    return b.negative ? INT64_MIN : INT64_MAX;
  const std::uint64_t u = b.e >= 0 ? b.m << b.e : b.e > -64 ? b.m >> -b.e : 0;
  return b.negative ? -static_cast<std::int64_t>(u) : static_cast<std::int64_t>(u);
}

/// static_cast<T>(v), rounded to nearest. A float from an int64 goes through a 32-bit
/// conversion (a single instruction with an FPU): libgcc's int64-to-float on Arm sits with its
/// software float addition, 1.2 KB.
template <class T>
inline T from_int64(std::int64_t v) {
  if constexpr (std::is_same_v<T, float>) {
    const std::uint64_t mag = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    std::uint64_t u = mag;
    int shift = 0;
    while (u >> 31 != 0) {  // keep 31 bits, the ones shifted out as a sticky bit
      u = (u >> 1) | (u & 1);
      ++shift;
    }
    // 2^shift exactly, from its bits (shift <= 33).
    const float scale = std::bit_cast<float>(static_cast<std::uint32_t>(127 + shift) << 23);
    const float f = static_cast<float>(static_cast<std::uint32_t>(u)) * scale;
    return v < 0 ? -f : f;
  } else {
    return static_cast<T>(v);
  }
}

/// round(m * 2^e * 10^k), halves to even, as printf rounds the exact binary value; UINT64_MAX
/// when the result is 2^60 or more. The value is carried as x * 2^e with x in [2^60, 2^61),
/// truncated after each step by 10 with a sticky low bit, so that an exact half is seen as one
/// and an inexact value never is.
inline std::uint64_t scaled_round(std::uint64_t x, int e, int k) {
  constexpr std::uint64_t lo = std::uint64_t{1} << 60, hi = std::uint64_t{1} << 61;
  if (x == 0) return 0;
  while (x < lo) {
    x <<= 1;
    --e;
  }
  for (; k > 0; --k) {  // * 10: * 5, then * 2 in the exponent
    x *= 5;
    ++e;
    while (x >= hi) {
      x = (x >> 1) | (x & 1);
      ++e;
    }
  }
  for (; k < 0; ++k) {  // / 10: (x * 8) / 10, one more bit when that is below 2^60
    unsigned r = 0;
    std::uint64_t q = div10(x << 3, r);
    e -= 3;
    if (q < lo) {
      q = 2 * q + (2 * r) / 10;
      r = (2 * r) % 10;
      --e;
    }
    x = q | (r != 0 ? 1u : 0u);
  }
  if (e >= 0) return ~std::uint64_t{0};
  if (e <= -62) return 0;  // below 1/2
  const int s = -e;
  std::uint64_t units = x >> s;
  const std::uint64_t frac = x & ((std::uint64_t{1} << s) - 1), half = std::uint64_t{1} << (s - 1);
  if (frac > half || (frac == half && (units & 1) != 0)) ++units;
  return units >= lo ? ~std::uint64_t{0} : units;
}

/// Appends "nan", "-nan", "inf", "-inf" and returns true for those values; otherwise appends
/// "-" for a negative value and returns false.
inline bool sign_or_special(char*& out, char* end, const Binary& b) {
  if (b.negative) append_text(out, end, "-");
  if (b.nan) append_text(out, end, "nan");
  if (b.inf) append_text(out, end, "inf");
  return b.nan || b.inf;
}

/// printf's "%.<decimals>f" of the value `b` (decimals <= 9), in integer arithmetic. Values of
/// 2^60 / 10^decimals and more print as "9.99e+99".
inline void append_fixed(char*& out, char* end, const Binary& b, int decimals) {
  if (sign_or_special(out, end, b)) return;
  const std::uint64_t units = scaled_round(b.m, b.e, decimals);
  if (units == ~std::uint64_t{0}) return append_text(out, end, "9.99e+99");
  append_uint(out, end, units, decimals + 1, decimals);
}

/// printf's "%g" of the value `b`: 6 significant digits, trailing zeros removed, exponent form
/// below 1e-4 and from 1e6; in integer arithmetic. One function for float and double.
inline void append_g(char*& out, char* end, const Binary& b) {
  if (sign_or_special(out, end, b)) return;
  if (b.m == 0) return append_text(out, end, "0");
  // Six significant digits: mantissa in [100000, 999999] and its decimal exponent, starting
  // from floor(log2 v) * log10(2) (78913 / 2^18), which is off by at most one.
  int log2 = b.e;
  for (std::uint64_t m = b.m; m > 1; m >>= 1) ++log2;
  int exp10 = (log2 * 78913) >> 18;
  std::uint32_t mant = 0;
  for (;;) {
    const std::uint64_t u = scaled_round(b.m, b.e, 5 - exp10);
    if (u >= 1000000) {
      ++exp10;
    } else if (u < 100000) {
      --exp10;
    } else {
      mant = static_cast<std::uint32_t>(u);
      break;
    }
  }
  char digits[6];
  for (int i = 5; i >= 0; --i, mant /= 10) digits[i] = static_cast<char>('0' + mant % 10);
  int last = 5;  // last significant digit kept (trailing zeros removed)
  while (last > 0 && digits[last] == '0') --last;
  if (exp10 >= -4 && exp10 < 6) {
    if (exp10 >= 0) {
      append_text(out, end, std::string_view(digits, static_cast<std::size_t>(exp10 + 1)));
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
    append_uint(out, end, static_cast<std::uint64_t>(exp10 < 0 ? -exp10 : exp10), 2);
  }
}

/// printf's "%g" and "%.<decimals>f" of a float or double.
template <class T>
inline void append_g(char*& out, char* end, T v) {
  append_g(out, end, decompose(v));
}
template <class T>
inline void append_fixed(char*& out, char* end, T v, int decimals) {
  append_fixed(out, end, decompose(v), decimals);
}
}  // namespace intfmt

/// Appends a signed integer in decimal (printf %lld).
inline void append_int(char*& out, char* end, std::int64_t v) {
  // Negate in unsigned arithmetic: INT64_MIN has no positive counterpart.
  const std::uint64_t u =
      v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  if (v < 0) append_text(out, end, "-");
  intfmt::append_uint(out, end, u, 1);
}

#ifndef HOOKFUSE_EMBEDDED
/// Appends `v` as printf's "%.<decimals>f" (decimals <= 9).
inline void append_fixed(char*& out, char* end, double v, int decimals) {
  const int n = std::snprintf(out, static_cast<std::size_t>(end - out), "%.*f", decimals, v);
  if (n > 0) out += n < end - out ? n : end - out - 1;
}

/// Appends `v` as printf's "%g" (6 significant digits, trailing zeros removed, exponent form
/// below 1e-4 and from 1e6).
inline void append_g(char*& out, char* end, double v) {
  const int n = std::snprintf(out, static_cast<std::size_t>(end - out), "%g", v);
  if (n > 0) out += n < end - out ? n : end - out - 1;
}
#else
/// Appends `v` (float or double) as printf's "%.<decimals>f" (decimals <= 9), without printf
/// and without double arithmetic (intfmt::append_fixed).
template <class T>
  requires std::is_floating_point_v<T>
inline void append_fixed(char*& out, char* end, T v, int decimals) {
  intfmt::append_fixed(out, end, v, decimals);
}

/// Appends `v` (float or double) as printf's "%g", without printf and without double
/// arithmetic (intfmt::append_g).
template <class T>
  requires std::is_floating_point_v<T>
inline void append_g(char*& out, char* end, T v) {
  intfmt::append_g(out, end, v);
}
#endif

#ifdef HOOKFUSE_STRIP_ERROR_STRINGS
/// An error message under HOOKFUSE_STRIP_ERROR_STRINGS: keeps nothing (every piece is dropped,
/// so neither the text nor the formatting reaches the binary); `str()` is kStrippedErrorText.
class ErrorMessage {
 public:
  template <class T>
  ErrorMessage& operator<<(const T&) {
    return *this;
  }
  std::string_view str() const { return kStrippedErrorText; }
};
#else
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
  /// A float or double as printf's "%g" (nan, inf, -inf spelled out); embedded builds format
  /// it in integer arithmetic, whatever its type.
  template <class T>
    requires std::is_floating_point_v<T>
  ErrorMessage& operator<<(T v) {
    char text[32];
    char* out = text;
#ifdef HOOKFUSE_EMBEDDED
    intfmt::append_g(out, text + sizeof text, v);
#else
    append_g(out, text + sizeof text, static_cast<double>(v));
#endif
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

#endif

}  // namespace hookfuse::detail
