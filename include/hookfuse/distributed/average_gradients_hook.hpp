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
// copied back. The buffers are allocated on the first step and reused: no allocation after it. A
// model whose variables are all float (or all double) makes one MPI_Allreduce per step.
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
      : comm_(&comm), options_(options) {}

  template <class Gradients>
  void before_apply_gradients(Gradients& gradients) {
    if (comm_->size() == 1) return;
    if (!sized_) size_buffers(gradients);
    const std::int64_t rows = options_.weight_by_rows ? gradients.batch_rows() : 1;
    if (rows < 0 || rows > (std::int64_t{1} << 24)) too_many_rows(rows);
    std::size_t nf = 0, nd = 0;
    gradients.for_each([&](const auto& g, std::string_view name) {
      using S = typename std::remove_cvref_t<decltype(g)>::Scalar;
      if constexpr (std::is_same_v<S, float>) pack(floats_, nf, g, rows, name);
      else pack(doubles_, nd, g, rows, name);
    });
    if (nf != float_grads_ || nd != double_grads_) changed_count();
    if (nf > 0) floats_[nf] = static_cast<float>(rows);
    if (nd > 0) doubles_[nd] = static_cast<double>(rows);
    comm_->allreduce_sum(std::span<float>(floats_));
    comm_->allreduce_sum(std::span<double>(doubles_));
    const bool empty = (nf > 0 && floats_[nf] == 0.0f) || (nd > 0 && doubles_[nd] == 0.0);
    if (empty) ++empty_steps_;
    nf = 0;
    nd = 0;
    gradients.for_each([&](auto& g, std::string_view) {
      using S = typename std::remove_cvref_t<decltype(g)>::Scalar;
      if constexpr (std::is_same_v<S, float>) unpack(floats_, nf, g);
      else unpack(doubles_, nd, g);
    });
    ++steps_;
  }

  /// The number of float and double gradient elements exchanged per step (0 before the first);
  /// a type that has any sends one more element, the rows.
  std::size_t float_elements() const { return float_grads_; }
  std::size_t double_elements() const { return double_grads_; }
  /// How many steps averaged their gradients (steps with one rank are not counted).
  std::int64_t steps() const { return steps_; }
  /// How many of those steps had 0 rows on every rank, and so set the gradients to 0.
  std::int64_t empty_steps() const { return empty_steps_; }
  const AverageGradientsOptions& options() const { return options_; }
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
    float_grads_ = nf;
    double_grads_ = nd;
    floats_.assign(nf + weight_slot(nf), 0.0f);
    doubles_.assign(nd + weight_slot(nd), 0.0);
    sized_ = true;
  }
  // The element after a type's gradients that holds the rows (none for a type with no gradient).
  static std::size_t weight_slot(std::size_t n) { return n > 0 ? 1 : 0; }
  template <class T, class G>
  void pack(std::vector<T>& buffer, std::size_t& at, const G& g, std::int64_t rows,
            std::string_view name) {
    const auto n = static_cast<std::size_t>(g.size());
    if (at + n + 1 > buffer.size()) changed_count(name);
    const T* src = g.data();  // an Eigen::Map over a contiguous gradient
    if (rows == 0) {
      for (std::size_t i = 0; i < n; ++i) buffer[at + i] = T(0);  // not 0 * g: g may be NaN
    } else {
      const T w = static_cast<T>(rows);
      for (std::size_t i = 0; i < n; ++i) buffer[at + i] = w * src[i];
    }
    at += n;
  }
  // g = the summed w_r * g_r over the summed w_r, the buffer's element after the gradients; 0
  // when that total is 0 (every rank's batch empty).
  template <class T, class G>
  static void unpack(const std::vector<T>& buffer, std::size_t& at, G& g) {
    const auto n = static_cast<std::size_t>(g.size());
    const T total = buffer.back();
    T* dst = g.data();
    if (total == T(0)) {
      for (std::size_t i = 0; i < n; ++i) dst[i] = T(0);
    } else {
      for (std::size_t i = 0; i < n; ++i) dst[i] = buffer[at + i] / total;
    }
    at += n;
  }
  [[noreturn]] static void too_many_rows(std::int64_t rows) {
    hookfuse::detail::fail<MpiError>(
        (hookfuse::detail::ErrorMessage()
         << "hookfuse: AverageGradientsHook: a batch of " << rows
         << " rows; the rows weighting counts 0 to 16777216 (2^24) rows per rank exactly")
            .str());
  }
  [[noreturn]] void changed_count(std::string_view name = {}) const {
    auto m = hookfuse::detail::ErrorMessage();
    m << "hookfuse: AverageGradientsHook: the gradients hold another number of elements than on "
         "the first step ("
      << float_grads_ << " float, " << double_grads_ << " double)";
    if (!name.empty()) m << " at variable '" << name << "'";
    m << ": the model's variables must keep their shapes";
    hookfuse::detail::fail<MpiError>(m.str());
  }

  const Communicator* comm_;
  AverageGradientsOptions options_;
  std::vector<float> floats_;
  std::vector<double> doubles_;
  std::size_t float_grads_ = 0, double_grads_ = 0;  // gradient elements, without the rows
  bool sized_ = false;
  std::int64_t steps_ = 0;
  std::int64_t empty_steps_ = 0;
};

}  // namespace hookfuse::distributed
