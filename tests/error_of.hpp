// tests/error_of.hpp: the message of the exception a callable throws, for tests that check
// error texts.
#pragma once

#include <catch2/catch.hpp>
#include <string>

namespace hookfuse_test {

/// The message of the `E` thrown by f, failing the test when none is thrown.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("expected an exception");
  return {};
}

}  // namespace hookfuse_test
