// hookfuse/autodiff/fusion_policy.hpp: which optimizers the backward pass can fold in
// (LinearUpdate, SlotAccumulation), the fusion policies (which variables keep a stored
// gradient), and the per-op plan of where each operand's gradient goes, computed at compile
// time per tape.
//
// The fused update: backward<Pin>(optimizer) folds an optimizer whose update is linear in the
// gradient (SGD) into the backward pass for every variable that has exactly one consumer and is
// not pinned (a hook reads its gradient): its gradient contributions go straight into
// its value, so the gradient is never stored; apply_unfused<Pin>(optimizer) then updates the
// rest from their stored gradients. Which variables are fused is decided at compile time.
// An optimizer that accumulates into a slot (Momentum, SlotAccumulation) fuses the same way,
// with the slot as the target.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <string_view>
#include <tuple>

#include "hookfuse/autodiff/tape.hpp"
#include "hookfuse/autodiff/tape_tables.hpp"

namespace hookfuse::detail {

/// An optimizer whose update is `value += update_scale * gradient` (plain SGD): it can be folded
/// into the backward pass.
template <class Opt>
concept LinearUpdate = requires(const Opt& o) {
  { o.template update_scale<float>() } -> std::same_as<float>;
  { o.template update_scale<double>() } -> std::same_as<double>;
};

/// An optimizer whose update of a fused variable accumulates the gradient into one of its slots
/// (Momentum without Nesterov: accum = accum * momentum + g, then value -= lr * accum): before
/// the backward pass before_backward(var) scales the slot, the pass adds every gradient
/// contribution into accumulation_slot(var) (alpha 1), and apply_fused(var) (Graph::
/// apply_fused_slots, right after the backward pass) updates the value
/// from it. The slot holds exactly what the unfused update would put there.
template <class Opt>
concept SlotAccumulation = requires { requires Opt::fuses_into_slot; };

/// An optimizer that the backward pass can fold in (LinearUpdate or SlotAccumulation).
template <class Opt>
inline constexpr bool fusable_update = LinearUpdate<Opt> || SlotAccumulation<Opt>;

/// Fusion policies (which variables keep a stored gradient): Pin::pinned(variable name).
struct FuseNone {
  static constexpr bool pinned(std::string_view) { return true; }
};
struct FuseAll {
  static constexpr bool pinned(std::string_view) { return false; }
};
struct NoOptimizer {};

/// Where the backward pass of an op writes one operand's gradient.
enum class OperandRole : unsigned char {
  none,    // the operand requires no gradient
  assign,  // its adjoint, first contribution (overwrites)
  add,     // its adjoint, a later contribution
  update   // a Variable whose update is fused: its value (LinearUpdate) or its optimizer slot
};
/// What the backward pass of one op does: per operand, where its gradient goes.
struct BackwardPlan {
  std::size_t operands = 0;
  std::array<OperandRole, max_operands> role{};
};

/// The role in backward_op's first round (every operand but the fused ones) and second.
constexpr OperandRole unfused_role(OperandRole r) {
  return r == OperandRole::update ? OperandRole::none : r;
}
constexpr OperandRole fused_role(OperandRole r) {
  return r == OperandRole::update ? r : OperandRole::none;
}

/// fused_variables<Entries, Names, Loss, Pin>[I]: the update of the Variable at tape position I
/// is folded into the backward pass under policy Pin: it has one consumer on the whole tape and
/// up to the loss, that consumer allows it, and Pin does not pin its name.
template <class Entries, class Names, std::size_t Loss, class Pin>
inline constexpr std::array<bool, std::tuple_size_v<Entries>> fused_variables = [] {
  constexpr std::size_t size = std::tuple_size_v<Entries>;
  const auto& s = tape_shape<Entries>;
  std::array<bool, size> fused{};
  for (std::size_t i = 0; i < size; ++i) {
    if (!s.is_variable[i]) continue;
    bool pinned = false;
    for (const NameAt& n : name_table<Names>::names)
      pinned = pinned || (n.index == i && Pin::pinned(n.name));
    fused[i] = operand_count<Entries, size - 1>[i] == 1 && operand_count<Entries, Loss>[i] == 1 &&
               !pinned && consumers_allow_fusion<Entries>[i];
  }
  return fused;
}();

/// backward_plans<Entries, Names, Loss, Pin>[I]: where the backward pass of entry I (up to the
/// loss) writes each operand's gradient; no operands for an entry that requires no gradient.
template <class Entries, class Names, std::size_t Loss, class Pin>
inline constexpr std::array<BackwardPlan, std::tuple_size_v<Entries>> backward_plans = [] {
  const auto& s = tape_shape<Entries>;
  const auto& first = first_write_table<Entries, Loss>;
  const auto& fused = fused_variables<Entries, Names, Loss, Pin>;
  std::array<BackwardPlan, std::tuple_size_v<Entries>> plans{};
  for (std::size_t i = 0; i <= Loss; ++i) {
    if (!s.requires_grad[i] || s.is_variable[i] || s.is_placeholder[i]) continue;
    plans[i].operands = s.first_operand[i + 1] - s.first_operand[i];
    for (std::size_t p = s.first_operand[i]; p < s.first_operand[i + 1]; ++p) {
      const std::size_t c = s.operands[p];
      plans[i].role[p - s.first_operand[i]] = fused[c]               ? OperandRole::update
                                              : !s.requires_grad[c] ? OperandRole::none
                                              : first[p]            ? OperandRole::assign
                                                                    : OperandRole::add;
    }
  }
  return plans;
}();

}  // namespace hookfuse::detail
