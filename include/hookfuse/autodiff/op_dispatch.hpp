// hookfuse/autodiff/op_dispatch.hpp: the Graph's work on one tape entry (reserve at bind, forward,
// backward with the fused update, the optimizer's step of one variable), as free functions
// whose template arguments are that entry's own types, so that their symbols do not spell the
// whole tape.
#pragma once

#include <cstddef>
#include <limits>
#include <string_view>
#include <tuple>
#include <utility>

#include "hookfuse/autodiff/errors.hpp"
#include "hookfuse/autodiff/fusion_policy.hpp"
#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/autodiff/target.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/flat_tuple.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"

namespace hookfuse::detail {

/// The kernel of a tape entry that has none (a Variable or a Placeholder). Graph's helpers that
/// are instantiated once per entry live here, outside the class: a member's symbol spells the
/// whole tape (see position_list).
struct NoKernel {
  template <class T>
  explicit NoKernel(const T&) {}
};
/// What an entry's kernel is built from: its op, or the entry itself.
template <class E>
const auto& op_of(const E& e) {
  if constexpr (requires { e.op; }) return e.op;
  else return e;
}
/// check_size's ValueError: at bind, the tensor at tape `position` (named `name`, or
/// unnamed when empty) would be `shape`, more values than an Index can count. Out of line and
/// not a member, so compiled once, not once per entry.
HOOKFUSE_COLD inline void fail_capacity_too_large(Index capacity, std::string_view name,
                                                  std::size_t position, Shape shape) {
  ErrorMessage m;
  m << "hookfuse: bind: capacity " << static_cast<long long>(capacity)
    << " is too large: the tensor ";
  if (!name.empty()) m << "'" << name << "' ";
  m << "at tape position " << position << " would be " << shape
    << ", more values than memory can be indexed with";
  fail<ValueError>(m.str());
}

/// reserve_op's ShapeError: the operands' shapes do not fit the op at tape `position`.
template <class... Sh>
HOOKFUSE_COLD void fail_operand_shapes(std::size_t position, Sh... shapes) {
  ErrorMessage msg;
  msg << "hookfuse: operand shapes do not fit the operation at tape position " << position << ":";
  ((msg << " " << shapes), ...);
  fail<ShapeError>(msg.str());
}

// The graph's work on one entry. Free functions whose template arguments are that entry's own
// types (its op, kernel and slots, and its operands' slots), not the graph's: the graph calls
// them from one fold per pass, over the tape positions of a position_list, with the operand
// slots given by operand_triples. A member of Graph instantiated once per entry has a symbol
// that spells the whole tape, so the compiler's work would grow with the square of the model's
// size (bench/README.md, "Growth with hooks and layers").

/// f applied to the first N of the three operand slots.
template <std::size_t N, class F, class C0, class C1, class C2>
HOOKFUSE_PER_ENTRY_INLINE inline decltype(auto) with_operands(F&& f, C0& c0, C1& c1, C2& c2) {
  if constexpr (N == 0) return f();
  else if constexpr (N == 1) return f(c0);
  else if constexpr (N == 2) return f(c0, c1);
  else return f(c0, c1, c2);
}
/// Operand slot K of three.
template <std::size_t K, class C0, class C1, class C2>
HOOKFUSE_PER_ENTRY_INLINE constexpr auto& pick_operand(C0& c0, C1& c1, C2& c2) {
  if constexpr (K == 0) return c0;
  else if constexpr (K == 1) return c1;
  else return c2;
}

/// ValueError unless a tensor of scalar S and `shape` can be allocated and indexed: rows * cols
/// values of S within the index type (no overflow in any size product). `position` and `name`
/// are the entry's, for the message.
template <class S>
HOOKFUSE_PER_ENTRY_INLINE inline void check_size(Shape shape, Index capacity,
                                                 std::size_t position, std::string_view name) {
  constexpr Index max_values = std::numeric_limits<Index>::max() / Index{sizeof(S)};
  if (shape.rows > 0 && shape.cols > 0 && shape.rows > max_values / shape.cols)
    fail_capacity_too_large(capacity, name, position, shape);
}

/// At bind: a placeholder's rows become the capacity when they are the batch's.
template <class Sl>
HOOKFUSE_PER_ENTRY_INLINE inline void reserve_placeholder(Sl& slot, Index capacity,
                                                          std::size_t position,
                                                          std::string_view name) {
  if constexpr (Sl::D.rows == Dynamic) slot.current.rows = capacity;
  check_size<typename Sl::S>(slot.current, capacity, position, name);
}

/// At bind: checks an op's operand shapes (ShapeError) and its size (ValueError), and reserves
/// its buffers and its kernel's workspace for them.
template <class Op, std::size_t N, class Kernel, class Sl, class C0, class C1, class C2>
HOOKFUSE_PER_ENTRY_INLINE inline void reserve_op(Kernel& kernel, Sl& slot, Index capacity,
                                                 bool adjoints, std::size_t position,
                                                 std::string_view name, C0& c0, C1& c1, C2& c2) {
  with_operands<N>(
      [&](auto&... cs) HOOKFUSE_PER_ENTRY_INLINE {
        const Shape shape = Op::shape(cs.shape()...);
        bool ok = true;
        if constexpr (requires { Op::valid_shape(cs.shape()...); })
          ok = Op::valid_shape(cs.shape()...);
        // Rules that depend on the operands' compile-time dims (broadcasting) live in the kernel.
        if constexpr (requires { Kernel::valid_shape(cs.shape()...); })
          ok = ok && Kernel::valid_shape(cs.shape()...);
        if (!ok) fail_operand_shapes(position, cs.shape()...);
        check_size<typename Sl::S>(shape, capacity, position, name);
        slot.val.reserve(shape);
        if constexpr (Sl::requires_grad)
          if (adjoints) slot.adj.reserve(shape);
        kernel.reserve(shape, cs.shape()...);
      },
      c0, c1, c2);
}

/// An op's forward pass: its value from its operands' values.
template <class Op, std::size_t N, class Kernel, class Sl, class C0, class C1, class C2>
HOOKFUSE_PER_ENTRY_INLINE inline void forward_op(Kernel& kernel, Sl& slot, C0& c0, C1& c1,
                                                 C2& c2) {
  with_operands<N>(
      [&](auto&... cs) HOOKFUSE_PER_ENTRY_INLINE {
        const Shape shape = Op::shape(cs.shape()...);
        slot.val.set_shape(shape);
        if constexpr (Sl::requires_grad) slot.adj.set_shape(shape);
        auto out = slot.value();
        kernel.forward(out, cs.value()...);
      },
      c0, c1, c2);
}

/// Operand K's share of an op's backward pass, written where `Role` says.
template <std::size_t K, OperandRole Role, class Optimizer, class Kernel, class Sl, class C,
          class... Vals>
HOOKFUSE_PER_ENTRY_INLINE inline void backward_operand(const Optimizer& optimizer, Kernel& kernel,
                                                       Sl& slot, C& operand,
                                                       const Vals&... vals) {
  if constexpr (Role == OperandRole::assign || Role == OperandRole::add) {
    auto adj = operand.adjoint();
    GradTarget<decltype(adj), Role == OperandRole::assign> t{adj};
    kernel.template backward<K>(t, slot.adjoint(), slot.value(), vals...);
  } else if constexpr (Role == OperandRole::update) {
    using S = typename C::S;
    if constexpr (LinearUpdate<Optimizer>) {
      auto value = operand.value();
      UpdateTarget<decltype(value)> t{value, optimizer.template update_scale<S>()};
      kernel.template backward<K>(t, slot.adjoint(), slot.value(), vals...);
    } else if constexpr (SlotAccumulation<Optimizer>) {
      auto& acc = optimizer.accumulation_slot(*operand.var);
      map_t<S, C::D.rows, C::D.cols> view(acc.data(), acc.rows(), acc.cols());
      UpdateTarget<decltype(view)> t{view, S(1)};
      kernel.template backward<K>(t, slot.adjoint(), slot.value(), vals...);
    }
  }
}

/// An op's backward pass: each operand's gradient, where Plan says. Operands whose update is
/// fused come last: the others' backward may still read the variable's value (dX = dY W^T
/// before W changes).
template <BackwardPlan Plan, class Optimizer, class Kernel, class Sl, class C0, class C1,
          class C2>
HOOKFUSE_PER_ENTRY_INLINE inline void backward_op(const Optimizer& optimizer, Kernel& kernel,
                                                  Sl& slot, C0& c0, C1& c1, C2& c2) {
  with_operands<Plan.operands>(
      [&](auto&... cs) HOOKFUSE_PER_ENTRY_INLINE {
        [&]<std::size_t... K>(std::index_sequence<K...>) HOOKFUSE_PER_ENTRY_INLINE {
          (backward_operand<K, unfused_role(Plan.role[K])>(
               optimizer, kernel, slot, pick_operand<K>(c0, c1, c2), cs.value()...),
           ...);
          (backward_operand<K, fused_role(Plan.role[K])>(
               optimizer, kernel, slot, pick_operand<K>(c0, c1, c2), cs.value()...),
           ...);
        }(std::make_index_sequence<Plan.operands>{});
      },
      c0, c1, c2);
}

/// What the optimizer does to one Variable around the backward pass.
enum class VariableStep { before_backward, apply, apply_fused };
/// optimizer.before_backward / apply / apply_fused (Step) of one variable when `Do`.
template <VariableStep Step, bool Do, class Optimizer, class V>
HOOKFUSE_PER_ENTRY_INLINE inline void step_variable(const Optimizer& optimizer, V& variable) {
  if constexpr (Do) {
    if constexpr (Step == VariableStep::before_backward) optimizer.before_backward(variable);
    else if constexpr (Step == VariableStep::apply) optimizer.apply(variable);
    else optimizer.apply_fused(variable);
  }
}

/// The kernel type of tape entry E of `Entries`: its op's kernel for its scalar and its own and
/// its operands' dims; NoKernel for a Variable or a Placeholder.
template <class Entries, class E>
struct kernel_of {
  using type = NoKernel;
};
template <class Entries, class Op, class S, Dims D, bool RG, std::size_t... Cs>
struct kernel_of<Entries, OpEntry<Op, S, D, RG, Cs...>> {
  using type = typename Op::template kernel<S, D, std::tuple_element_t<Cs, Entries>::dims...>;
};
template <class Entries, std::size_t I>
using kernel_t = typename kernel_of<Entries, std::tuple_element_t<I, Entries>>::type;

/// The kernels of a tape's entries, each built from its op (see make_slots, graph_slots.hpp,
/// for why out of line).
template <class Entries, std::size_t... I>
HOOKFUSE_NOINLINE auto make_kernels(const Entries& e, std::index_sequence<I...>) {
  return FlatTupleImpl<std::index_sequence<I...>, kernel_t<Entries, I>...>{
      FlatLeaf<I, kernel_t<Entries, I>>{kernel_t<Entries, I>(op_of(get<I>(e)))}...};
}

}  // namespace hookfuse::detail
