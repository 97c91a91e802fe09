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
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/autodiff/tape_names.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/flat_tuple.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"

namespace hookfuse::detail {

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

// While flatten walks the expression, the entries grow one at a time in a cons list (Cons<Prev,
// E>: one new aggregate per entry) instead of a std::tuple rebuilt by std::tuple_cat at every
// step, which would instantiate a tuple of every length on the way and so grow quadratically
// with the number of entries. bind_tape turns the finished list's type into one FlatTuple.
struct EntryNil {
  enum : std::size_t { size = 0 };
};
template <class Prev, class E>
struct EntryCons {
  enum : std::size_t { size = Prev::size + 1 };
  Prev prev;
  E last;
};

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

/// Child K of an op node `e`: a cast to the children tuple's leaf K, not a call to get<K> (a
/// function whose symbol would spell the child's whole subtree, one per node of the model).
/// #undef at the end of this header.
#define HOOKFUSE_DETAIL_CHILD(K, e)                                                   \
  static_cast<const FlatLeaf<                                                         \
      K, std::tuple_element_t<K, std::remove_cvref_t<decltype((e).children)>>>&>((e).children) \
      .value

/// True when two expressions of one type are the same tensor: the same Variable objects,
/// placeholders of the same widths, the same ops with the same constants.
template <class E>
inline bool same_expr(const E& a, const E& b) {
  if constexpr (requires { typename E::summarized_type; }) {
    return same_expr(a.tensor, b.tensor);  // a summary declaration: its tensor
  } else if constexpr (requires { typename E::op_type; }) {
    // The children one by one (HOOKFUSE_DETAIL_CHILD), not through get<K> or a lambda over an
    // index_sequence: each is one more function per node, and its symbol spells the node's
    // whole subtree.
    constexpr std::size_t n = std::tuple_size<decltype(a.children)>::value;
    static_assert(n <= 4, "hookfuse: same_expr handles ops of up to 4 operands");
    if (!same_op(a.op, b.op)) return false;
    if constexpr (n > 0)
      if (!same_expr(HOOKFUSE_DETAIL_CHILD(0, a), HOOKFUSE_DETAIL_CHILD(0, b))) return false;
    if constexpr (n > 1)
      if (!same_expr(HOOKFUSE_DETAIL_CHILD(1, a), HOOKFUSE_DETAIL_CHILD(1, b))) return false;
    if constexpr (n > 2)
      if (!same_expr(HOOKFUSE_DETAIL_CHILD(2, a), HOOKFUSE_DETAIL_CHILD(2, b))) return false;
    if constexpr (n > 3)
      if (!same_expr(HOOKFUSE_DETAIL_CHILD(3, a), HOOKFUSE_DETAIL_CHILD(3, b))) return false;
    return true;
  } else if constexpr (requires { typename E::variable_type; }) {
    return a.var == b.var;
  } else if constexpr (requires { typename E::placeholder_type; }) {
    return a.placeholder.cols == b.placeholder.cols;
  } else {
    return same_expr(a.expr, b.expr);  // Named<N, X>
  }
}

/// What a name met twice names, for fail_name_taken's message.
enum class NamedKind { variable, placeholder, tensor };

/// Reports that `name` names two different objects of `kind` in one model (a ValueError). Not a
/// template: check_same_name's instantiations, one per named expression type, share it.
[[noreturn]] HOOKFUSE_COLD inline void fail_name_taken(NamedKind kind, std::string_view name) {
  ErrorMessage msg;
  if (kind == NamedKind::variable)
    msg << "Variable " << name
        << " already exists, disallowed: two different Variable objects are named '" << name
        << "' in one model (use one object, or give the other its own name)";
  else if (kind == NamedKind::placeholder)
    msg << "Placeholder " << name
        << " already exists, disallowed: two placeholders of different widths are named '" << name
        << "' in one model";
  else
    msg << "Tensor " << name << " already exists, disallowed: two different tensors are named '"
        << name << "' in one model (give each its own name)";
  fail<ValueError>(msg.str());
}

/// A name met again on an expression `e` of the type that first carried it (`first`): reports
/// a ValueError naming it when the two are different tensors.
template <class E>
void check_same_name(const E& first, const E& e) {
  if (same_expr(first, e)) return;
  constexpr NamedKind kind = requires { typename E::variable_type; }      ? NamedKind::variable
                             : requires { typename E::placeholder_type; } ? NamedKind::placeholder
                                                                          : NamedKind::tensor;
  fail_name_taken(kind, E::name.view());
}

template <class Entries, class Names>
struct Tape {
  using entries_type = Entries;
  using names_type = Names;
  Entries entries;
};

template <class T, class E>
struct append_entry;
template <class Entries, class Names, class E>
struct append_entry<Tape<Entries, Names>, E> {
  using type = Tape<EntryCons<Entries, E>, Names>;
};

template <class T, fixed_string Name, std::size_t I, class E>
struct add_name;
template <class Entries, class... Ns, fixed_string Name, std::size_t I, class E>
struct add_name<Tape<Entries, NameList<Ns...>>, Name, I, E> {
  using type = Tape<Entries, NameList<Ns..., NameEntry<Name, I, E>>>;
};

/// The FlatTuple of a finished cons list's entries, first entry first.
template <class List, class... Es>
struct entries_to_tuple {
  using type = FlatTuple<Es...>;
};
template <class Prev, class E, class... Es>
struct entries_to_tuple<EntryCons<Prev, E>, Es...> : entries_to_tuple<Prev, E, Es...> {};

/// What bind_tape returns: the bound tape and the loss's position on it (an index_c). A plain
/// aggregate: std::pair's constrained constructors cost more to instantiate than the rest.
template <class T, class Index>
struct TapeAnd {
  T tape;
  Index index;
};

template <std::size_t I>
using index_c = std::integral_constant<std::size_t, I>;

template <class T>
using size_of_tape = index_c<T::entries_type::size>;

/// What flatten does with an expression E on a tape T: flat_kind<T, E>::value. Classes, not a
/// constexpr function of T and E (see name_index); the name list is only looked at for a named
/// expression (a Variable, a Placeholder or a Named).
enum class FlatKind { summary, op, seen, variable, placeholder, named };
template <class E>
concept UnnamedNode =
    requires { typename E::summarized_type; } || requires { typename E::op_type; };
template <class T, class E, bool = UnnamedNode<E>>
struct flat_kind;
template <class T, class E>
struct flat_kind<T, E, true>
    : std::integral_constant<FlatKind, requires { typename E::summarized_type; }
                                           ? FlatKind::summary
                                           : FlatKind::op> {};
template <class T, class E>
struct flat_kind<T, E, false>
    : std::integral_constant<FlatKind,
                             name_index<E::name, typename T::names_type>::value != npos
                                 ? FlatKind::seen
                             : requires { typename E::variable_type; }    ? FlatKind::variable
                             : requires { typename E::placeholder_type; } ? FlatKind::placeholder
                                                                          : FlatKind::named> {};

/// flatten<T, E>: the tape T with E and everything below it added (`tape`, a type), and E's
/// position on it (`index`). Class templates, not functions with deduced return types: the
/// compiler instantiates one small class per node and reuses it, where a function per node (its
/// body, its structured bindings, its return type) costs several times more, and more with
/// depth.
template <class T, class E, FlatKind K = flat_kind<T, E>::value>
struct flatten;

/// The children Cs of an op added in order to T: the tape after them (`tape`) and their
/// positions (`positions`, an index_sequence).
template <class T, class Done, class... Cs>
struct flatten_children {
  using tape = T;
  using positions = Done;
};
template <class T, std::size_t... D, class C, class... Cs>
struct flatten_children<T, std::index_sequence<D...>, C, Cs...>
    : flatten_children<typename flatten<T, C>::tape,
                       std::index_sequence<D..., flatten<T, C>::index>, Cs...> {};

template <class E, class Positions>
struct op_entry;
template <class E, std::size_t... Cs>
struct op_entry<E, std::index_sequence<Cs...>> {
  using type = OpEntry<typename E::op_type, typename E::scalar, E::dims, E::requires_grad, Cs...>;
};

template <class T, class E, class Children = decltype(E::children)>
struct flatten_op;
template <class T, class E, class Seq, class... Cs>
struct flatten_op<T, E, FlatTupleImpl<Seq, Cs...>> {
  using children = flatten_children<T, std::index_sequence<>, Cs...>;
  enum : std::size_t { index = size_of_tape<typename children::tape>::value };
  using tape = typename append_entry<typename children::tape,
                                     typename op_entry<E, typename children::positions>::type>::type;
};

// A summary declaration (summary::scalar<"loss">(t), autodiff/summary.hpp) is its tensor.
template <class T, class E>
struct flatten<T, E, FlatKind::summary>
    : flatten<T, std::remove_cvref_t<typename E::summarized_type>> {};

template <class T, class E>
struct flatten<T, E, FlatKind::op> : flatten_op<T, E> {};

/// The name of `E` (a Variable, Placeholder or Named) is already on the tape: fails to compile
/// when it came with another type (check_unique_name); the tape stays as it is (bind_tape checks,
/// once the entries exist, that it names the same object).
template <class T, class E>
struct flatten<T, E, FlatKind::seen> {
  static_assert(check_unique_name<E::name,
                                  typename named_type<E::name, typename T::names_type>::type, E>());
  using tape = T;
  enum : std::size_t { index = name_index<E::name, typename T::names_type>::value };
};

template <class T, class E>
struct flatten<T, E, FlatKind::variable> {
  enum : std::size_t { index = size_of_tape<T>::value };
  using tape = typename add_name<
      typename append_entry<T, VarEntry<typename E::variable_type>>::type, E::name, index,
      E>::type;
};

template <class T, class E>
struct flatten<T, E, FlatKind::placeholder> {
  enum : std::size_t { index = size_of_tape<T>::value };
  using tape = typename add_name<
      typename append_entry<T, InputEntry<typename E::placeholder_type>>::type, E::name, index,
      E>::type;
};

/// Named<Name, X>: the name refers to X's entry.
template <class T, class E>
struct flatten<T, E, FlatKind::named> {
  using inner = flatten<T, std::remove_cvref_t<decltype(E::expr)>>;
  enum : std::size_t { index = inner::index };
  using tape = typename add_name<typename inner::tape, E::name, index, E>::type;
};

/// The tape of the expressions Es, flattened one after the other onto T.
template <class T, class... Es>
struct flatten_all {
  using tape = T;
};
template <class T, class E, class... Es>
struct flatten_all<T, E, Es...> : flatten_all<typename flatten<T, E>::tape, Es...> {};

/// A name met by bind_tape's walk: the entry it names and the expression that first carried it.
struct SeenName {
  std::string_view name;
  std::size_t position;
  const void* first;
};

/// bind_tape's walk: the walk flatten makes, at run time. It numbers the entries as flatten
/// does (children first; a name met again is not walked into) and records where each entry's
/// payload is (the Variable pointer, the placeholder, the op). Its state is a run-time count
/// and name list, not the tape's type: a function instantiated once per node with the tape so
/// far in its template arguments would have a symbol that spells the tape, and the compiler's
/// work would grow with the square of the model's size.
struct TapeWalk {
  const void** payloads;  // [entries]
  SeenName* names;        // [names]
  std::size_t size = 0;
  std::size_t name_count = 0;

