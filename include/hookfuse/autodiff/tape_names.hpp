// hookfuse/autodiff/tape_names.hpp: the names on a tape (Variables, Placeholders, named
// tensors), each with its entry's position: lookups by name at compile time, and the compile
// error for one name carried by two tensors of different types.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>

#include "hookfuse/fixed_string.hpp"

namespace hookfuse::detail {

/// The position of no entry (a name not on the tape).
inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

/// A name on the tape: the entry it refers to (position I) and the expression type that first
/// carried it (VarRef<V>, Input<P> or Named<Name, X>).
template <fixed_string Name, std::size_t I, class E>
struct NameEntry {
  static constexpr auto name = Name;
  static constexpr std::size_t index = I;
  using expr_type = E;
};

template <class... Ns>
struct NameList {};
template <class List>
inline constexpr std::size_t name_count = 0;
template <class... Ns>
inline constexpr std::size_t name_count<NameList<Ns...>> = sizeof...(Ns);

/// The name list of a bound tape: each name and its position, without the expression type
/// (void). The types are only needed while flattening (check_unique_name); kept on the bound
/// tape, they would spell the whole model once per named tensor in the type of the Graph, and
/// so in the symbol of every one of its member functions, which made the compiler's work grow
/// with the square of the model's size.
template <class List>
struct bound_names;
template <class... Ns>
struct bound_names<NameList<Ns...>> {
  using type = NameList<NameEntry<Ns::name, Ns::index, void>...>;
};

/// name_index<Name, List>::value: the position of the entry `Name` refers to, npos when the name
/// is not on the list (names are unique on a list, so the sum has at most one term). A class,
/// not a constexpr function: the compiler gives every function it calls, even only to evaluate a
/// constant, a symbol, and this one's would spell the list (the types of the named expressions so
/// far); naming them all grows faster than the square of the model's depth.
template <fixed_string Name, class List>
struct name_index;
template <fixed_string Name, class... Ns>
struct name_index<Name, NameList<Ns...>>
    : std::integral_constant<std::size_t,
                             ((Ns::name == Name ? Ns::index + 1 : std::size_t{0}) + ... +
                              std::size_t{0}) - 1> {};
static_assert(npos == std::size_t{0} - 1);

/// The expression type that first carried `Name` (the name must be on the list).
template <fixed_string Name, class List>
struct named_type;
template <fixed_string Name, class... Ns>
struct named_type<Name, NameList<Ns...>> {
  static constexpr std::size_t position = [] {
    std::size_t i = 0, found = sizeof...(Ns);
    (void)((Ns::name == Name ? (found = i, true) : (++i, false)) || ...);
    return found;
  }();
  using type = typename std::tuple_element_t<position, std::tuple<Ns...>>::expr_type;
};

/// One name, one tensor: fails to compile, naming the name (`Name = ...` in the instantiation
/// context) and both types, when a name comes back on a tensor of another type.
template <fixed_string Name, class First, class Second>
constexpr bool check_unique_name() {
  static_assert(std::is_same_v<First, Second>,
                "hookfuse: two different tensors in one model have the same name (the name is "
                "'Name' in the instantiation above, First and Second are their types), like "
                "TensorFlow's \"Variable ... already exists, disallowed.\": give each "
                "Variable, Placeholder and named tensor its own name");
  return std::is_same_v<First, Second>;
}

}  // namespace hookfuse::detail
