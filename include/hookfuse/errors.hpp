// hookfuse/errors.hpp: the exception types of the core that mirror TensorFlow's errors
// (RuntimeError, ValueError). Hosted builds throw them through detail::fail; builds without
// exceptions pass their messages to hookfuse::error_handler (hookfuse/config.hpp).
#pragma once

#include <stdexcept>

namespace hookfuse {

/// A session used against its protocol, as Python's RuntimeError raised by TensorFlow's
/// MonitoredSession: run() after should_stop() became true or after close() ("Run called even
/// after should_stop requested.").
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A model that cannot be built as given, as the ValueError TensorFlow raises for two
/// variables of one name ("Variable w already exists, disallowed."). The message names the
/// tensor at fault.
class ValueError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace hookfuse
