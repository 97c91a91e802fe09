// tests/capturing_logger.hpp: a Logger (hookfuse/logging.hpp) that records every line a hook
// logs, with its severity, into a vector the test owns and reads afterwards.
#pragma once

#include <hookfuse/logging.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace hookfuse_test {

struct Line {
  hookfuse::Severity severity;
  std::string text;
};
using Lines = std::vector<Line>;

/// Copyable, as hooks take their logger by value; every copy appends to `*lines`.
struct CapturingLogger {
  Lines* lines;
  void log(hookfuse::Severity s, std::string_view text) const {
    lines->push_back({s, std::string(text)});
  }
};

}  // namespace hookfuse_test