  const SeenName* find(std::string_view name) const {
    for (std::size_t k = 0; k < name_count; ++k)
      if (names[k].name == name) return &names[k];
    return nullptr;
  }
  std::size_t add(const void* payload) {
    payloads[size] = payload;
    return size++;
  }
};

/// Walks `e` (entries and names as flatten); returns its position. Throws ValueError when a
/// name met again names another tensor (check_same_name). Not force-inlined at -O0
/// (HOOKFUSE_PER_ENTRY_INLINE), nor is same_expr: each node's copy would hold its whole subtree,
/// so a model of depth N would compile N copies of sizes 1 to N.
template <class E>
inline std::size_t walk_tape(const E& e, TapeWalk& walk) {
  if constexpr (requires { typename E::summarized_type; }) {
    return walk_tape(e.tensor, walk);
  } else if constexpr (requires { typename E::op_type; }) {
    // The children in order, without get<K> or a lambda (see same_expr).
    constexpr std::size_t n = std::tuple_size<decltype(e.children)>::value;
    static_assert(n <= 4, "hookfuse: walk_tape handles ops of up to 4 operands");
    if constexpr (n > 0) walk_tape(HOOKFUSE_DETAIL_CHILD(0, e), walk);
    if constexpr (n > 1) walk_tape(HOOKFUSE_DETAIL_CHILD(1, e), walk);
    if constexpr (n > 2) walk_tape(HOOKFUSE_DETAIL_CHILD(2, e), walk);
    if constexpr (n > 3) walk_tape(HOOKFUSE_DETAIL_CHILD(3, e), walk);
    return walk.add(&e.op);
  } else {
    if (const SeenName* seen = walk.find(E::name.view())) {
      // flatten made sure (check_unique_name) that the first carrier has the type E.
      check_same_name(*static_cast<const E*>(seen->first), e);
      return seen->position;
    }
    std::size_t position;
    if constexpr (requires { typename E::variable_type; }) position = walk.add(&e.var);
    else if constexpr (requires { typename E::placeholder_type; })
      position = walk.add(&e.placeholder);
    else position = walk_tape(e.expr, walk);  // Named<Name, X>: X's entry
    walk.names[walk.name_count++] = SeenName{E::name.view(), position, &e};
    return position;
  }
}

template <std::size_t... I, class... Es>
constexpr auto build_entries(std::type_identity<FlatTupleImpl<std::index_sequence<I...>, Es...>>,
                             const void* const* payloads) {
  return FlatTupleImpl<std::index_sequence<I...>, Es...>{
      FlatLeaf<I, Es>{Es{*static_cast<const typename Es::payload_type*>(payloads[I])}}...};
}

/// The finished tape of the loss L followed by the fetches Fs: its entries in one FlatTuple
/// (entries_type) and its names with their positions (names_type). A class named after the
/// expressions, not Tape<entries, names>: the Graph's type, and so the symbol of each of its
/// member functions, then spells the model as its expression does, each name once, instead of
/// every entry and every name again (twice the characters). GCC's mangler looks each character
/// of a name up in the list of the symbol's components so far, so a symbol's cost grows with the
/// square of the model's size; spelling the model once is about 30% less of the mangler's work on
/// a 32-layer model. start_type is the empty tape flatten starts from (bind_tape finds the loss's
/// position from it too).
template <class L, class... Fs>
struct BoundTape {
  using start_type = Tape<EntryNil, NameList<>>;
  using listed_type = typename flatten_all<start_type, L, Fs...>::tape;
  using entries_type = typename entries_to_tuple<typename listed_type::entries_type>::type;
  using names_type = typename bound_names<typename listed_type::names_type>::type;
  entries_type entries;
};

/// The finished tape (BoundTape) of `loss` followed by `fetches`, and the
/// loss's position on it. The tape's type comes from flatten in unevaluated context; its values
/// are written once, each into its place. Throws ValueError when a name met again names another
/// object (check_same_name).
template <class L, class... Fs>
auto bind_tape(const L& loss, const Fs&... fetches) {
  using Final = BoundTape<L, Fs...>;
  using Start = typename Final::start_type;
  using Listed = typename Final::listed_type;
  using Entries = typename Final::entries_type;
  std::array<const void*, Listed::entries_type::size> payloads{};
  std::array<SeenName, name_count<typename Listed::names_type>> names{};
  TapeWalk walk{payloads.data(), names.data()};
  walk_tape(loss, walk);
  (walk_tape(fetches, walk), ...);
  return TapeAnd<Final, index_c<flatten<Start, L>::index>>{
      Final{build_entries(std::type_identity<Entries>{}, payloads.data())}, {}};
}

}  // namespace hookfuse::detail

#undef HOOKFUSE_DETAIL_CHILD
