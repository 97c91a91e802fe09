// hookfuse/detail/flat_tuple.hpp: a tuple whose element I is one base class away (indexed
// inheritance), for a bound graph's per-entry storage: its tape entries, slots and kernels.
//
// Why not std::tuple: libstdc++'s std::get<I> converts the tuple to its I-th _Tuple_impl base,
// I levels of derivation deep, and GCC's -Wsequence-point check (part of -Wall) walks that chain
// of conversions, so reading every element of an N-element std::tuple costs it time growing
// about 30-fold when N doubles: 0.5 s for 75 elements, 15.6 s for 150 with GCC 12 (against 0.1 s
// in all here). A model of L dense layers has 5L + 3 entries (bench/README.md, "Growth with
// hooks and layers"). Here get<I> is one derived-to-base conversion.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/config.hpp"

namespace hookfuse::detail {

template <std::size_t I, class T>
struct FlatLeaf {
  [[no_unique_address]] T value;  // an empty element (NoKernel, ...) takes no room, as in std::tuple
};

template <class Seq, class... Ts>
struct FlatTupleImpl;
/// An aggregate: FlatTupleImpl<std::index_sequence<0, 1>, A, B>{FlatLeaf<0, A>{a},
/// FlatLeaf<1, B>{b}} constructs each element in place from its initializer.
template <std::size_t... I, class... Ts>
struct FlatTupleImpl<std::index_sequence<I...>, Ts...> : FlatLeaf<I, Ts>... {};

template <class... Ts>
using FlatTuple = FlatTupleImpl<std::index_sequence_for<Ts...>, Ts...>;

/// Element I (found by deduction against the one base FlatLeaf<I, T>).
template <std::size_t I, class T>
HOOKFUSE_PER_ENTRY_INLINE constexpr T& get(FlatLeaf<I, T>& leaf) noexcept {
  return leaf.value;
}
template <std::size_t I, class T>
HOOKFUSE_PER_ENTRY_INLINE constexpr const T& get(const FlatLeaf<I, T>& leaf) noexcept {
  return leaf.value;
}

/// f(element 0, element 1, ...), as std::apply.
/// The type of leaf I, found as get<I> finds the leaf (deduction against the bases); never
/// called. std::tuple<Ts...>'s tuple_element walks the pack one type at a time (GCC 12's
/// libstdc++), which made a lookup per tape entry grow with the square of the tape.
template <std::size_t I, class T>
std::type_identity<T> flat_leaf_type(const FlatLeaf<I, T>&);

template <class F, std::size_t... I, class... Ts>
constexpr decltype(auto) flat_apply(F&& f, FlatTupleImpl<std::index_sequence<I...>, Ts...>& t) {
  return std::forward<F>(f)(static_cast<FlatLeaf<I, Ts>&>(t).value...);
}

/// A FlatTuple of the values `es`, moved in.
template <std::size_t... I, class... Es>
constexpr auto make_flat_tuple(std::index_sequence<I...>, Es&&... es) {
  return FlatTupleImpl<std::index_sequence<I...>, std::remove_cvref_t<Es>...>{
      FlatLeaf<I, std::remove_cvref_t<Es>>{std::forward<Es>(es)}...};
}

}  // namespace hookfuse::detail

// Tuple-like for std::tuple_size_v and std::tuple_element_t (the element types only).
template <class Seq, class... Ts>
struct std::tuple_size<hookfuse::detail::FlatTupleImpl<Seq, Ts...>>
    : std::integral_constant<std::size_t, sizeof...(Ts)> {};
template <std::size_t I, class Seq, class... Ts>
struct std::tuple_element<I, hookfuse::detail::FlatTupleImpl<Seq, Ts...>> {
  using type = typename decltype(hookfuse::detail::flat_leaf_type<I>(
      std::declval<const hookfuse::detail::FlatTupleImpl<Seq, Ts...>&>()))::type;
};
