// hookfuse/distributed/divergence_check_hook.hpp: checks every N steps that the data-parallel
// ranks still hold the same variables, bit for bit.
//
// Ranks that start from the same values (BroadcastGlobalVariablesHook) and apply the same
// averaged gradients (AverageGradientsHook) stay equal bit for bit; a rank that drifts (a
// non-deterministic kernel, a hook that changes a variable on one rank, different library
// builds) trains another model without any error. Every every_n_steps runs the hook hashes each
// variable's bytes (a 64-bit FNV-1a-style checksum) and compares the hashes across the ranks
// with one MPI_Allreduce(MPI_MAX) of 2 x (number of variables) uint64 (each hash and its
// complement: max(h) == ~max(~h) exactly when all ranks agree). When they differ, every rank
// throws DivergenceError naming the first variable, in the session's checkpoint order, that
// differs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/distributed/communicator.hpp"
#include "hookfuse/hooks/checkpoint_variables.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"

namespace hookfuse::distributed {

/// The ranks' variables differ. what(): "hookfuse: DivergenceCheckHook: the ranks' variables
/// differ after global step S: first 'NAME' (N of M variables differ; this rank, R, has checksum
/// 0x...)".
class DivergenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
/// A 64-bit checksum of `bytes` bytes at `data`: FNV-1a's step (xor, multiply by its prime)
/// over 8-byte words in 4 independent lanes (so the multiplies overlap), then the lanes and the
/// last bytes folded in. Equal bytes give equal checksums on every rank of one platform.
inline std::uint64_t bytes_hash(const void* data, std::size_t bytes) {
  constexpr std::uint64_t prime = 1099511628211ull;
  std::uint64_t lane[4] = {14695981039346656037ull, 14695981039346656037ull ^ 1u,
                           14695981039346656037ull ^ 2u, 14695981039346656037ull ^ 3u};
  const auto* p = static_cast<const unsigned char*>(data);
  std::size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    for (int k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * static_cast<std::size_t>(k), 8);
      lane[k] = (lane[k] ^ w) * prime;
    }
  }
  std::uint64_t h = lane[0];
  for (int k = 1; k < 4; ++k) h = (h ^ lane[k]) * prime;
  for (; i < bytes; ++i) h = (h ^ p[i]) * prime;
  return (h ^ bytes) * prime;
}
/// "0x" and 16 lower-case hex digits.
inline std::string hex64(std::uint64_t v) {
  std::string out = "0x";
  for (int shift = 60; shift >= 0; shift -= 4) out += "0123456789abcdef"[(v >> shift) & 0xfu];
  return out;
}
}  // namespace detail

/// Compares a checksum of every variable across the ranks of `comm` after every every_n_steps-th
/// training run (DivergenceCheckHook(every_n_steps); no TensorFlow or Horovod counterpart).
/// The variables are those of session.variables() (the model's, the optimizer's slots and
/// non-slot variables, global_step) except hook state ("hooks/..."), which may differ between
/// ranks; each one's checksum is a 64-bit hash of its bytes (bytes_hash), so the check is for bit
/// equality, what BroadcastGlobalVariablesHook and AverageGradientsHook give. Cost per check:
/// one pass over the variables' bytes and one MPI_Allreduce of 2 x (number of variables)
/// uint64; the buffers are allocated in after_create_session, checks allocate nothing (until
/// one fails). With one rank it makes no MPI call.
///
/// Every rank's session must hold it (the check is a collective) and run the same runs; the
/// hook counts training runs (run_context.trains()), not global steps.
/// Errors: std::invalid_argument from the constructor unless every_n_steps > 0;
/// DivergenceError on every rank, naming the first differing variable, when the ranks differ;
/// MpiError naming MPI_Allreduce. `comm` must outlive the hook.
class DivergenceCheckHook {
 public:
  struct Options {
    std::int64_t every_n_steps = 100;
  };

  DivergenceCheckHook(const Communicator& comm, Options options)
      : comm_(&comm), every_n_steps_(options.every_n_steps) {
    if (every_n_steps_ <= 0)
      hookfuse::detail::fail<std::invalid_argument>(
          (hookfuse::detail::ErrorMessage()
           << "DivergenceCheckHook: every_n_steps must be > 0, got " << every_n_steps_)
              .str());
  }

  template <class Session>
  void after_create_session(Session& session) {
    const auto vars = session.variables();
    vars_.clear();
    for (const CheckpointVariable& v : vars)
      if (!v.name.starts_with("hooks/")) vars_.push_back(v);
    hashes_.assign(2 * vars_.size(), 0);
    runs_ = 0;
  }

  void after_run(SessionRunContext& ctx, const SessionRunValues<>&) {
    if (!ctx.trains()) return;
    if (++runs_ % every_n_steps_ != 0) return;
    check(ctx.global_step());
  }

  /// Compares the checksums now (what after_run does every every_n_steps runs); `global_step`
  /// is for the error message. Collective: every rank calls it.
  void check(std::int64_t global_step) {
    for (std::size_t i = 0; i < vars_.size(); ++i) {
      const std::uint64_t h = hash_of(vars_[i]);
      hashes_[2 * i] = h;
      hashes_[2 * i + 1] = ~h;
    }
    if (comm_->size() > 1) comm_->allreduce_max(std::span<std::uint64_t>(hashes_));
    ++checks_;
    std::size_t first = vars_.size(), differing = 0;
    for (std::size_t i = 0; i < vars_.size(); ++i) {
      if (hashes_[2 * i] == ~hashes_[2 * i + 1]) continue;
      if (first == vars_.size()) first = i;
      ++differing;
    }
    if (differing == 0) return;
    const CheckpointVariable& v = vars_[first];
    hookfuse::detail::ErrorMessage m;
    m << "hookfuse: DivergenceCheckHook: the ranks' variables differ after global step "
      << global_step << ": first '" << v.name << "' (" << differing << " of " << vars_.size()
      << " variables differ; rank " << comm_->rank() << " has checksum "
      << detail::hex64(hash_of(v)) << ")";
    hookfuse::detail::fail<DivergenceError>(m.str());
  }

  std::int64_t every_n_steps() const { return every_n_steps_; }
  /// How many checks ran (and passed, or the last one threw).
  std::int64_t checks() const { return checks_; }

 private:
  /// The checksum of one variable's bytes.
  static std::uint64_t hash_of(const CheckpointVariable& v) {
    return detail::bytes_hash(v.data,
                              static_cast<std::size_t>(v.num_elements()) * dtype_size(v.dtype));
  }

  const Communicator* comm_;
  std::int64_t every_n_steps_;
  std::vector<CheckpointVariable> vars_;
  std::vector<std::uint64_t> hashes_;
  std::int64_t runs_ = 0;
  std::int64_t checks_ = 0;
};

}  // namespace hookfuse::distributed
