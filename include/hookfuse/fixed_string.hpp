// hookfuse/fixed_string.hpp: compile-time strings used as template arguments (tensor and variable names).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

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

namespace detail {

/// A name as a type: its characters packed eight to a 64-bit word (the first character in the
/// lowest byte, the last word padded with zeros), the words as template arguments. Variable,
/// Placeholder and Named are spelled with it (BasicVariable<packed_name_t<"dense/kernel">, ...>)
/// rather than with the fixed_string itself, because of how compilers name instantiations: GCC
/// writes a fixed_string argument character by character ("Lc100ELc101E..."), and every function
/// whose symbol spells a model spells each of its names; with words, a 15-character name costs two
/// numbers instead of 16 literals. `value` gives the name back as a fixed_string.
template <std::uint64_t... Words>
struct packed_name {
  /// Character i (0 <= i < 8 * sizeof...(Words)), or '\0' in the padding.
  static constexpr char at(std::size_t i) {
    constexpr std::uint64_t words[sizeof...(Words) + 1] = {Words..., 0};  // + 1: no Words
    return static_cast<char>((words[i / 8] >> (8 * (i % 8))) & 0xffu);
  }
  static constexpr std::size_t length = [] {
    std::size_t n = 0;
    while (n < 8 * sizeof...(Words) && at(n) != '\0') ++n;
    return n;
  }();
  static constexpr fixed_string<length + 1> value = [] {
    fixed_string<length + 1> out;
    for (std::size_t i = 0; i < length; ++i) out.data[i] = at(i);
    return out;
  }();
};

/// Word `i` of `Name` packed as packed_name describes.
template <fixed_string Name>
constexpr std::uint64_t name_word(std::size_t i) {
  std::uint64_t word = 0;
  for (std::size_t k = 0; k < 8 && 8 * i + k < Name.size(); ++k)
    word |= std::uint64_t{static_cast<unsigned char>(Name.data[8 * i + k])} << (8 * k);
  return word;
}

template <fixed_string Name, class Words = std::make_index_sequence<(Name.size() + 7) / 8>>
struct pack_name;
template <fixed_string Name, std::size_t... I>
struct pack_name<Name, std::index_sequence<I...>> {
  static_assert(Name.view().find('\0') == std::string_view::npos,
                "hookfuse: a tensor or variable name cannot contain a '\\0' character");
  using type = packed_name<name_word<Name>(I)...>;
};

/// The packed_name type of `Name`: packed_name_t<"dense/kernel">::value == "dense/kernel".
template <fixed_string Name>
using packed_name_t = typename pack_name<Name>::type;

}  // namespace detail

}  // namespace hookfuse
