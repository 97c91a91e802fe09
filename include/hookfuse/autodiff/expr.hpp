// hookfuse/autodiff/expr.hpp: the expression types a model is built from (no values, no buffers).
//
// A model is a C++ type: `Node<MatMulOp, Input<...>, VarRef<...>>` and so on. Nodes hold only
// their children and small constant payloads (a scale factor, a pointer to a Variable); the
// buffers for values and adjoints are laid out when the expression is bound (graph.hpp).
#pragma once

#include <concepts>
#include <tuple>
#include <type_traits>

#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/autodiff/variable.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/flat_tuple.hpp"

namespace hookfuse {

/// Compile-time dimensions of a tensor (Eigen::Dynamic where only known at run time).
struct Dims {
  int rows;
  int cols;
};

/// Anything usable as a node of a model: a scalar type, compile-time dims and whether the loss's
/// gradient flows into it.
template <class E>
concept Expression = requires {
  typename E::scalar;
  { E::dims } -> std::convertible_to<Dims>;
  { E::requires_grad } -> std::convertible_to<bool>;
  typename E::is_hookfuse_expression;
};

/// A reference to a Variable inside an expression (the Variable must outlive the bound graph).
template <class V>
struct VarRef {
  using is_hookfuse_expression = void;
  using variable_type = V;
  using scalar = typename V::scalar;
  static constexpr Dims dims{V::rows_at_compile_time, V::cols_at_compile_time};
  static constexpr bool requires_grad = true;
  static constexpr auto name = V::name;
  V* var;

  constexpr VarRef(V* v) noexcept : var(v) {}
  /// A Variable passed to a model-building function (make_node's operands): the node refers to
  /// it, so it must be an lvalue that outlives the bound graph.
  constexpr VarRef(V& v) noexcept : var(&v) {}
  template <class W>
    requires std::same_as<W, V>
  VarRef(W&&) {  // a Variable rvalue (an lvalue takes the constructor above)
    static_assert(!std::same_as<W, V>,
                  "hookfuse: pass Variables by lvalue; the graph refers to them");
  }
};

/// A placeholder inside an expression.
template <class P>
struct Input {
  using is_hookfuse_expression = void;
  using placeholder_type = P;
  using scalar = typename P::scalar;
  static constexpr Dims dims{P::rows_at_compile_time, P::cols_at_compile_time};
  static constexpr bool requires_grad = false;
  static constexpr auto name = P::name;
  P placeholder;

  constexpr Input(const P& p) noexcept : placeholder(p) {}
};

namespace detail {
/// A node's compile-time dims and whether the loss's gradient flows into it, as static members of
/// a base class whose arguments are just those two values: as static members of the Node itself,
/// each would be a symbol spelling the node's whole subtree (the compiler names every constant it
/// reads), one per node of the model.
template <Dims D, bool RequiresGrad>
struct NodeFacts {
  static constexpr Dims dims = D;
  static constexpr bool requires_grad = RequiresGrad;
};
}  // namespace detail

/// An operation applied to children. `Op` supplies the compile-time dims, the runtime shape rule
/// and a `kernel` (forward and backward), see ops.hpp. An aggregate: Node<Op, Cs...>{{}, op,
/// {children...}} (the first braces are the empty base).
template <class Op, class... Cs>
struct Node : detail::NodeFacts<Op::dims(Cs::dims...),
                                Op::differentiable && (Cs::requires_grad || ...)> {
  using is_hookfuse_expression = void;
  using op_type = Op;
  using scalar = typename std::tuple_element_t<Op::scalar_from, std::tuple<Cs...>>::scalar;
  static_assert(Op::valid(Cs::dims...), "hookfuse: operand shapes do not fit this operation "
                                        "(see Op and the operand dims in the instantiation above)");
  Op op;
  detail::FlatTuple<Cs...> children;  // an aggregate (detail/flat_tuple.hpp): cheap to instantiate
};

/// A named tensor, like the `name=` of a TensorFlow op: the name hooks fetch ("loss"). A named
/// node used several times in a model is one node: evaluated once per forward pass, and its
/// adjoint is the sum of what every use contributes.
/// Named<Name, E> is BasicNamed<detail::packed_name_t<Name>, E> (see packed_name).
template <class NameType, class E>
struct BasicNamed {
  using is_hookfuse_expression = void;
  using scalar = typename E::scalar;
  static constexpr Dims dims = E::dims;
  static constexpr bool requires_grad = E::requires_grad;
  static constexpr auto name = NameType::value;
  E expr;
};
template <fixed_string Name, class E>
using Named = BasicNamed<detail::packed_name_t<Name>, E>;

namespace detail {
template <class T>
struct is_variable : std::false_type {};
template <class N, class S, int R, int C, int K, bool G>
struct is_variable<BasicVariable<N, S, R, C, K, G>> : std::true_type {};
template <class T>
struct is_placeholder : std::false_type {};
template <class N, class S, int C, int R>
struct is_placeholder<BasicPlaceholder<N, S, C, R>> : std::true_type {};
}  // namespace detail

/// What model-building functions accept: an expression, a Variable (by reference) or a
/// Placeholder.
template <class T>
concept Operand = Expression<std::remove_cvref_t<T>> ||
                  detail::is_variable<std::remove_cvref_t<T>>::value ||
                  detail::is_placeholder<std::remove_cvref_t<T>>::value;

/// Turns an operand into an expression node.
template <Operand T>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto as_expr(T&& t) {
  using U = std::remove_cvref_t<T>;
  if constexpr (Expression<U>) {
    return U(static_cast<T&&>(t));
  } else if constexpr (detail::is_variable<U>::value) {
    static_assert(std::is_lvalue_reference_v<T>,
                  "hookfuse: pass Variables by lvalue; the graph refers to them");
    return VarRef<U>{&t};
  } else {
    return Input<U>{t};
  }
}

/// The expression type as_expr makes of a T. Worked out by class templates, not as
/// decltype(as_expr(...)): naming as_expr<T> makes the compiler give it a symbol, which spells
/// T's whole subtree, for every node of the model.
template <class U, bool Variable = detail::is_variable<U>::value,
          bool Placeholder = detail::is_placeholder<U>::value>
struct expr_of {
  using type = U;
};
template <class U>
struct expr_of<U, true, false> {
  using type = VarRef<U>;
};
template <class U>
struct expr_of<U, false, true> {
  using type = Input<U>;
};
template <class T>
using expr_t = typename expr_of<std::remove_cvref_t<T>>::type;

/// Names a tensor: `named<"logits">(dense(x))`. Hooks fetch it by that name.
template <fixed_string Name, Operand E>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto named(E&& e) {
  using X = expr_t<E>;
  return Named<Name, X>{as_expr(static_cast<E&&>(e))};
}

/// The node of op Op on operands of types Ts. The built-in builders (relu, matmul, ...) construct
/// it in place, node_t<Op, X>{{}, op, {static_cast<X&&>(x)}}, rather than call make_node: one
/// function less per node of the model, whose symbol would spell the operands' subtrees.
template <class Op, class... Ts>
using node_t = Node<Op, expr_t<Ts>...>;

template <class Op, Operand... Ts>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto make_node(Op op, Ts&&... ts) {
  // Each operand initialises its element directly (an expression is copied, a Variable or a
  // Placeholder converted by VarRef's or Input's constructor): a call to as_expr per operand
  // would be one more function per node, whose symbol spells the operand's whole subtree.
  return Node<Op, expr_t<Ts>...>{{}, op, {static_cast<Ts&&>(ts)...}};
}

}  // namespace hookfuse
