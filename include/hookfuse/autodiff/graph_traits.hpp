// hookfuse/autodiff/graph_traits.hpp: what a bound tape is, known at compile time: where each
// named tensor sits, its dims, whether it gets an adjoint, which placeholders a tensor reads,
// which variable updates fold into the backward pass.
//
// Graph (graph.hpp) derives from GraphTraits, so these are names of the graph type itself:
// `G::index_of<"x">`, `G::has<"y">`, `G::size`, `G::loss_index`. Nothing here holds memory.
#pragma once

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/autodiff/fusion_policy.hpp"
#include "hookfuse/autodiff/tape_names.hpp"
#include "hookfuse/autodiff/tape_tables.hpp"
#include "hookfuse/fixed_string.hpp"

namespace hookfuse {

/// The compile-time description of a model bound as Graph<TapeT, Loss>. `Loss` is the position
/// of the loss on the tape. Every member is static; the graph type inherits them all.
template <class TapeT, std::size_t Loss>
class GraphTraits {
 public:
  using entries_type = typename TapeT::entries_type;
  using names_type = typename TapeT::names_type;
  /// Number of tensors on the tape (placeholders, variables, constants and ops).
  static constexpr std::size_t size = std::tuple_size_v<entries_type>;
  /// Position of the loss on the tape.
  static constexpr std::size_t loss_index = Loss;
  /// The loss's scalar type.
  using scalar = typename std::tuple_element_t<Loss, entries_type>::scalar;

  /// Position of a named tensor on the tape, or detail::npos.
  template <fixed_string Name>
  static constexpr std::size_t index_of = detail::name_index<Name, names_type>::value;
  template <fixed_string Name>
  static constexpr bool has = index_of<Name> != detail::npos;
  /// Compile-time dims of a named tensor (Name must exist).
  template <fixed_string Name>
  static constexpr Dims dims_of = std::tuple_element_t<index_of<Name>, entries_type>::dims;
  /// The named tensor has an adjoint after backward(): the loss depends on it and it depends
  /// on a Variable.
  template <fixed_string Name>
  static constexpr bool has_adjoint = [] {
    if constexpr (has<Name>)
      return index_of<Name> <= Loss &&
             std::tuple_element_t<index_of<Name>, entries_type>::requires_grad;
    else
      return false;
  }();

  /// The placeholders a step reads, by tape position: filled by Graph::check_fed() for the loss
  /// and each tensor the step fetches, then checked as a whole by Graph::check_same_rows().
  using read_set = std::array<bool, size>;

  /// True when the update of the Variable at tape position I is folded into the backward pass
  /// under policy Pin: the variable is not pinned under any of its names (its own or a
  /// `named` alias), is an operand exactly once on the whole tape, that use lies in the loss's
  /// graph, and no other operand of that op is a Variable (whose backward could read this one
  /// after its update), except for an addition, whose backward reads no operand. (A second use
  /// would read the value after the update, or contribute a second gradient term after it.)
  template <class Pin, std::size_t I>
  static constexpr bool update_fused_at() {
    return detail::fused_variables<entries_type, names_type, Loss, Pin>[I];
  }

  /// update_fused_at for a Variable by name (false for an unknown name or a non-variable).
  template <class Pin, fixed_string Name>
  static constexpr bool update_fused() {
    if constexpr (has<Name>) return update_fused_at<Pin, index_of<Name>>();
    else return false;
  }

 protected:
  /// Whether tape entry I is a placeholder.
  template <std::size_t I>
  static constexpr bool is_placeholder_at() {
    return requires { typename std::tuple_element_t<I, entries_type>::placeholder_type; };
  }

  /// The tape positions of the Variables and of the placeholders (detail::position_list).
  using variables = detail::position_list<entries_type, detail::EntryKind::variable, size - 1>;
  using placeholders =
      detail::position_list<entries_type, detail::EntryKind::placeholder, size - 1>;
  /// The placeholders entry Target reads (tape positions, in tape order).
  template <std::size_t Target>
  using placeholders_read = detail::position_sequence<
      detail::position_list<entries_type, detail::EntryKind::reached_placeholder, Target>>;

  /// The op of tape entry I, and its operand count.
  template <std::size_t I>
  using op_t = typename std::tuple_element_t<I, entries_type>::op_type;
  /// (A type, not a static member variable: a member variable of the Graph is a symbol that
  /// spells the Graph's whole tape, one per entry, and the compiler names each of them.)
  template <std::size_t I>
  using op_arity = std::integral_constant<std::size_t,
                                          std::tuple_element_t<I, entries_type>::children.size()>;
  /// Each entry's operands (detail::operand_triples) and name (for bind's messages).
  static constexpr auto operands_ = detail::operand_triples<entries_type>;
  static constexpr auto names_ = detail::position_names<names_type, size>;
};

}  // namespace hookfuse
