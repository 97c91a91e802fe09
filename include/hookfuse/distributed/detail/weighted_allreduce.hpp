// hookfuse/distributed/detail/weighted_allreduce.hpp: the weighted average over the ranks that
// AverageGradientsHook (of the gradients) and AverageVariablesHook (of the updated values) make
// each step: every rank's tensors times its weight w_r, summed over the ranks by one in-place
// MPI_Allreduce per scalar type, divided by the sum of the weights.
//
// Each tensor of `tensors.for_each(f(tensor, name))` is copied, times w_r, into one contiguous
// buffer per scalar type (float, double), followed by one element holding w_r; the buffers are
// summed over the ranks with one MPI_Allreduce(MPI_IN_PLACE, MPI_SUM) each, and each tensor
// becomes its summed part over the summed weight. The buffers are sized on the first call (the
// ranks then also compare their element counts, one MPI_Allreduce(MPI_MAX), and all throw
// MpiError when they differ) and reused: no allocation after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hookfuse/detail/format.hpp"
#include "hookfuse/distributed/communicator.hpp"

namespace hookfuse::distributed::detail {

/// What a step does when the weights sum to 0 (every rank's batch empty).
enum class ZeroTotal {
  zero,  // every tensor becomes 0 (AverageGradientsHook: a zero gradient)
  keep   // every tensor keeps this rank's values (AverageVariablesHook)
};

/// The buffers and counts of one hook's weighted averages. `hook` names the hook in messages
/// ("AverageGradientsHook"), `what` the tensors ("gradients").
class WeightedAllreduce {
 public:
  WeightedAllreduce(const Communicator& comm, std::string_view hook, std::string_view what)
      : comm_(&comm), hook_(hook), what_(what) {}

  /// Replaces every tensor of `tensors` by sum_r(w_r * t_r) / sum_r(w_r) over the ranks; a rank
  /// with w_r = 0 adds exactly 0 (not 0 * t, which is NaN for a NaN tensor). Returns false when
  /// the weights sum to 0 (the tensors are then as `on_zero` says). Collective. Errors: MpiError
  /// naming MPI_Allreduce; MpiError when the ranks' element counts differ (first call) or this
  /// rank's count changed since the first call; MpiError on this rank alone when `weight` is
  /// outside [0, 2^24] (what a float counts exactly).
  template <class Tensors>
  bool average(Tensors& tensors, std::int64_t weight, ZeroTotal on_zero) {
    if (weight < 0 || weight > (std::int64_t{1} << 24)) bad_weight(weight);
    if (!sized_) size_buffers(tensors);
    std::size_t nf = 0, nd = 0;
    tensors.for_each([&](const auto& t, std::string_view name) {
      using S = typename std::remove_cvref_t<decltype(t)>::Scalar;
      if constexpr (std::is_same_v<S, float>)
        pack(floats_, nf, t, weight, name);
      else
        pack(doubles_, nd, t, weight, name);
    });
    if (nf != floats_n_ || nd != doubles_n_) changed_count();
    if (nf > 0) floats_[nf] = static_cast<float>(weight);
    if (nd > 0) doubles_[nd] = static_cast<double>(weight);
    comm_->allreduce_sum(std::span<float>(floats_));
    comm_->allreduce_sum(std::span<double>(doubles_));
    const bool empty = (nf > 0 && floats_[nf] == 0.0f) || (nd > 0 && doubles_[nd] == 0.0);
    if (empty && on_zero == ZeroTotal::keep) return false;
    nf = 0;
    nd = 0;
    tensors.for_each([&](auto& t, std::string_view) {
      using S = typename std::remove_cvref_t<decltype(t)>::Scalar;
      if constexpr (std::is_same_v<S, float>)
        unpack(floats_, nf, t);
      else
        unpack(doubles_, nd, t);
    });
    return !empty;
  }

  /// The float and double elements exchanged per call (0 before the first), without the weight.
  std::size_t float_elements() const { return floats_n_; }
  std::size_t double_elements() const { return doubles_n_; }
  const Communicator& communicator() const { return *comm_; }

