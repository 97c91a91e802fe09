// hookfuse/distributed/average_gradients_hook.hpp: data-parallel gradient averaging, Horovod's
// hvd.DistributedOptimizer(optimizer, op=hvd.Average) as a gradient hook, weighted by each rank's
// rows.
//
// Every rank runs the same model on its own part of the global batch; in before_apply_gradients
// (session/gradient_event.hpp: after the backward pass, before the update) the hook replaces
// each rank's gradients by the global batch's, so every rank applies the same update and the
// variables stay equal (given equal starting values: BroadcastGlobalVariablesHook). With a loss
// that is a mean over the batch, rank r's gradient g_r is the mean over its rows_r rows, and the
// global batch's gradient is sum_r(rows_r * g_r) / sum_r(rows_r). Horovod averages per rank
// (sum_r g_r / N), which equals it only when every rank has as many rows; hookfuse weighs by rows
// so that N ranks train as one process also on the short last batch of an epoch, which the
// sharded input splits unevenly (5 examples at global batch 4 on 2 ranks: 0 + 1 rows). A rank
// with 0 rows contributes exactly nothing: its gradient is not read (on an empty batch hookfuse's
// losses are 0 and reduce_mean is NaN, both with zero gradients, but a hook may change them).
//
// One step: every rows_r * gradient is copied into one contiguous buffer per scalar type (float,
// double), followed by one element holding rows_r; the buffer is summed over the ranks by ONE
// MPI_Allreduce(MPI_SUM, in place), divided by its last element (the global batch's rows) and
// copied back (distributed/detail/weighted_allreduce.hpp). The buffers are allocated on the first
// step and reused: no allocation after it. A model whose variables are all float (or all double)
// makes one MPI_Allreduce per step.
//
// Being a gradient hook, it turns the fused update of SGD and Momentum off. With those two
// optimizers AverageVariablesHook (distributed/average_variables_hook.hpp) averages the updated
// values instead, which is exact for them and keeps the update fused.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hookfuse/config.hpp"
#include "hookfuse/distributed/communicator.hpp"
#include "hookfuse/distributed/detail/weighted_allreduce.hpp"

namespace hookfuse::distributed {

/// AverageGradientsHook's options.
struct AverageGradientsOptions {
  /// true: weigh each rank's gradient by its batch rows (GradientContext::batch_rows), the global
  /// batch's gradient for a loss that is a mean over the batch. false: an equal weight per rank,
  /// Horovod's op=hvd.Average (also what a loss that is a sum over the batch needs, up to the
  /// factor 1/N).
  bool weight_by_rows = true;
};

/// Replaces every variable's gradient by the gradient of the global batch over the ranks of
/// `comm` each step (hvd.DistributedOptimizer), in before_apply_gradients. The gradients are
/// [R, C] matrices of the variables' shapes, float or double; each becomes
/// sum_r(w_r * g_r) / sum_r(w_r), computed in the gradient's own type, where w_r is rank r's
/// batch rows (`weight_by_rows`, the default) or 1 (Horovod's equal weight). A rank with w_r = 0
/// adds exactly 0 (not 0 * g_r, which is NaN for a NaN gradient). When every rank's batch is
/// empty (sum_r(w_r) = 0) the gradients are set to 0 on every rank and empty_steps() counts the
/// step: the update then sees a zero gradient (SGD leaves the variables as they are; Momentum and
/// Adam still move them by what their slots hold). With one rank it does nothing (no MPI call).
///
/// The weights assume a loss that is a mean over the rows of the batch (hookfuse's losses,
/// reduce_mean): rank r's gradient is then the mean of its rows' gradients. Being a gradient
/// hook, it makes the session store every gradient (no fused update). Every rank's session must
/// hold this hook and run the same number of steps (a rank that stops early leaves the others
/// waiting in MPI_Allreduce). On the first step the ranks also compare their gradient element
/// counts (one extra MPI_Allreduce(MPI_MAX)): different models throw MpiError on every rank
/// naming both counts instead of exchanging garbage. Errors: MpiError naming MPI_Allreduce;
/// MpiError when a later step has another element count than the first; MpiError, on that rank
/// alone, when its batch has more than 2^24 rows (what a float counts exactly). `comm` must
/// outlive the hook.
class AverageGradientsHook {
 public:
  explicit AverageGradientsHook(const Communicator& comm, AverageGradientsOptions options = {})
      : reduce_(comm, "AverageGradientsHook", "gradients"), options_(options) {}

  template <class Gradients>
  void before_apply_gradients(Gradients& gradients) {
    if (reduce_.communicator().size() == 1) return;
    const std::int64_t rows = options_.weight_by_rows ? gradients.batch_rows() : 1;
    if (!reduce_.average(gradients, rows, detail::ZeroTotal::zero)) ++empty_steps_;
    ++steps_;
  }

  /// The number of float and double gradient elements exchanged per step (0 before the first);
  /// a type that has any sends one more element, the rows.
  std::size_t float_elements() const { return reduce_.float_elements(); }
  std::size_t double_elements() const { return reduce_.double_elements(); }
  /// How many steps averaged their gradients (steps with one rank are not counted).
  std::int64_t steps() const { return steps_; }
  /// How many of those steps had 0 rows on every rank, and so set the gradients to 0.
  std::int64_t empty_steps() const { return empty_steps_; }
  const AverageGradientsOptions& options() const { return options_; }
  const Communicator& communicator() const { return reduce_.communicator(); }

 private:
  detail::WeightedAllreduce reduce_;
  AverageGradientsOptions options_;
  std::int64_t steps_ = 0;
  std::int64_t empty_steps_ = 0;
};

}  // namespace hookfuse::distributed
