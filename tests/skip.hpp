// tests/skip.hpp: a test that cannot run (a fixture or tool is absent) reports itself as skipped.
//
//   HOOKFUSE_SKIP("fixtures dir " << dir << " not found");   // a string or a << chain
//
// prints "SKIPPED: <test name>: <reason>" and ends the process with exit code 77, which
// tests/CMakeLists.txt declares as ctest's SKIP_RETURN_CODE: ctest runs every discovered
// Catch2 case as its own process, so the case shows as "Skipped" in ctest's summary, never as
// passed. Catch2 v2 has no skip of its own. Running a test binary by hand, the first skipped
// case ends the run with code 77 (run the others by name, or through ctest).
#pragma once

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace hookfuse_test {

/// ctest's SKIP_RETURN_CODE for every unit test (tests/CMakeLists.txt).
inline constexpr int kSkipReturnCode = 77;

/// Prints "SKIPPED: <current test>: <reason>" and exits with kSkipReturnCode.
[[noreturn]] inline void skip_current_test(const std::string& reason) {
  std::fflush(stderr);
  std::printf("SKIPPED: %s: %s\n", Catch::getResultCapture().getCurrentTestName().c_str(),
              reason.c_str());
  std::fflush(stdout);
  std::exit(kSkipReturnCode);
}

}  // namespace hookfuse_test

/// Reports the current test as skipped (exit code 77) with `reason`, a string or a << chain.
#define HOOKFUSE_SKIP(reason)                                        \
  do {                                                               \
    std::ostringstream hookfuse_skip_reason_;                        \
    hookfuse_skip_reason_ << reason;                                 \
    ::hookfuse_test::skip_current_test(hookfuse_skip_reason_.str()); \
  } while (false)
