// hookfuse/autodiff/tape.hpp: flattens an expression type into a compile-time tape.
//
// The tape lists every node once, children before parents (a post-order walk). Named nodes,
// Variables and Placeholders are identified by name, so a named node used twice is one entry;
// every other node is its own entry. Each entry records its children's positions, so the
// forward pass is a walk up the tape and the backward pass a walk down it.
#pragma once

#include <array>
#include <cstddef>
#include <tuple>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"

namespace hookfuse::detail {

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

template <class Op, class S, Dims D, bool RequiresGrad, std::size_t... Cs>
struct OpEntry {
  using op_type = Op;
  using scalar = S;
  static constexpr Dims dims = D;
  static constexpr bool requires_grad = RequiresGrad;
  static constexpr std::array<std::size_t, sizeof...(Cs)> children{Cs...};
  Op op;
};

template <class V>
struct VarEntry {
  using variable_type = V;
  using scalar = typename V::scalar;
  static constexpr Dims dims{V::rows_at_compile_time, V::cols_at_compile_time};
  static constexpr bool requires_grad = true;
  static constexpr std::array<std::size_t, 0> children{};
  V* var;
};

template <class P>
struct InputEntry {
  using placeholder_type = P;
  using scalar = typename P::scalar;
  static constexpr Dims dims{P::rows_at_compile_time, P::cols_at_compile_time};
  static constexpr bool requires_grad = false;
  static constexpr std::array<std::size_t, 0> children{};
  P placeholder;
};

template <fixed_string Name, std::size_t I>
struct NameEntry {
  static constexpr auto name = Name;
  static constexpr std::size_t index = I;
};

template <class... Ns>
struct NameList {};

template <fixed_string Name, class... Ns>
constexpr std::size_t find_name(NameList<Ns...>) {
  std::size_t found = npos;
  (void)((Ns::name == Name ? (found = Ns::index, true) : false) || ...);
  return found;
}

template <class Entries, class Names>
struct Tape {
  using entries_type = Entries;
  using names_type = Names;
  Entries entries;
};

template <class Entries, class... Ns, class E>
constexpr auto append(Tape<Entries, NameList<Ns...>> tape, E entry) {
  auto entries = std::tuple_cat(std::move(tape.entries), std::tuple<E>{std::move(entry)});
  return Tape<decltype(entries), NameList<Ns...>>{std::move(entries)};
}

template <fixed_string Name, std::size_t I, class Entries, class... Ns>
constexpr auto add_name(Tape<Entries, NameList<Ns...>> tape) {
  return Tape<Entries, NameList<Ns..., NameEntry<Name, I>>>{std::move(tape.entries)};
}

template <std::size_t I>
using index_c = std::integral_constant<std::size_t, I>;

template <class T>
inline constexpr std::size_t size_of_tape = std::tuple_size_v<typename T::entries_type>;

template <class T, class E>
constexpr auto flatten(T tape, const E& e);

template <std::size_t K, class T, class Children, std::size_t... Done>
constexpr auto flatten_children(T tape, const Children& children, std::index_sequence<Done...>) {
  if constexpr (K == std::tuple_size_v<Children>) {
    return std::pair{std::move(tape), std::index_sequence<Done...>{}};
  } else {
    auto [next, idx] = flatten(std::move(tape), std::get<K>(children));
    return flatten_children<K + 1>(std::move(next), children,
                                   std::index_sequence<Done..., decltype(idx)::value>{});
  }
}

template <class Op, class S, Dims D, bool RG, class T, std::size_t... Cs>
constexpr auto append_op(T tape, const Op& op, std::index_sequence<Cs...>) {
  return append(std::move(tape), OpEntry<Op, S, D, RG, Cs...>{op});
}

/// Adds `e` and everything below it to the tape; returns the new tape and e's position.
template <class T, class E>
constexpr auto flatten(T tape, const E& e) {
  using Names = typename T::names_type;
  constexpr std::size_t n = size_of_tape<T>;
  if constexpr (requires { typename E::variable_type; }) {
    constexpr std::size_t found = find_name<E::name>(Names{});
    if constexpr (found != npos) {
      return std::pair{std::move(tape), index_c<found>{}};
    } else {
      auto t2 = append(std::move(tape), VarEntry<typename E::variable_type>{e.var});
      return std::pair{add_name<E::name, n>(std::move(t2)), index_c<n>{}};
    }
  } else if constexpr (requires { typename E::placeholder_type; }) {
    constexpr std::size_t found = find_name<E::name>(Names{});
    if constexpr (found != npos) {
      return std::pair{std::move(tape), index_c<found>{}};
    } else {
      auto t2 = append(std::move(tape), InputEntry<typename E::placeholder_type>{e.placeholder});
      return std::pair{add_name<E::name, n>(std::move(t2)), index_c<n>{}};
    }
  } else if constexpr (requires { typename E::op_type; }) {
    auto [t2, idx] = flatten_children<0>(std::move(tape), e.children, std::index_sequence<>{});
    constexpr std::size_t m = size_of_tape<decltype(t2)>;
    auto t3 = append_op<typename E::op_type, typename E::scalar, E::dims, E::requires_grad>(
        std::move(t2), e.op, idx);
    return std::pair{std::move(t3), index_c<m>{}};
  } else {
    // Named<Name, X>: the name refers to X's entry.
    constexpr std::size_t found = find_name<E::name>(Names{});
    if constexpr (found != npos) {
      return std::pair{std::move(tape), index_c<found>{}};
    } else {
      auto [t2, idx] = flatten(std::move(tape), e.expr);
      return std::pair{add_name<E::name, decltype(idx)::value>(std::move(t2)), idx};
    }
  }
}

/// True when entry `To` is `From` or lies below it.
template <class Entries, std::size_t From, std::size_t To>
constexpr bool reaches() {
  if constexpr (From == To) {
    return true;
  } else if constexpr (From < To) {  // children always precede their parents
    return false;
  } else {
    constexpr auto cs = std::tuple_element_t<From, Entries>::children;
    return []<std::size_t... K>(std::index_sequence<K...>) {
      return (reaches<Entries, cs[K], To>() || ... || false);
    }(std::make_index_sequence<cs.size()>{});
  }
}

}  // namespace hookfuse::detail
