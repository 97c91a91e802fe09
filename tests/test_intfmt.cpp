// The embedded build's number formatting (hookfuse/detail/format.hpp, detail::intfmt: %g and
// %.Nf from a value's bits in integer arithmetic) checked against the host C library's printf
// of the same float or double, which is the reference the log lines must match.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <hookfuse/detail/format.hpp>
#include <limits>
#include <string>

namespace intfmt = hookfuse::detail::intfmt;

namespace {

template <class T>
std::string g_of(T v) {
  char buf[64];
  char* out = buf;
  intfmt::append_g(out, buf + sizeof buf, v);
  return std::string(buf, static_cast<std::size_t>(out - buf));
}

template <class T>
std::string fixed_of(T v, int decimals) {
  char buf[64];
  char* out = buf;
  intfmt::append_fixed(out, buf + sizeof buf, v, decimals);
  return std::string(buf, static_cast<std::size_t>(out - buf));
}

std::string printf_g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string printf_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A 64-bit LCG (Knuth's MMIX constants): deterministic bit patterns.
struct Bits {
  std::uint64_t state;
  std::uint64_t next() {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return state;
  }
};

float float_from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

double double_from_bits(std::uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

}  // namespace

TEST_CASE("intfmt append_g of float matches printf %g for the mcu_train log values", "[intfmt]") {
  // The losses mcu_train logs (float32), and the values of docs/embedded.md's output.
  for (float v : {1.3701563f, 0.074420765f, 0.015089091f, 0.0047891205f, 0.017174147f,
                  0.0048846556f, 0.0017210087f, 1.0f, 0.0f})
    CHECK(g_of(v) == printf_g(static_cast<double>(v)));
  CHECK(g_of(0.074420765f) == "0.0744208");
  CHECK(g_of(1.0f) == "1");
}

TEST_CASE("intfmt append_g of float matches printf %g at the edges", "[intfmt]") {
  const float edges[] = {-0.0f, 1e-4f, 9.99999e-5f, 1e-5f, 123456.0f, 999999.0f, 999999.5f,
                         1e6f, 1234565.0f, 1234575.0f, 0.5f, 100000.5f, 3.0e38f,
                         std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                         std::numeric_limits<float>::denorm_min(), -2.5f, 65504.0f};
  for (float v : edges) {
    INFO("value " << printf_g(static_cast<double>(v)));
    CHECK(g_of(v) == printf_g(static_cast<double>(v)));
  }
  CHECK(g_of(std::numeric_limits<float>::infinity()) == "inf");
  CHECK(g_of(-std::numeric_limits<float>::infinity()) == "-inf");
  CHECK(g_of(std::numeric_limits<float>::quiet_NaN()) == "nan");
  CHECK(g_of(-std::numeric_limits<float>::quiet_NaN()) == "-nan");
  // Exact ties round half to even, as printf rounds the exact binary value.
  CHECK(g_of(1234565.0f) == "1.23456e+06");
  CHECK(g_of(1234575.0f) == "1.23458e+06");
}

TEST_CASE("intfmt append_g of float matches printf %g for 300000 bit patterns", "[intfmt]") {
  Bits bits{20261206u};
  int mismatches = 0;
  for (int i = 0; i < 300000; ++i) {
    const float v = float_from_bits(static_cast<std::uint32_t>(bits.next() >> 32));
    if (std::isnan(v)) continue;
    if (g_of(v) != printf_g(static_cast<double>(v))) {
      if (++mismatches <= 5) FAIL_CHECK(printf_g(static_cast<double>(v)) << " printed as " << g_of(v));
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("intfmt append_g of double matches printf %g for 100000 bit patterns", "[intfmt]") {
  Bits bits{7u};
  int mismatches = 0;
  for (int i = 0; i < 100000; ++i) {
    const double v = double_from_bits(bits.next());
    if (std::isnan(v)) continue;
    if (g_of(v) != printf_g(v)) {
      char exact[64];
      std::snprintf(exact, sizeof exact, "%.17g", v);
      if (++mismatches <= 5) FAIL_CHECK(exact << " printed as " << g_of(v));
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("intfmt append_fixed matches printf %.Nf", "[intfmt]") {
  // Seconds as the hooks print them, and exact binary ties (half to even).
  CHECK(fixed_of(0.007f, 3) == printf_fixed(static_cast<double>(0.007f), 3));
  CHECK(fixed_of(0.0625f, 3) == "0.062");
  CHECK(fixed_of(0.1875f, 3) == "0.188");
  CHECK(fixed_of(2.5f, 0) == "2");
  CHECK(fixed_of(3.5f, 0) == "4");
  CHECK(fixed_of(-1.25, 1) == "-1.2");
  CHECK(fixed_of(0.0f, 3) == "0.000");
  CHECK(fixed_of(12345.678f, 9) == printf_fixed(static_cast<double>(12345.678f), 9));
  Bits bits{99u};
  int mismatches = 0;
  for (int i = 0; i < 100000; ++i) {
    // Uniform over [0, 2^20) seconds with 3 to 9 decimals.
    const float v = static_cast<float>(bits.next() >> 44) / 16.0f;
    const int decimals = 3 + i % 7;
    if (fixed_of(v, decimals) != printf_fixed(static_cast<double>(v), decimals)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("intfmt integer helpers match the host's 64-bit arithmetic", "[intfmt]") {
  Bits bits{3u};
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t u = bits.next() >> (i % 64);
    unsigned rem = 99;
    CHECK(intfmt::div10_by_halfwords(u, rem) == u / 10);
    CHECK(rem == u % 10);
    const auto s = static_cast<std::int64_t>(bits.next()) >> (i % 64);
    CHECK(intfmt::from_int64<float>(s) == static_cast<float>(s));
    const float f = static_cast<float>(s) / 3.0f;
    CHECK(intfmt::truncate_to_int64(f) == static_cast<std::int64_t>(f));
  }
  char buf[32];
  char* out = buf;
  hookfuse::detail::append_int(out, buf + sizeof buf, std::numeric_limits<std::int64_t>::min());
  CHECK(std::string(buf) == "-9223372036854775808");
  CHECK(intfmt::truncate_to_int64(1e30f) == std::numeric_limits<std::int64_t>::max());
  CHECK(intfmt::truncate_to_int64(-1e30f) == std::numeric_limits<std::int64_t>::min());
  CHECK(intfmt::truncate_to_int64(std::numeric_limits<float>::quiet_NaN()) == 0);
  CHECK(intfmt::truncate_to_int64(-2.9f) == -2);
}
