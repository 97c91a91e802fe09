// hookfuse/logging.hpp: the logger policy, with TensorFlow's severities (tf.compat.v1.logging).
#pragma once

#include <concepts>
#include <cstdio>
#include <string_view>

namespace hookfuse {

/// TensorFlow's log severities (tf_logging: DEBUG, INFO, WARN, ERROR, FATAL).
enum class Severity { debug, info, warning, error, fatal };

/// One-letter tag as in TensorFlow's C++ log prefix ("I", "W", "E", ...).
constexpr char severity_letter(Severity s) {
  switch (s) {
    case Severity::debug: return 'D';
    case Severity::info: return 'I';
    case Severity::warning: return 'W';
    case Severity::error: return 'E';
    case Severity::fatal: return 'F';
  }
  return '?';
}

/// The severity's name as TensorFlow's Python logging prints it ("INFO", "WARNING", ...).
constexpr const char* severity_name(Severity s) {
  switch (s) {
    case Severity::debug: return "DEBUG";
    case Severity::info: return "INFO";
    case Severity::warning: return "WARNING";
    case Severity::error: return "ERROR";
    case Severity::fatal: return "FATAL";
  }
  return "?";
}

/// A logger takes a severity and one line of text (without the trailing newline).
template <class L>
concept Logger = requires(L& logger, Severity s, std::string_view line) {
  { logger.log(s, line) };
};

/// Default logger: writes "INFO:tensorflow:"-style lines, as "INFO:hookfuse:<line>", to stderr.
struct StderrLogger {
  void log(Severity s, std::string_view line) const {
    std::fprintf(stderr, "%s:hookfuse:%.*s\n", severity_name(s),
                 static_cast<int>(line.size()), line.data());
  }
};

/// A logger that drops everything (benchmarks, silent runs).
struct NullLogger {
  void log(Severity, std::string_view) const {}
};

}  // namespace hookfuse
