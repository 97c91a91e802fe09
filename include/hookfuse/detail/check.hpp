// hookfuse/detail/check.hpp: the one error for a bad constructor argument or option (an
// optimizer's hyperparameter, a schedule's, a hook's): std::invalid_argument naming who, the
// field, what was expected and the value received.
#pragma once

#include <stdexcept>
#include <type_traits>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"

namespace hookfuse::detail {

/// Throws std::invalid_argument("<who>: <field> must be <expected>, got <value>") (in builds
/// without exceptions: error_handler with that text).
template <class V>
[[noreturn]] inline void fail_argument(const char* who, const char* field, const char* expected,
                                       V value) {
  ErrorMessage m;
  m << who << ": " << field << " must be " << expected << ", got ";
  if constexpr (std::is_floating_point_v<V>)
    m << value;
  else
    m << static_cast<long long>(value);
  fail<std::invalid_argument>(m.str());
}

/// fail_argument(...) unless `ok`.
template <class V>
inline void check_argument(bool ok, const char* who, const char* field, const char* expected,
                           V value) {
  if (!ok) fail_argument(who, field, expected, value);
}

}  // namespace hookfuse::detail
