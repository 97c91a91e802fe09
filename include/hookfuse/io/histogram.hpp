// hookfuse/io/histogram.hpp: TensorFlow's histogram with its default bucket layout
// (tensorflow/core/lib/histogram/histogram.cc), as `tf.compat.v1.summary.histogram` fills the
// HistogramProto of a summary.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/summary_proto.hpp"

namespace hookfuse::io {

namespace detail {

/// Builds default_histogram_bucket_limits(). A function that is not constexpr, not a lambda
/// called in place: a lambda is implicitly constexpr and std::vector is constexpr in C++20, so
/// GCC tries to run a call of it without arguments at compile time (for the static variable's
/// initializer, and again when folding) and gives up only after the 1551 push_backs, because the
/// vector's memory outlives the evaluation: 0.6 G front-end instructions in every translation
/// unit including this header (4% of bench/compile/session_step.cpp through the umbrella
/// header).
template <class = void>
std::vector<double> make_default_histogram_bucket_limits() {
  std::vector<double> positive;
  for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) positive.push_back(v);
  positive.push_back(DBL_MAX);
  std::vector<double> all;
  all.reserve(2 * positive.size() + 1);
  for (auto it = positive.rbegin(); it != positive.rend(); ++it) all.push_back(-*it);
  all.push_back(0.0);
  all.insert(all.end(), positive.begin(), positive.end());
  return all;
}

}  // namespace detail

/// TensorFlow's default bucket limits (right edges): the positive edges start at 1e-12 and
/// grow by a factor 1.1 (by repeated multiplication, as TF computes them) while below 1e20,
/// then DBL_MAX; the negative edges mirror them; 0 sits between. 774 edges per side below
/// 1e20, so 2 * 775 + 1 = 1551 limits, from -DBL_MAX to DBL_MAX.
template <class = void>
[[nodiscard]] const std::vector<double>& default_histogram_bucket_limits() {
  static const std::vector<double> limits = detail::make_default_histogram_bucket_limits();
  return limits;
}

/// TensorFlow's `histogram::Histogram` over the default buckets: `add` puts a value in the
/// first bucket whose limit is greater than it (so bucket i holds [limit[i-1], limit[i])) and
/// tracks min, max, count, sum and sum of squares.
template <class = void>
class BasicHistogram {
 public:
  BasicHistogram() : counts_(default_histogram_bucket_limits().size(), 0.0) {}

  void add(double value) {
    const auto& limits = default_histogram_bucket_limits();
    const auto at = std::upper_bound(limits.begin(), limits.end(), value) - limits.begin();
    counts_[static_cast<std::size_t>(at)] += 1.0;
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
    num_ += 1.0;
    sum_ += value;
    sum_squares_ += value * value;
  }

  /// TF's `Histogram::EncodeToProto(proto, preserve_zero_buckets)`. With
  /// `preserve_zero_buckets` false (what the summary op uses), each run of empty buckets is
  /// written as one empty bucket ending at the run's last limit; a histogram with no bucket
  /// written gets one (DBL_MAX, 0). An empty histogram has min DBL_MAX and max -DBL_MAX, as
  /// in TensorFlow.
  [[nodiscard]] HistogramProto to_proto(bool preserve_zero_buckets = false) const {
    const auto& limits = default_histogram_bucket_limits();
    HistogramProto p{min_, max_, num_, sum_, sum_squares_, {}, {}};
    for (std::size_t i = 0; i < counts_.size();) {
      double end = limits[i];
      double count = counts_[i];
      ++i;
      if (!preserve_zero_buckets && count <= 0.0) {
        while (i < counts_.size() && counts_[i] <= 0.0) {
          end = limits[i];
          count = counts_[i];
          ++i;
        }
      }
      p.bucket_limit.push_back(end);
      p.bucket.push_back(count);
    }
    if (p.bucket.empty()) {
      p.bucket_limit.push_back(DBL_MAX);
      p.bucket.push_back(0.0);
    }
    return p;
  }

 private:
  std::vector<double> counts_;
  double min_ = DBL_MAX;
  double max_ = -DBL_MAX;
  double num_ = 0.0;
  double sum_ = 0.0;
  double sum_squares_ = 0.0;
};

/// A class template only so that its member functions compile where they are used
/// (docs/checkpoints.md, "Compile time").
using Histogram = BasicHistogram<void>;

/// The HistogramProto that `tf.compat.v1.summary.histogram(tag, values)` writes for `values`
/// (float or double). Throws ValueError, as TF's HistogramSummary op raises
/// InvalidArgumentError, for a NaN ("Nan in summary histogram for: <tag>") or an infinity.
template <class T>
[[nodiscard]] HistogramProto make_histogram(std::string_view tag, std::span<const T> values) {
  Histogram h;
  for (const T x : values) {
    const auto v = static_cast<double>(x);
    if (std::isnan(v)) {
      hookfuse::detail::fail<ValueError>("Nan in summary histogram for: " + std::string(tag));
    }
    if (std::isinf(v)) {
      hookfuse::detail::fail<ValueError>("Infinity in summary histogram for: " + std::string(tag));
    }
    h.add(v);
  }
  return h.to_proto();
}

/// A histogram Summary.Value `tag` over `values`, in the legacy form of
/// `tf.compat.v1.summary.histogram`: the `histo` field (make_histogram) and no metadata, as TF 1
/// writes it (TensorBoard files it under the "histograms" plugin itself). Throws ValueError for a
/// NaN or an infinity.
template <class T>
[[nodiscard]] SummaryValue histogram_value(std::string_view tag, std::span<const T> values) {
  SummaryValue v;
  v.tag = std::string(tag);
  v.kind = SummaryValue::Kind::histo;
  v.histo = make_histogram(tag, values);
  return v;
}

}  // namespace hookfuse::io
