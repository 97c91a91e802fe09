// hookfuse/detail/type_name.hpp: the name of a type as the compiler spells it, at compile time
// (for log lines and trace event names).
#pragma once

#include <cstddef>
#include <string_view>

namespace hookfuse::detail {

/// The name of T as GCC and Clang write it in __PRETTY_FUNCTION__ ("MyListener",
/// "hookfuse::StopAtStepHook"); `fallback` with other compilers.
template <class T>
constexpr std::string_view type_name(std::string_view fallback = "listener") {
#if defined(__GNUC__) || defined(__clang__)
  (void)fallback;
  constexpr std::string_view f = __PRETTY_FUNCTION__;
  constexpr std::size_t start = f.find("T = ");
  if constexpr (start == std::string_view::npos) {
    return fallback;
  } else {
    constexpr std::string_view rest = f.substr(start + 4);
    constexpr std::size_t stop = rest.find_first_of(";]");
    return rest.substr(0, stop);
  }
#else
  return fallback;
#endif
}

}  // namespace hookfuse::detail