 private:
  template <class Tensors>
  void size_buffers(Tensors& tensors) {
    std::size_t nf = 0, nd = 0;
    tensors.for_each([&](const auto& t, std::string_view) {
      using S = typename std::remove_cvref_t<decltype(t)>::Scalar;
      static_assert(std::is_same_v<S, float> || std::is_same_v<S, double>,
                    "hookfuse: the ranks' average is of float and double tensors");
      if constexpr (std::is_same_v<S, float>)
        nf += static_cast<std::size_t>(t.size());
      else
        nd += static_cast<std::size_t>(t.size());
    });
    // Every rank must exchange the same counts: max(n) == n and max(-n) == -n on every rank
    // exactly when all ranks agree.
    std::int64_t counts[4] = {static_cast<std::int64_t>(nf), -static_cast<std::int64_t>(nf),
                              static_cast<std::int64_t>(nd), -static_cast<std::int64_t>(nd)};
    comm_->allreduce_max(std::span<std::int64_t>(counts));
    if (counts[0] != -counts[1] || counts[2] != -counts[3])
      hookfuse::detail::fail<MpiError>(
          (hookfuse::detail::ErrorMessage()
           << "hookfuse: " << hook_ << ": the ranks' " << what_ << " differ in size (this rank, "
           << comm_->rank() << ", has " << nf << " float and " << nd
           << " double elements; the ranks range over [" << -counts[1] << ", " << counts[0]
           << "] float and [" << -counts[3] << ", " << counts[2]
           << "] double): every rank must train the same model")
              .str());
    floats_n_ = nf;
    doubles_n_ = nd;
    // One element after a type's tensors holds the weight (none for a type with no tensor).
    floats_.assign(nf + (nf > 0 ? 1 : 0), 0.0f);
    doubles_.assign(nd + (nd > 0 ? 1 : 0), 0.0);
    sized_ = true;
  }
  template <class T, class M>
  void pack(std::vector<T>& buffer, std::size_t& at, const M& t, std::int64_t weight,
            std::string_view name) {
    const auto n = static_cast<std::size_t>(t.size());
    if (at + n + 1 > buffer.size()) changed_count(name);
    const T* src = t.data();  // an Eigen::Map over contiguous storage
    if (weight == 0) {
      for (std::size_t i = 0; i < n; ++i) buffer[at + i] = T(0);  // not 0 * t: t may be NaN
    } else {
      const T w = static_cast<T>(weight);
      for (std::size_t i = 0; i < n; ++i) buffer[at + i] = w * src[i];
    }
    at += n;
  }
  // t = the summed w_r * t_r over the summed w_r, the buffer's last element; 0 when that total
  // is 0.
  template <class T, class M>
  static void unpack(const std::vector<T>& buffer, std::size_t& at, M& t) {
    const auto n = static_cast<std::size_t>(t.size());
    const T total = buffer.back();
    T* dst = t.data();
    if (total == T(0)) {
      for (std::size_t i = 0; i < n; ++i) dst[i] = T(0);
    } else {
      for (std::size_t i = 0; i < n; ++i) dst[i] = buffer[at + i] / total;
    }
    at += n;
  }
  [[noreturn]] void bad_weight(std::int64_t weight) const {
    hookfuse::detail::fail<MpiError>(
        (hookfuse::detail::ErrorMessage()
         << "hookfuse: " << hook_ << ": a batch of " << weight
         << " rows; the rows weighting counts 0 to 16777216 (2^24) rows per rank exactly")
            .str());
  }
  [[noreturn]] void changed_count(std::string_view name = {}) const {
    auto m = hookfuse::detail::ErrorMessage();
    m << "hookfuse: " << hook_ << ": the " << what_
      << " hold another number of elements than on the first step (" << floats_n_ << " float, "
      << doubles_n_ << " double)";
    if (!name.empty()) m << " at '" << name << "'";
    m << ": the model's variables must keep their shapes";
    hookfuse::detail::fail<MpiError>(m.str());
  }

  const Communicator* comm_;
  std::string_view hook_, what_;
  std::vector<float> floats_;
  std::vector<double> doubles_;
  std::size_t floats_n_ = 0, doubles_n_ = 0;  // tensor elements, without the weight
  bool sized_ = false;
};

}  // namespace hookfuse::distributed::detail
