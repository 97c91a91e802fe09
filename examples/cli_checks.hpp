// examples/cli_checks.hpp: the command-line checks every example shares (CLI11): integer and
// floating-point ranges with readable bounds, NaN and infinities refused, and parse errors as one
// line on stderr with exit status 2.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>

namespace example_cli {

/// An integer flag's check: a decimal integer in [lo, hi]. Otherwise its message (CLI11 prefixes
/// the flag) is "<value> not in [lo, hi]", or "<value> is not an integer, expected one in
/// [lo, hi]". The value is rewritten in plain decimal, so CLI11's own conversion (which reads
/// "010" as octal and saturates on overflow) reads the number checked here.
template <class T>
CLI::Validator integer_in(T lo, T hi) {
  const std::string bound = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, bound](std::string& s) -> std::string {
        const char* first = s.data();
        const char* last = s.data() + s.size();
        if (first != last && *first == '+') ++first;
        T v{};
        const auto [end, ec] = std::from_chars(first, last, v);
        const bool whole = end == last && first != last;
        const bool negative_unsigned = std::is_unsigned_v<T> && s.size() > 1 && s[0] == '-' &&
                                       s.find_first_not_of("0123456789", 1) == std::string::npos;
        if ((whole && ec == std::errc::result_out_of_range) || negative_unsigned ||
            (whole && ec == std::errc{} && (v < lo || v > hi))) {
          return s + " not in " + bound;
        }
        if (!whole || ec != std::errc{}) {
          return (s.empty() ? "\"\"" : s) + " is not an integer, expected one in " + bound;
        }
        s = std::to_string(v);
        return std::string();
      },
      bound);
}

/// A floating-point flag's check: a finite number in (lo, hi]. Otherwise its message is
/// "<value> is not a finite number, expected one in (lo, hi]" (NaN, inf, -inf, 1e999, text) or
/// "<value> not in (lo, hi]". (CLI::Range lets NaN through: every comparison with NaN is false.)
inline CLI::Validator finite_in(double lo, double hi) {
  const std::string bound =
      "(" + CLI::detail::to_string(lo) + ", " + CLI::detail::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, bound](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) {
          return (s.empty() ? "\"\"" : s) + " is not a finite number, expected one in " + bound;
        }
        if (!(v > lo && v <= hi)) return s + " not in " + bound;
        return std::string();
      },
      bound);
}

/// A path flag's check: not empty.
inline CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& s) { return s.empty() ? std::string("empty path") : std::string(); }, "PATH");
}

/// Parses the command line: nothing when the program goes on; otherwise the exit status, after
/// --help's text (0) or one line "<program>: <error>" on stderr (2).
inline std::optional<int> parse(CLI::App& app, int argc, char** argv, const char* program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  }
  return std::nullopt;
}

}  // namespace example_cli
