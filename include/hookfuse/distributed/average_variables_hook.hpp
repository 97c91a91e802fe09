// hookfuse/distributed/average_variables_hook.hpp: data-parallel training that keeps the fused
// update: the ranks average the values the update wrote, in place of the gradients.
//
// With an update linear in the gradient, averaging the updated values over the ranks gives what
// averaging the gradients first gives. Every rank starts a step from the same values v and
// slots (BroadcastGlobalVariablesHook, then this hook every step) and applies its own gradient
// g_r; with weights w_r (the ranks' batch rows) and mean(x) = sum_r(w_r * x_r) / sum_r(w_r):
//   GradientDescentOptimizer   v_r = v - lr * g_r:  mean(v_r) = v - lr * mean(g_r)
//   MomentumOptimizer          a_r = m * a + g_r:   mean(a_r) = m * a + mean(g_r)
//                              v_r = v - lr * a_r:  mean(v_r) = v - lr * mean(a_r)
//                              (Nesterov: v_r = v - lr * (g_r + m * a_r), linear in g_r too)
// which are the updates of one process on the global batch, whose gradient is mean(g_r) for a
// loss that is a mean over the rows. An update hook pins no gradient, so the session keeps the
// update folded into the backward pass (docs/hooks.md, "The fused update"), which a gradient hook
// (AverageGradientsHook) turns off. Adam, RMSProp and Adagrad are not linear in the gradient
// (a square root of a running square), so averaging their results is not their update of the
// averaged gradient: the hook refuses them at compile time.
//
// What is exchanged: each variable's value and each of its slots, so a step sends the model's
// elements once with SGD (as AverageGradientsHook) and twice with Momentum (value and
// accumulator); one MPI_Allreduce per scalar type (distributed/detail/weighted_allreduce.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "hookfuse/config.hpp"
#include "hookfuse/distributed/communicator.hpp"
#include "hookfuse/distributed/detail/weighted_allreduce.hpp"

namespace hookfuse::distributed {

/// AverageVariablesHook's options.
struct AverageVariablesOptions {
  /// true: weigh each rank's values by its batch rows (UpdateContext::batch_rows), exact for a
  /// loss that is a mean over the batch, also on a short last batch split unevenly. false: an
  /// equal weight per rank (Horovod's op=hvd.Average).
  bool weight_by_rows = true;
};

/// Replaces, each step right after the update (after_apply_gradients), every variable's value
/// and optimizer slot by its weighted mean over the ranks of `comm`:
/// sum_r(w_r * t_r) / sum_r(w_r) in the tensor's own type (float or double), w_r rank r's batch
/// rows (`weight_by_rows`, the default) or 1. For GradientDescentOptimizer and MomentumOptimizer
/// this equals AverageGradientsHook's averaged gradient applied by every rank (up to rounding:
/// float sums in another order), with the update still fused into the backward pass; other
/// optimizers are a compile error naming AverageGradientsHook. A rank with w_r = 0 adds exactly
/// 0. When every rank's batch is empty (sum_r(w_r) = 0) every rank keeps the values it computed
/// (each applied the zero gradient of an empty batch, the same update on every rank) and
/// empty_steps() counts the step. With one rank it does nothing (no MPI call).
///
/// Exact only when the update of each rank is its own gradient's: a gradient hook that changes
/// gradients non-linearly (clipping by global norm) acts on each rank's own gradient here, and
/// on the global batch's under AverageGradientsHook; use that one with such hooks. Every rank's
/// session must hold this hook and run the same number of steps; the ranks must start equal
/// (BroadcastGlobalVariablesHook). On the first step the ranks compare their element counts (one
/// MPI_Allreduce(MPI_MAX)). Errors: MpiError naming MPI_Allreduce; MpiError on every rank when
/// the models differ in size; MpiError when a later step has another element count than the
/// first; MpiError, on that rank alone, when its batch has more than 2^24 rows. `comm` must
/// outlive the hook.
class AverageVariablesHook {
 public:
  explicit AverageVariablesHook(const Communicator& comm, AverageVariablesOptions options = {})
      : reduce_(comm, "AverageVariablesHook", "variables and slots"), options_(options) {}

  template <class Updated>
  void after_apply_gradients(Updated& updated) {
    static_assert(Updated::linear_in_gradient,
                  "hookfuse: AverageVariablesHook averages the updated variables, which equals "
                  "averaging the gradients only for an update linear in the gradient "
                  "(GradientDescentOptimizer, MomentumOptimizer); with this optimizer use "
                  "AverageGradientsHook");
    if (reduce_.communicator().size() == 1) return;
    const std::int64_t rows = options_.weight_by_rows ? updated.batch_rows() : 1;
    if (!reduce_.average(updated, rows, detail::ZeroTotal::keep)) ++empty_steps_;
    ++steps_;
  }

  /// The number of float and double elements exchanged per step (0 before the first): the
  /// variables' and their slots'; a type that has any sends one more element, the rows.
  std::size_t float_elements() const { return reduce_.float_elements(); }
  std::size_t double_elements() const { return reduce_.double_elements(); }
  /// How many steps averaged (steps with one rank are not counted).
  std::int64_t steps() const { return steps_; }
  /// How many of those steps had 0 rows on every rank, and so kept each rank's values.
  std::int64_t empty_steps() const { return empty_steps_; }
  const AverageVariablesOptions& options() const { return options_; }
  const Communicator& communicator() const { return reduce_.communicator(); }

 private:
  detail::WeightedAllreduce reduce_;
  AverageVariablesOptions options_;
  std::int64_t steps_ = 0;
  std::int64_t empty_steps_ = 0;
};

}  // namespace hookfuse::distributed
