// hookfuse/optim/optimizer.hpp: what an optimizer is (the Optimizer concept), and the train op.
//
// Two kinds of optimizer (tf.compat.v1.train.Optimizer subclasses):
//  - stateless: `apply(variable)` updates a Variable from its stored gradient
//    (GradientDescentOptimizer). If it also has `update_scale<S>()` (a linear update), the
//    session folds it into the backward pass (fusion_policy.hpp).
//  - with slots (MomentumOptimizer, AdamOptimizer, RMSPropOptimizer, AdagradOptimizer): it
//    declares `slot_names` (SlotNames<"Adam", "Adam_1">: one [R, C] slot per name and
//    variable, saved as "<var>/<slot name>") and `non_slot_names` (scalars shared by every
//    variable, saved under their own names: "beta1_power"), the initial values of each, and
//    `apply_dense(value, grad, slots, non_slots)` for one variable, then `finish(non_slots)`
//    once per step after every variable's update (TF's Optimizer._finish). Their storage is
//    created when the graph is bound (session/optimizer_slots.hpp), so a step allocates nothing.
//    `value`, `grad` and each `slots.slot[k]` are Eigen::Maps of one row-major matrix type with
//    the variable's [R, C] shape at run time (session/optimizer_slots.hpp, update_map_t), so an
//    update is compiled once per scalar type, whatever the variables' shapes; `non_slots` is a
//    std::array of the non-slot scalars. Write the update with Eigen expressions on them
//    (`value.array() -= ...`), as AdamOptimizer does.
//    Optionally `static constexpr bool elementwise_update = true`: apply_dense computes each
//    element of the value and slots from the same element of the gradient and slots and the
//    non-slot scalars alone, so the session may apply it to row blocks of a large variable on
//    several threads (intra-op threads, autodiff/threads.hpp; detail::ElementwiseUpdate).
//    Optionally `conflicting_slot_names` (one name or "" per slot) and `slot_conflict_reason`:
//    when a checkpoint holds "<var>/<conflicting name>", its value of that slot has another
//    meaning (it came from another configuration of the optimizer) and a restore refuses it
//    (RMSProp: a plain one's "RMSProp_1" is a centered one's mean gradient).
//
// Every optimizer has `learning_rate()` and `set_learning_rate(double)`: the learning rate is
// read at each update, so a hook may change it between steps (a schedule). The built-in ones
// keep it and their other hyperparameters as host_float (double; float in embedded builds, so
// that a float model's update has no double in it) and check the value they keep. They share
// `minimize` through detail::OptimizerBase, and the slots' initial value 0 through
// detail::SlotOptimizerBase (end of this file).
//
// Momentum (fused without Nesterov), Adam, RMSProp (plain and centered) and Adagrad have TF1's
// formulas, defaults and slot names, and are saved and restored with the session's checkpoint
// (tests/test_optimizers.cpp). LearningRateSchedulerHook and ReduceLROnPlateauHook call
// set_learning_rate (through LearningRateRef). Not supported: sparse updates, and the
// two-optimizer naming TF uses when a graph holds two ("beta1_power_1"); bench/README.md,
// "Optimizer cost", measures Adam's step against SGD's.
#pragma once

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/config.hpp"
#include "hookfuse/detail/check.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/optim/global_step.hpp"

