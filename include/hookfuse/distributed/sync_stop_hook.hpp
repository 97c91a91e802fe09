// hookfuse/distributed/sync_stop_hook.hpp: a stop requested on one rank stops every rank at the
// same step (with Horovod a program does this itself: hvd.allreduce of a stop flag).
//
// Data-parallel ranks meet in a collective every step (AverageGradientsHook's MPI_Allreduce): a
// rank that stops alone (its StopAtStepHook, a NanTensorHook with fail_on_nan_loss = false, a
// TimerStopHook whose clock ran ahead) leaves the others waiting in the next step's collective
// forever. In after_run this hook makes one MPI_Allreduce(MPI_MAX) of one int64 per step: the
// flag "a hook of this rank requested a stop in this run" (SessionRunContext::stop_requested(),
// shared by every hook of the run). When any rank's flag is set, it calls request_stop() on
// every rank, so every session's should_stop() becomes true after the same run.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "hookfuse/config.hpp"
#include "hookfuse/distributed/communicator.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"

namespace hookfuse::distributed {

/// Stops every rank of `comm` after the run in which any rank's hooks requested a stop.
///
/// Give it LAST among the user's hooks on every rank: after_run is called in hook order, and
/// the hook sees the stops requested by the hooks before it in the same run (the session's
/// default hooks come before the user's); a hook after it that requests a stop stops its own
/// rank only. Every rank's session must hold it and run the same runs (each after_run is a
/// collective: one MPI_Allreduce of one std::int64_t, also in runs that do not train).
/// With one rank it makes no MPI call.
///
/// What it does not cover: a rank whose input runs out (no after_run: give every rank the
/// same number of batches, NumpyInputFnOptions::num_shards does), and a hook that throws
/// (NanTensorHook with fail_on_nan_loss = true): that rank leaves the loop with an exception,
/// and the job ends when the process exits (mpirun stops the other ranks).
/// Errors: MpiError naming MPI_Allreduce. `comm` must outlive the hook.
class SyncStopHook {
 public:
  explicit SyncStopHook(const Communicator& comm) : comm_(&comm) {}

  void after_run(SessionRunContext& ctx, const SessionRunValues<>&) {
    std::int64_t flag[1] = {ctx.stop_requested() ? 1 : 0};
    if (comm_->size() > 1) comm_->allreduce_max(std::span<std::int64_t>(flag));
    if (flag[0] == 0) return;
    if (!ctx.stop_requested()) stopped_by_other_rank_ = true;
    ctx.request_stop();
    stopped_at_ = ctx.global_step();
  }

  /// The global step after the run that stopped every rank (none while training goes on).
  std::optional<std::int64_t> stopped_at() const { return stopped_at_; }
  /// Whether the stop came from another rank (no hook of this rank requested it).
  bool stopped_by_other_rank() const { return stopped_by_other_rank_; }

 private:
  const Communicator* comm_;
  std::optional<std::int64_t> stopped_at_;
  bool stopped_by_other_rank_ = false;
};

}  // namespace hookfuse::distributed
