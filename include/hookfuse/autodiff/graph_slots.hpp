// hookfuse/autodiff/graph_slots.hpp: the slot of each tape entry in a bound Graph: a Variable's
// matrices, a placeholder's fed data and shape, an op's value and adjoint buffers.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/autodiff/tape.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/flat_tuple.hpp"

namespace hookfuse::detail {

template <class E>
struct Slot;

template <class V>
struct Slot<VarEntry<V>> {
  using S = typename V::scalar;
  static constexpr Dims D = VarEntry<V>::dims;
  V* var;
  explicit Slot(const VarEntry<V>& e) : var(e.var) {}
  Shape shape() const { return {var->value.rows(), var->value.cols()}; }
  auto value() { return map_t<S, D.rows, D.cols>(var->value.data(), var->value.rows(),
                                                 var->value.cols()); }
  auto adjoint() {
    static_assert(V::has_grad,
                  "hookfuse: a graph that runs backward (a training step) reaches a "
                  "ForwardVariable, which has no gradient matrix: make the model's variables "
                  "Variables (nn::VariableStore), or bind it with bind_forward");
    return map_t<S, D.rows, D.cols>(var->grad.data(), var->grad.rows(), var->grad.cols());
  }
};

template <class P>
struct Slot<InputEntry<P>> {
  using S = typename P::scalar;
  static constexpr Dims D = InputEntry<P>::dims;
  P placeholder;
  const S* data = nullptr;
  bool fed = false;  // since the last Graph::clear_feeds()
  Shape current{D.rows == Dynamic ? 0 : D.rows, D.cols == Dynamic ? 0 : D.cols};
  explicit Slot(const InputEntry<P>& e) : placeholder(e.placeholder) {
    if constexpr (D.cols == Dynamic) current.cols = placeholder.cols;
  }
  Shape shape() const { return current; }
  auto value() {
    return Eigen::Map<const matrix_t<S, D.rows, D.cols>>(data, current.rows, current.cols);
  }
};

/// The slot of an op's entry: its value, and its adjoint when it requires a gradient (RG). Its
/// type depends on the scalar, dims and RG only, not on the op or its operands' positions, so
/// that the per-entry functions below are instantiated once for like layers, with short symbols.
template <class S_, Dims D_, bool RG>
struct OpSlot {
  using S = S_;
  static constexpr Dims D = D_;
  static constexpr bool requires_grad = RG;
  Buffer<S, D.rows, D.cols> val;
  struct NoAdjoint {};
  std::conditional_t<RG, Buffer<S, D.rows, D.cols>, NoAdjoint> adj;
  template <class E>
  explicit OpSlot(const E&) : OpSlot() {}
  /// Out of line (HOOKFUSE_NOINLINE): one function per scalar, dims and RG, to which the
  /// constructor from an entry delegates, so Graph::make_slots makes one call per op slot
  /// instead of inlining its stores (see there).
  HOOKFUSE_NOINLINE OpSlot() {}
  Shape shape() const { return val.shape(); }
  auto value() { return val.view(); }
  auto adjoint() { return adj.view(); }
  /// Heap bytes of the value and (when it has one) adjoint buffer.
  std::size_t heap_bytes() const {
    if constexpr (RG) return val.heap_bytes() + adj.heap_bytes();
    else return val.heap_bytes();
  }
};

template <class E>
struct slot_of {
  using type = Slot<E>;
};
template <class Op, class S, Dims D, bool RG, std::size_t... Cs>
struct slot_of<OpEntry<Op, S, D, RG, Cs...>> {
  using type = OpSlot<S, D, RG>;
};
/// The slot type of tape entry E.
template <class E>
using slot_t = typename slot_of<E>::type;

/// f(variable) for a Variable's slot; no-op for the other slots.
template <class Sl, class F>
HOOKFUSE_PER_ENTRY_INLINE inline void visit_variable(Sl& s, F& f) {
  if constexpr (requires { s.var; }) f(*s.var);
}
/// Marks a placeholder's slot unfed; no-op for the other slots.
template <class Sl>
HOOKFUSE_PER_ENTRY_INLINE inline void clear_fed(Sl& s) {
  if constexpr (requires { s.fed; }) s.fed = false;
}

// make_slots and make_kernels (op_dispatch.hpp) run once, at bind, and write one slot or kernel
// per tape entry into the Graph: a few stores each, a thousand for a 32-layer model. Inlined
// into the Graph's constructor, with every op slot's stores inlined into them, they would make
// one function whose value numbering and alias walks grow faster than the model. So both are
// out of line (HOOKFUSE_NOINLINE) and each op slot is built by a call to OpSlot's out-of-line
// default constructor; the training step's code is the same either way. Not HOOKFUSE_COLD: that
// would also make the compiler treat the code around bind as rarely run, and Adam's step costs
// more instructions then.

/// The slots of a tape's entries, each constructed in place from its entry: no temporary copy
/// of its buffers (on a microcontroller the stack would need room for a second graph).
template <class Entries, std::size_t... I>
HOOKFUSE_NOINLINE auto make_slots(const Entries& e, std::index_sequence<I...>) {
  return FlatTupleImpl<std::index_sequence<I...>, slot_t<std::tuple_element_t<I, Entries>>...>{
      FlatLeaf<I, slot_t<std::tuple_element_t<I, Entries>>>{
          slot_t<std::tuple_element_t<I, Entries>>(get<I>(e))}...};
}

}  // namespace hookfuse::detail
