// hookfuse/distributed/broadcast_global_variables_hook.hpp: every rank starts from the root's
// state, Horovod's hvd.BroadcastGlobalVariablesHook(root_rank=0).
//
// In after_create_session the hook broadcasts, from the root rank to every other, everything a
// checkpoint of the session holds (session.variables(), as CheckpointSaverHook saves it): the
// model's variables, the optimizer's slots and non-slot variables (Adam's beta powers), the
// global step and the hooks' state fields. The session restores from its checkpoint directory
// before any hook's after_create_session, so a root that restored a checkpoint sends the
// restored values, and ranks that restored nothing (or initialised differently) receive them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/distributed/communicator.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"

namespace hookfuse::distributed {

namespace detail {
/// FNV-1a over the names, dtypes and shapes of a variable list: equal lists hash equally.
inline std::uint64_t variable_list_hash(VariableList vars) {
  std::uint64_t h = 14695981039346656037ull;
  const auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  for (const CheckpointVariable& v : vars) {
    for (char c : v.name) mix(static_cast<unsigned char>(c));
    mix(0xfeu);  // the end of the name
    mix(static_cast<std::uint64_t>(v.dtype));
    mix(static_cast<std::uint64_t>(v.shape.rank));
    for (std::int64_t d : v.shape.dims()) mix(static_cast<std::uint64_t>(d));
  }
  return h;
}
}  // namespace detail

/// Broadcasts the root rank's variables, optimizer slots, global step and hook state to every
/// rank of `comm` in after_create_session (hvd.BroadcastGlobalVariablesHook(root_rank)): one
/// MPI_Bcast per CheckpointVariable of session.variables(), in its dtype (float32, float64,
/// int32 or int64) and element count. Every rank's session must hold the hook. The session must
/// provide variables() (MonitoredTrainingSession does). Give it first among the user's hooks:
/// hooks after it see the root's state in their own after_create_session (StopAtStepHook's
/// num_steps counts from the root's global step); the session's default hooks
/// (CheckpointSaverHook on the chief) come before the user's, and on the root they see values the
/// broadcast does not change.
///
/// Before broadcasting, the ranks compare their variable lists (names, dtypes and shapes; one
/// MPI_Allreduce of a 64-bit hash): when they differ, every rank throws MpiError saying so, with
/// this rank's number of variables, instead of exchanging mismatched buffers.
/// Errors: std::invalid_argument from the constructor unless 0 <= root_rank < comm.size();
/// MpiError naming MPI_Bcast or MPI_Allreduce. `comm` must outlive the hook.
class BroadcastGlobalVariablesHook {
 public:
  explicit BroadcastGlobalVariablesHook(const Communicator& comm, int root_rank = 0)
      : comm_(&comm), root_rank_(root_rank) {
    comm.check_root(root_rank, "BroadcastGlobalVariablesHook");
  }

  template <class Session>
  void after_create_session(Session& session) {
    const auto vars = session.variables();
    broadcast(VariableList(vars.data(), vars.size()));
  }

  /// Broadcasts the values of `vars` from the root rank (what after_create_session does with the
  /// session's list). Collective: every rank calls it with an equal list.
  void broadcast(VariableList vars) {
    if (comm_->size() == 1) return;
    const std::uint64_t h = detail::variable_list_hash(vars);
    std::uint64_t hashes[2] = {h, ~h};
    comm_->allreduce_max(std::span<std::uint64_t>(hashes));
    if (hashes[0] != ~hashes[1])
      hookfuse::detail::fail<MpiError>(
          (hookfuse::detail::ErrorMessage()
           << "hookfuse: BroadcastGlobalVariablesHook: the ranks' variable lists differ (names, "
              "dtypes or shapes; rank "
           << comm_->rank() << " has " << vars.size()
           << " variables): every rank must build the same model, optimizer and hooks")
              .str());
    for (const CheckpointVariable& v : vars) {
      switch (v.dtype) {
        case DType::float32: comm_->broadcast(v.values<float>(), root_rank_); break;
        case DType::float64: comm_->broadcast(v.values<double>(), root_rank_); break;
        case DType::int32: comm_->broadcast(v.values<std::int32_t>(), root_rank_); break;
        case DType::int64: comm_->broadcast(v.values<std::int64_t>(), root_rank_); break;
      }
    }
    ++broadcasts_;
  }

  int root_rank() const { return root_rank_; }
  /// How many times the variables were broadcast (0 with one rank).
  std::int64_t broadcasts() const { return broadcasts_; }

 private:
  const Communicator* comm_;
  int root_rank_;
  std::int64_t broadcasts_ = 0;
};

}  // namespace hookfuse::distributed
