// hookfuse/autodiff/tape.hpp: flattens an expression type into a compile-time tape.
//
// The tape lists every node once, children before parents (a post-order walk). Named nodes,
// Variables and Placeholders are identified by name, so a named node used twice is one entry;
// every other node is its own entry. Each entry records its children's positions, so the
// forward pass is a walk up the tape and the backward pass a walk down it.
//
// A name is one tensor (TensorFlow's "Variable w already exists, disallowed."): a name met a
// second time must name the same thing. Where the two expression types differ (two Variable
// types, a Variable and a Placeholder, two named expressions of different types) that is a
// compile error (check_unique_name); where they are the same type, bind_tape compares the two
// objects when the model is bound (same Variable object, same placeholder width, same op
// constants, recursively) and reports a difference as a ValueError naming the name.
#pragma once

#include <array>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/flat_tuple.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"

namespace hookfuse::detail {

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

template <class Op, class S, Dims D, bool RequiresGrad, std::size_t... Cs>
struct OpEntry {
  using op_type = Op;
  using scalar = S;
  static constexpr Dims dims = D;
  static constexpr bool requires_grad = RequiresGrad;
  static constexpr std::array<std::size_t, sizeof...(Cs)> children{Cs...};
  using payload_type = Op;  // what the entry is built from (bind_tape)
  Op op;
};

template <class V>
struct VarEntry {
  using variable_type = V;
  using scalar = typename V::scalar;
  static constexpr Dims dims{V::rows_at_compile_time, V::cols_at_compile_time};
  static constexpr bool requires_grad = true;
  static constexpr std::array<std::size_t, 0> children{};
  using payload_type = V*;
  V* var;
};

template <class P>
struct InputEntry {
  using placeholder_type = P;
  using scalar = typename P::scalar;
  static constexpr Dims dims{P::rows_at_compile_time, P::cols_at_compile_time};
  static constexpr bool requires_grad = false;
  static constexpr std::array<std::size_t, 0> children{};
  using payload_type = P;
  P placeholder;
};

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

template <fixed_string Name, class... Ns>
constexpr std::size_t find_name(NameList<Ns...>) {
  std::size_t found = npos;
  (void)((Ns::name == Name ? (found = Ns::index, true) : false) || ...);
  return found;
}

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

// While flatten walks the expression, the entries grow one at a time in a cons list (Cons<Prev,
// E>: one new aggregate per entry) instead of a std::tuple rebuilt by std::tuple_cat at every
// step, which instantiated a tuple of every length on the way and so grew quadratically with
// the number of entries. bind_tape turns the finished list's type into one FlatTuple.
struct EntryNil {
  static constexpr std::size_t size = 0;
};
template <class Prev, class E>
struct EntryCons {
  static constexpr std::size_t size = Prev::size + 1;
  Prev prev;
  E last;
};

/// Entry I of the finished tape (for a name met again: check_same_tensor).
template <std::size_t I, class Seq, class... Es>
HOOKFUSE_PER_ENTRY_INLINE constexpr const auto& get_entry(
    const FlatTupleImpl<Seq, Es...>& entries) {
  return get<I>(entries);
}

template <class Op>
bool same_op(const Op& a, const Op& b) {
  if constexpr (std::is_empty_v<Op>) {
    return true;
  } else if constexpr (std::equality_comparable<Op>) {
    return a == b;
  } else if constexpr (requires { a.f; }) {
    return same_op(a.f, b.f);  // UnaryOp<F>: the functor's constants
  } else {
    static_assert(std::is_trivially_copyable_v<Op>,
                  "hookfuse: an op with constants must be trivially copyable or comparable");
    return std::memcmp(&a, &b, sizeof(Op)) == 0;  // constants compared bit by bit
  }
}

/// True when the expression `e` is what the tape holds at position I: the same Variable
/// object, a placeholder of the same width, the same ops with the same constants. Only called
/// for an `e` of the type that first carried the name, so the tape has the same structure there.
template <std::size_t I, class Entries, class E>
HOOKFUSE_PER_ENTRY_INLINE inline bool same_tensor(const Entries& entries, const E& e) {
  const auto& entry = get_entry<I>(entries);
  if constexpr (requires { typename E::variable_type; }) {
    return entry.var == e.var;
  } else if constexpr (requires { typename E::placeholder_type; }) {
    return entry.placeholder.cols == e.placeholder.cols;
  } else if constexpr (requires { typename E::op_type; }) {
    using Entry = std::remove_cvref_t<decltype(entry)>;
    return same_op(entry.op, e.op) &&
           [&]<std::size_t... K>(std::index_sequence<K...>) HOOKFUSE_PER_ENTRY_INLINE {
             return (same_tensor<Entry::children[K]>(entries, get<K>(e.children)) && ... &&
                     true);
           }(std::make_index_sequence<Entry::children.size()>{});
  } else if constexpr (requires { typename E::summarized_type; }) {
    return same_tensor<I>(entries, e.tensor);  // a summary declaration: its tensor's entry
  } else {
    return same_tensor<I>(entries, e.expr);  // Named<N, X>: X's entry
  }
}

/// A name met again on an expression of the same type: reports a ValueError naming it when the
/// two are different objects.
template <std::size_t I, class Entries, class E>
void check_same_tensor(const Entries& entries, const E& e) {
  if (same_tensor<I>(entries, e)) return;
  ErrorMessage msg;
  if constexpr (requires { typename E::variable_type; })
    msg << "Variable " << E::name.view()
        << " already exists, disallowed: two different Variable objects are named '"
        << E::name.view() << "' in one model (use one object, or give the other its own name)";
  else if constexpr (requires { typename E::placeholder_type; })
    msg << "Placeholder " << E::name.view()
        << " already exists, disallowed: two placeholders of different widths are named '"
        << E::name.view() << "' in one model";
  else
    msg << "Tensor " << E::name.view()
        << " already exists, disallowed: two different tensors are named '" << E::name.view()
        << "' in one model (give each its own name)";
  fail<ValueError>(msg.str());
}

template <class Entries, class Names>
struct Tape {
  using entries_type = Entries;
  using names_type = Names;
  Entries entries;
};

template <class Entries, class... Ns, class E>
constexpr auto append(Tape<Entries, NameList<Ns...>> tape, E entry) {
  using List = EntryCons<Entries, E>;
  return Tape<List, NameList<Ns...>>{List{std::move(tape.entries), std::move(entry)}};
}

template <class... Es>
constexpr auto entries_to_tuple(EntryNil, Es&&... es) {
  return make_flat_tuple(std::index_sequence_for<Es...>{}, std::move(es)...);
}
template <class Prev, class E, class... Es>
constexpr auto entries_to_tuple(EntryCons<Prev, E>&& list, Es&&... es) {
  return entries_to_tuple(std::move(list.prev), std::move(list.last), std::move(es)...);
}

/// What flatten returns: the new tape and the position of the flattened expression on it (an
/// index_c), or for flatten_children the children's positions (an index_sequence). A plain
/// aggregate: std::pair's constrained constructors cost more to instantiate than the rest.
template <class T, class Index>
struct TapeAnd {
  T tape;
  Index index;
};

template <fixed_string Name, std::size_t I, class E, class Entries, class... Ns>
constexpr auto add_name(Tape<Entries, NameList<Ns...>> tape) {
  return Tape<Entries, NameList<Ns..., NameEntry<Name, I, E>>>{std::move(tape.entries)};
}

template <std::size_t I>
using index_c = std::integral_constant<std::size_t, I>;

template <class T>
inline constexpr std::size_t size_of_tape = T::entries_type::size;

template <class T, class E>
constexpr auto flatten(T tape, const E& e);

template <std::size_t K, class T, class Children, std::size_t... Done>
constexpr auto flatten_children(T tape, const Children& children, std::index_sequence<Done...>) {
  if constexpr (K == std::tuple_size_v<Children>) {
    return TapeAnd<T, std::index_sequence<Done...>>{std::move(tape), {}};
  } else {
    auto [next, idx] = flatten(std::move(tape), get<K>(children));
    return flatten_children<K + 1>(std::move(next), children,
                                   std::index_sequence<Done..., decltype(idx)::value>{});
  }
}

template <class Op, class S, Dims D, bool RG, class T, std::size_t... Cs>
constexpr auto append_op(T tape, const Op& op, std::index_sequence<Cs...>) {
  return append(std::move(tape), OpEntry<Op, S, D, RG, Cs...>{op});
}

/// The name of `e` (a Variable, Placeholder or Named) is already on the tape at `found`: fails to
/// compile when it came with another type (check_unique_name) and returns the tape as is
/// (bind_tape checks, once the entries exist, that it names the same object).
template <std::size_t Found, class T, class E>
constexpr auto reuse_name(T tape, const E&) {
  using First = typename named_type<E::name, typename T::names_type>::type;
  constexpr bool same_type = check_unique_name<E::name, First, E>();
  static_assert(same_type);
  return TapeAnd<T, index_c<Found>>{std::move(tape), {}};
}

/// Adds `e` and everything below it to the tape; returns the new tape and e's position. Only
/// evaluated for its type (flat_result): bind_tape writes the entries' values where they belong.
template <class T, class E>
constexpr auto flatten(T tape, const E& e) {
  using Names = typename T::names_type;
  constexpr std::size_t n = size_of_tape<T>;
  if constexpr (requires { typename E::summarized_type; }) {
    // A summary declaration (summary::scalar<"loss">(t), autodiff/summary.hpp) is its tensor.
    return flatten(std::move(tape), e.tensor);
  } else if constexpr (requires { typename E::op_type; }) {
    auto [t2, idx] = flatten_children<0>(std::move(tape), e.children, std::index_sequence<>{});
    constexpr std::size_t m = size_of_tape<decltype(t2)>;
    auto t3 = append_op<typename E::op_type, typename E::scalar, E::dims, E::requires_grad>(
        std::move(t2), e.op, idx);
    return TapeAnd<decltype(t3), index_c<m>>{std::move(t3), {}};
  } else if constexpr (constexpr std::size_t found = find_name<E::name>(Names{});
                       found != npos) {
    return reuse_name<found>(std::move(tape), e);
  } else if constexpr (requires { typename E::variable_type; }) {
    auto t2 = append(std::move(tape), VarEntry<typename E::variable_type>{e.var});
    auto t3 = add_name<E::name, n, E>(std::move(t2));
    return TapeAnd<decltype(t3), index_c<n>>{std::move(t3), {}};
  } else if constexpr (requires { typename E::placeholder_type; }) {
    auto t2 = append(std::move(tape), InputEntry<typename E::placeholder_type>{e.placeholder});
    auto t3 = add_name<E::name, n, E>(std::move(t2));
    return TapeAnd<decltype(t3), index_c<n>>{std::move(t3), {}};
  } else {
    // Named<Name, X>: the name refers to X's entry.
    auto [t2, idx] = flatten(std::move(tape), e.expr);
    auto t3 = add_name<E::name, decltype(idx)::value, E>(std::move(t2));
    return TapeAnd<decltype(t3), decltype(idx)>{std::move(t3), idx};
  }
}

/// The tape and position flatten(T, E) gives, as types: `tape_type` and `index` (constexpr).
template <class T, class E>
struct flat_result {
  using result = decltype(flatten(std::declval<T>(), std::declval<const E&>()));
  using tape_type = decltype(std::declval<result>().tape);
  static constexpr std::size_t index = decltype(std::declval<result>().index)::value;
};

/// The walk flatten makes, at run time and without the tape: T is the tape (type) before `e`.
/// At each new entry it calls visit.entry(index_c<I>, payload) with what entry I is built from
/// (the Variable pointer, the placeholder, the op); at each name met again,
/// visit.reused(index_c<I>, e). Each call passes references only, so the work is linear in the
/// number of nodes (flatten's by-value tape cost the optimiser time quadratic in it). The walk's
/// functions are force-inlined into bind: each is instantiated once per node with the tape so
/// far in its type, and emitted as functions (at -O0) their symbols would grow with the square
/// of the model's size.
template <class T, class E, class Visit>
HOOKFUSE_PER_ENTRY_INLINE constexpr void walk_tape(const E& e, Visit& visit);

template <std::size_t K, class T, class Children, class Visit>
HOOKFUSE_PER_ENTRY_INLINE constexpr void walk_children(const Children& children, Visit& visit) {
  if constexpr (K < std::tuple_size_v<Children>) {
    using Child = std::tuple_element_t<K, Children>;
    walk_tape<T>(get<K>(children), visit);
    walk_children<K + 1, typename flat_result<T, Child>::tape_type>(children, visit);
  }
}

template <class T, class E, class Visit>
HOOKFUSE_PER_ENTRY_INLINE constexpr void walk_tape(const E& e, Visit& visit) {
  if constexpr (requires { typename E::summarized_type; }) {
    walk_tape<T>(e.tensor, visit);
  } else if constexpr (requires { typename E::op_type; }) {
    walk_children<0, T>(e.children, visit);
    visit.entry(index_c<flat_result<T, E>::index>{}, e.op);
  } else if constexpr (constexpr std::size_t found = find_name<E::name>(typename T::names_type{});
                       found != npos) {
    visit.reused(index_c<found>{}, e);
  } else if constexpr (requires { typename E::variable_type; }) {
    visit.entry(index_c<size_of_tape<T>>{}, e.var);
  } else if constexpr (requires { typename E::placeholder_type; }) {
    visit.entry(index_c<size_of_tape<T>>{}, e.placeholder);
  } else {
    walk_tape<T>(e.expr, visit);  // Named<Name, X>
  }
}

/// walk_tape over several expressions in turn (a loss, then the fetches).
template <class T, class Visit>
constexpr void walk_all(Visit&) {}
template <class T, class Visit, class F, class... Rest>
HOOKFUSE_PER_ENTRY_INLINE constexpr void walk_all(Visit& visit, const F& f, const Rest&... rest) {
  walk_tape<T>(f, visit);
  walk_all<typename flat_result<T, F>::tape_type>(visit, rest...);
}

template <class T>
constexpr auto flatten_all_types(T tape) {
  return tape;
}
template <class T, class F, class... Rest>
constexpr auto flatten_all_types(T tape, const F& f, const Rest&... rest) {
  auto [next, idx] = flatten(std::move(tape), f);
  (void)idx;
  return flatten_all_types(std::move(next), rest...);
}

/// Visitor of bind_tape's first walk: the address of each entry's payload.
struct CollectPayloads {
  const void** payloads;
  template <std::size_t I, class P>
  HOOKFUSE_PER_ENTRY_INLINE constexpr void entry(index_c<I>, const P& payload) {
    payloads[I] = &payload;
  }
  template <std::size_t I, class E>
  HOOKFUSE_PER_ENTRY_INLINE constexpr void reused(index_c<I>, const E&) {}
};

/// Visitor of bind_tape's second walk: each name met again must name the same object.
template <class Entries>
struct CheckReusedNames {
  const Entries& entries;
  template <std::size_t I, class P>
  HOOKFUSE_PER_ENTRY_INLINE constexpr void entry(index_c<I>, const P&) {}
  template <std::size_t I, class E>
  HOOKFUSE_PER_ENTRY_INLINE void reused(index_c<I>, const E& e) {
    check_same_tensor<I>(entries, e);
  }
};

template <std::size_t... I, class... Es>
constexpr auto build_entries(std::type_identity<FlatTupleImpl<std::index_sequence<I...>, Es...>>,
                             const void* const* payloads) {
  return FlatTupleImpl<std::index_sequence<I...>, Es...>{
      FlatLeaf<I, Es>{Es{*static_cast<const typename Es::payload_type*>(payloads[I])}}...};
}

/// The finished tape (its entries in one FlatTuple) of `loss` followed by `fetches`, and the
/// loss's position on it. The tape's type comes from flatten in unevaluated context; its values
/// are written once, each into its place. Throws ValueError when a name met again names another
/// object (check_same_tensor).
template <class L, class... Fs>
auto bind_tape(const L& loss, const Fs&... fetches) {
  using Start = Tape<EntryNil, NameList<>>;
  using Listed =
      decltype(flatten_all_types(std::declval<Start>(), std::declval<const L&>(),
                                 std::declval<const Fs&>()...));
  using Entries = decltype(entries_to_tuple(std::declval<typename Listed::entries_type>()));
  using Final = Tape<Entries, typename bound_names<typename Listed::names_type>::type>;
  std::array<const void*, Listed::entries_type::size> payloads{};
  CollectPayloads collect{payloads.data()};
  walk_all<Start>(collect, loss, fetches...);
  Final tape{build_entries(std::type_identity<Entries>{}, payloads.data())};
  CheckReusedNames<Entries> check{tape.entries};
  walk_all<Start>(check, loss, fetches...);
  return TapeAnd<Final, index_c<flat_result<Start, L>::index>>{std::move(tape), {}};
}

}  // namespace hookfuse::detail
