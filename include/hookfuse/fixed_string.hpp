// hookfuse/fixed_string.hpp: compile-time strings used as template arguments (tensor and variable names).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace hookfuse {

/// A string literal usable as a non-type template argument: `Variable<"dense/kernel", ...>`.
/// Holds N characters including the terminating '\0'. Two names are the same tensor exactly
/// when their characters are equal.
template <std::size_t N>
struct fixed_string {
  char data[N]{};

  constexpr fixed_string() = default;
  constexpr fixed_string(const char (&s)[N]) { std::copy_n(s, N, data); }  // NOLINT: implicit by design

  static constexpr std::size_t size() { return N - 1; }
  constexpr std::string_view view() const { return {data, N - 1}; }
  constexpr operator std::string_view() const { return view(); }  // NOLINT

  template <std::size_t M>
  constexpr bool operator==(const fixed_string<M>& other) const {
    return view() == other.view();
  }
};

/// Concatenates two names: `concat(fixed_string("dense"), fixed_string("/kernel"))`.
template <std::size_t N, std::size_t M>
constexpr fixed_string<N + M - 1> concat(const fixed_string<N>& a, const fixed_string<M>& b) {
  fixed_string<N + M - 1> out;
  std::copy_n(a.data, N - 1, out.data);
  std::copy_n(b.data, M, out.data + N - 1);
  return out;
}

}  // namespace hookfuse
