// hookfuse/metrics/reduce.hpp: a streaming metric's local variables summed across processes, so
// that ranks which each evaluate a shard of a data set report the metric of the whole set.
//
// Every metric here is a ratio (or an area) computed from float32 sums: Mean's total and count,
// Accuracy's correct and total, Precision's and Recall's counts, AUC's four confusion counts per
// threshold, MeanPerClassAccuracy's per-class totals. The sums over the shards are the sums over
// the whole set, so value() after the sum is the single process's value (exactly for counts up
// to 2^24, as float32 holds them; a sum of float values only to its rounding, since the order
// of the additions differs). This header knows nothing of MPI: the caller gives the sum, e.g.
// distributed::Communicator::allreduce_sum.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

namespace hookfuse::metrics {

/// A metric whose local variables can be summed across processes: m.for_each_local_variable(f)
/// calls f(std::span<float>) once per local variable, in a fixed order, the same number of
/// floats on every process whose metric was made with the same arguments (num_thresholds,
/// num_classes). Every metric of metrics/ is one.
template <class M>
concept SummableMetric = requires(M& m) {
  m.for_each_local_variable([](std::span<float>) {});
};

/// The number of floats in the local variables of `ms...`.
template <class... Ms>
requires(SummableMetric<std::remove_cvref_t<Ms>>&&...) std::size_t local_variable_size(Ms&&... ms) {
  std::size_t n = 0;
  (ms.for_each_local_variable([&n](std::span<float> v) { n += v.size(); }), ...);
  return n;
}

/// Replaces the local variables of `ms...` by their sums across processes with one call of
/// `sum`: packs them, in order, into `buffer` (resized to local_variable_size(ms...)), calls
/// sum(std::span<float>(buffer)), which must replace each element by its sum over every process
/// (MPI_Allreduce with MPI_SUM, in place), and unpacks the result into the metrics. Afterwards
/// every metric's value() is that of one metric updated with every process's batches. Every
/// process calls it with metrics made alike, in the same order (the sum is collective). The
/// buffer is the caller's so that repeated reductions reuse its storage. Errors: what `sum`
/// throws, with the metrics unchanged.
template <class Sum, class... Ms>
requires(SummableMetric<std::remove_cvref_t<Ms>>&&...) void sum_local_variables(
    Sum&& sum, std::vector<float>& buffer, Ms&&... ms) {
  buffer.resize(local_variable_size(ms...));
  std::size_t at = 0;
  (ms.for_each_local_variable([&](std::span<float> v) {
    std::copy(v.begin(), v.end(), buffer.begin() + static_cast<std::ptrdiff_t>(at));
    at += v.size();
  }),
   ...);
  sum(std::span<float>(buffer));
  at = 0;
  (ms.for_each_local_variable([&](std::span<float> v) {
    std::copy_n(buffer.begin() + static_cast<std::ptrdiff_t>(at), v.size(), v.begin());
    at += v.size();
  }),
   ...);
}

}  // namespace hookfuse::metrics
