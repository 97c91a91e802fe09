// hookfuse/distributed/average_gradients_hook.hpp: data-parallel gradient averaging, Horovod's
// hvd.DistributedOptimizer(optimizer, op=hvd.Average) as a gradient hook.
//
// Every rank runs the same model on its own part of the global batch; in before_apply_gradients
// (session/gradient_event.hpp: after the backward pass, before the update) the hook replaces
// each rank's gradients by their mean over the ranks, so every rank applies the same update and
// the variables stay equal (given equal starting values: BroadcastGlobalVariablesHook). With a
// loss that is a mean over the batch and equal per-rank batches, the mean of the ranks'
// gradients is the gradient of the global batch: N ranks at batch B train as one process at
// batch N * B.
//
// One step: every gradient is copied into one contiguous buffer per scalar type (float, double),
// the buffer is summed over the ranks by ONE MPI_Allreduce(MPI_SUM, in place), divided by the
// number of ranks and copied back. The buffers are allocated on the first step and reused: no
// allocation after it. A model whose variables are all float (or all double) makes one
// MPI_Allreduce per step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/detail/format.hpp"
#include "hookfuse/distributed/communicator.hpp"

namespace hookfuse::distributed {

/// Averages every variable's gradient over the ranks of `comm` each step (hvd.DistributedOptimizer
/// with op=hvd.Average), in before_apply_gradients. The gradients are [R, C] matrices of the
/// variables' shapes, float or double; each becomes (sum over ranks) / comm.size(), computed in
/// the gradient's own type. With one rank it does nothing (no MPI call).
///
/// Being a gradient hook, it makes the session store every gradient (no fused update). Every
/// rank's session must hold this hook and run the same number of steps (a rank that stops early
/// leaves the others waiting in MPI_Allreduce). On the first step the ranks also compare their
/// gradient element counts (one extra MPI_Allreduce(MPI_MAX)): different models throw MpiError
/// on every rank naming both counts instead of exchanging garbage. Errors: MpiError naming
/// MPI_Allreduce; MpiError when a later step has another element count than the first.
/// `comm` must outlive the hook.
class AverageGradientsHook {
 public:
  explicit AverageGradientsHook(const Communicator& comm) : comm_(&comm) {}

  template <class Gradients>
  void before_apply_gradients(Gradients& gradients) {
    if (comm_->size() == 1) return;
    if (!sized_) size_buffers(gradients);
    std::size_t nf = 0, nd = 0;
    gradients.for_each([&](const auto& g, std::string_view name) {
      using S = typename std::remove_cvref_t<decltype(g)>::Scalar;
      if constexpr (std::is_same_v<S, float>) pack(floats_, nf, g, name);
      else pack(doubles_, nd, g, name);
    });
    if (nf != floats_.size() || nd != doubles_.size()) changed_count();
    comm_->allreduce_average(std::span<float>(floats_));
    comm_->allreduce_average(std::span<double>(doubles_));
    nf = 0;
    nd = 0;
    gradients.for_each([&](auto& g, std::string_view) {
      using S = typename std::remove_cvref_t<decltype(g)>::Scalar;
      if constexpr (std::is_same_v<S, float>) unpack(floats_, nf, g);
      else unpack(doubles_, nd, g);
    });
    ++steps_;
  }

  /// The number of float and double gradient elements exchanged per step (0 before the first).
  std::size_t float_elements() const { return floats_.size(); }
  std::size_t double_elements() const { return doubles_.size(); }
  /// How many steps averaged their gradients (steps with one rank are not counted).
  std::int64_t steps() const { return steps_; }
  const Communicator& communicator() const { return *comm_; }

 private:
  template <class Gradients>
  void size_buffers(Gradients& gradients) {
    std::size_t nf = 0, nd = 0;
    gradients.for_each([&](const auto& g, std::string_view) {
      using S = typename std::remove_cvref_t<decltype(g)>::Scalar;
      static_assert(std::is_same_v<S, float> || std::is_same_v<S, double>,
                    "hookfuse: AverageGradientsHook averages float and double gradients");
      if constexpr (std::is_same_v<S, float>) nf += static_cast<std::size_t>(g.size());
      else nd += static_cast<std::size_t>(g.size());
    });
    // Every rank must exchange the same counts: max(n) == n and max(-n) == -n on every rank
    // exactly when all ranks agree.
    std::int64_t counts[4] = {static_cast<std::int64_t>(nf), -static_cast<std::int64_t>(nf),
                              static_cast<std::int64_t>(nd), -static_cast<std::int64_t>(nd)};
    comm_->allreduce_max(std::span<std::int64_t>(counts));
    if (counts[0] != -counts[1] || counts[2] != -counts[3])
      hookfuse::detail::fail<MpiError>(
          (hookfuse::detail::ErrorMessage()
           << "hookfuse: AverageGradientsHook: the ranks' gradients differ in size (this rank, "
           << comm_->rank() << ", has " << nf << " float and " << nd
           << " double elements; the ranks range over [" << -counts[1] << ", " << counts[0]
           << "] float and [" << -counts[3] << ", " << counts[2]
           << "] double): every rank must train the same model")
              .str());
    floats_.assign(nf, 0.0f);
    doubles_.assign(nd, 0.0);
    sized_ = true;
  }
  template <class T, class G>
  void pack(std::vector<T>& buffer, std::size_t& at, const G& g, std::string_view name) {
    const auto n = static_cast<std::size_t>(g.size());
    if (at + n > buffer.size()) changed_count(name);
    const T* src = g.data();  // an Eigen::Map over a contiguous gradient
    for (std::size_t i = 0; i < n; ++i) buffer[at + i] = src[i];
    at += n;
  }
  template <class T, class G>
  static void unpack(const std::vector<T>& buffer, std::size_t& at, G& g) {
    const auto n = static_cast<std::size_t>(g.size());
    T* dst = g.data();
    for (std::size_t i = 0; i < n; ++i) dst[i] = buffer[at + i];
    at += n;
  }
  [[noreturn]] void changed_count(std::string_view name = {}) const {
    auto m = hookfuse::detail::ErrorMessage();
    m << "hookfuse: AverageGradientsHook: the gradients hold another number of elements than on "
         "the first step ("
      << floats_.size() << " float, " << doubles_.size() << " double)";
    if (!name.empty()) m << " at variable '" << name << "'";
    m << ": the model's variables must keep their shapes";
    hookfuse::detail::fail<MpiError>(m.str());
  }

  const Communicator* comm_;
  std::vector<float> floats_;
  std::vector<double> doubles_;
  bool sized_ = false;
  std::int64_t steps_ = 0;
};

}  // namespace hookfuse::distributed
