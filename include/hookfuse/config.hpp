// hookfuse/config.hpp: build-mode switches and the error-handler policy.
//
// Hosted builds (the default) report errors by throwing the exception type named at the call
// site. Define HOOKFUSE_NO_EXCEPTIONS (or build with -fno-exceptions) to route every error through
// `hookfuse::error_handler`, a user-supplied [[noreturn]] function.
#pragma once

#include <string_view>
#include <utility>

#if !defined(HOOKFUSE_NO_EXCEPTIONS) && !defined(__cpp_exceptions)
#define HOOKFUSE_NO_EXCEPTIONS 1
#endif

namespace hookfuse {

#ifdef HOOKFUSE_NO_EXCEPTIONS
/// Called for every error in a build without exceptions. The user defines it (for example to
/// print over a UART and halt). It must not return.
[[noreturn]] void error_handler(std::string_view what);
#endif

namespace detail {

/// Reports an error: throws `Error(message)` in hosted builds, calls `error_handler` otherwise.
template <class Error, class Message>
[[noreturn]] inline void fail(Message&& message) {
#ifdef HOOKFUSE_NO_EXCEPTIONS
  ::hookfuse::error_handler(std::string_view(message));
#else
  throw Error(std::forward<Message>(message));
#endif
}

}  // namespace detail
}  // namespace hookfuse