namespace hookfuse {

/// The names of an optimizer's slots (or non-slot variables), in order: SlotNames<"Adam",
/// "Adam_1">. A slot named N of variable "dense/kernel" is saved as "dense/kernel/N".
template <fixed_string... Names>
struct SlotNames {
  static constexpr std::size_t size = sizeof...(Names);
  static constexpr auto names = std::tuple{Names...};
};

/// An optimizer with state: declares slot_names and non_slot_names (SlotNames), gives the
/// initial value of the K-th slot and non-slot, and updates one variable with apply_dense (see
/// the file comment).
template <class O>
concept SlotOptimizer = requires(const O& o) {
  typename O::slot_names;
  typename O::non_slot_names;
  { O::slot_names::size } -> std::convertible_to<std::size_t>;
  { O::non_slot_names::size } -> std::convertible_to<std::size_t>;
  { o.template initial_slot_value<float>(std::size_t{}) } -> std::same_as<float>;
  { o.template initial_non_slot_value<float>(std::size_t{}) } -> std::same_as<float>;
};

namespace detail {
/// An optimizer that declares its apply_dense elementwise (`elementwise_update`, see the file
/// comment).
template <class O>
concept ElementwiseUpdate = requires { requires bool(O::elementwise_update); };
}  // namespace detail

/// An optimizer: a learning rate that can be read and set, and either `apply(variable)` (a
/// stateless update; checked when the session applies it) or slots (SlotOptimizer).
template <class O>
concept Optimizer = requires(O& o, const O& c) {
  { c.learning_rate() } -> std::convertible_to<double>;
  o.set_learning_rate(1.0);
};

namespace detail {
/// A learning rate is finite and >= 0 (0 freezes the variables).
template <class T>
inline void check_learning_rate(const char* who, T learning_rate) {
  check_argument(std::isfinite(learning_rate) && learning_rate >= 0, who, "learning_rate",
                 "finite and >= 0", learning_rate);
}

/// Fails to compile, naming the type, unless O is an Optimizer.
template <class O>
constexpr bool check_optimizer() {
  static_assert(Optimizer<O>,
                "hookfuse: this type is not an optimizer: it needs learning_rate() and "
                "set_learning_rate(double), and either apply(variable) "
                "(GradientDescentOptimizer) or slots (slot_names, non_slot_names, "
                "initial_slot_value, apply_dense: MomentumOptimizer, AdamOptimizer); see "
                "hookfuse/optim/optimizer.hpp");
  return Optimizer<O>;
}
}  // namespace detail

/// What `minimize` returns, like TensorFlow's train_op: the loss to differentiate, the
/// optimizer that applies the gradients, and the global step it increments. Run it with a
/// MonitoredTrainingSession. `Optimizer` must satisfy the Optimizer concept (a compile error
/// naming the type otherwise).
///
/// `global_step_increment` (int64, default 1) is what one run adds to the global step, as a TF
/// train op grouped with `tf.assign_add(global_step, 2)` (or TPU's iterations_per_loop) does:
///
///     auto train_op = optimizer.minimize(loss, gs);
///     train_op.global_step_increment = 2;   // each session.run() moves the step by 2
///
/// The session checks it when built: a negative value throws std::invalid_argument (0 is
/// allowed: a step that does not advance, as with TF's SyncReplicasOptimizer workers, which
/// StepCounterHook warns about). Hooks see it as SessionRunContext::global_step_increment(),
/// the `steps_per_run` of TF's step-based hooks.
template <class LossExpr, class Opt>
struct TrainOp {
  static_assert(detail::check_optimizer<Opt>());
  LossExpr loss;
  Opt optimizer;
  GlobalStep* global_step;
  std::int64_t global_step_increment = 1;
};

/// minimize(loss, global_step) for any optimizer: `loss` must be a [1, 1] tensor.
template <class Opt, Operand L>
auto minimize(const Opt& optimizer, L&& loss, GlobalStep& global_step) {
  using E = expr_t<L>;
  static_assert(E::dims.rows == 1 && E::dims.cols == 1,
                "hookfuse: minimize() needs a scalar ([1, 1]) loss, e.g. reduce_mean(...)");
  return TrainOp<E, Opt>{as_expr(std::forward<L>(loss)), optimizer, &global_step, 1};
}

namespace detail {
/// `minimize` for every built-in optimizer (a CRTP base without data: D is the optimizer).
template <class D>
class OptimizerBase {
 public:
  /// Builds the train op: each run computes d loss / d v for every Variable the loss depends on,
  /// applies the update (folded into the backward pass when no hook reads the gradient, see
  /// docs/hooks.md), and adds one to `global_step`. `loss` must be a [1, 1] tensor.
  template <Operand L>
  auto minimize(L&& loss, GlobalStep& global_step) const {
    return hookfuse::minimize(static_cast<const D&>(*this), std::forward<L>(loss), global_step);
  }
};

/// OptimizerBase and the initial values of an optimizer with slots (SlotOptimizer): every slot
/// and non-slot starts at 0 unless D declares its own initial_slot_value or
/// initial_non_slot_value (which hides this one).
template <class D>
class SlotOptimizerBase : public OptimizerBase<D> {
 public:
  template <class S>
  S initial_slot_value(std::size_t) const {
    return S(0);
  }
  template <class S>
  S initial_non_slot_value(std::size_t) const {
    return S(0);
  }
};
}  // namespace detail

}  // namespace hookfuse
