// hookfuse/data/input_fn.hpp: minibatches over in-memory arrays, TensorFlow's
// `tf.compat.v1.estimator.inputs.numpy_input_fn(x, y, batch_size, num_epochs, shuffle)`.
//
// NumpyInputFn<X, Y>: one feature array x ([num_examples, num_features] of X: float, double,
// int32 or int64; or uint8 pixels scaled into X) and optional targets y ([num_examples] of Y).
// NumpyColumnsInputFn (data/numpy_columns.hpp, included here): x as a dict of named arrays.
// Epochs, batches and the shuffle are those of data/batch_order.hpp. End of input
// (TensorFlow's OutOfRangeError) is `next()` returning false. docs/inputs.md has the details.
#pragma once

#include "hookfuse/detail/eigen.hpp"
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/data/batch_order.hpp"
#include "hookfuse/data/batch_tensor.hpp"
#include "hookfuse/data/dataset.hpp"
#include "hookfuse/data/errors.hpp"
#include "hookfuse/data/numpy_columns.hpp"

namespace hookfuse::data {

/// Yields minibatches of (features, targets) from in-memory arrays, copying only the rows of the
/// current batch into preallocated buffers.
///
/// Shapes: features() is rows() x num_features() of X, row-major, one example per row (rows are
/// the batch); labels() is rows() x 1 of Y (the targets; 0 x 1 without targets). rows() ==
/// batch_size() except for the last batch of an epoch; with options.num_shards > 1 a batch is
/// this shard's slice of the global batch of batch_size() rows (batch_order.hpp), 0 rows or
/// more. X and Y are float, double, int32 or int64 (Y defaults to int32, class indices). All buffers are allocated in the constructor;
/// next(), features(), labels() and reset() never allocate. The maps returned by
/// features()/labels() are valid until the next call to next() or reset().
///
/// As a session input: `feeds<"x", "labels">(input_fn)`; tensor 0 is the features, tensor 1
/// the targets (num_tensors() is 1 without targets).
///
/// Lifetime: the input function keeps pointers to the example data (the Dataset or the raw
/// arrays), not copies; that data must outlive it and stay unchanged.
template <class X, class Y = std::int32_t>
class NumpyInputFn {
  static_assert(detail::numpy_dtype<X>,
                "NumpyInputFn<X, Y>: X (the features' type) is float, double, int32 or int64");
  static_assert(detail::numpy_dtype<Y>,
                "NumpyInputFn<X, Y>: Y (the targets' type) is float, double, int32 or int64");

 public:
  using Options = NumpyInputFnOptions<X>;
  using FeatureMatrix = Eigen::Matrix<X, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using LabelVector = Eigen::Matrix<Y, Eigen::Dynamic, 1>;
  using FeatureMap = Eigen::Map<const FeatureMatrix>;
  using LabelMap = Eigen::Map<const LabelVector>;

  /// Batches over `dataset` (images flattened to rows*cols features scaled by options.scale,
  /// label i for image i converted to Y). X must be float or double. Keeps a pointer into
  /// `dataset`, which must outlive this object. Throws std::invalid_argument on bad options or
  /// when the dataset's sizes are inconsistent.
  NumpyInputFn(const Dataset& dataset, const Options& options)
      : NumpyInputFn(checked_pixels(dataset), dataset.images.count, dataset.images.features(),
                     dataset.labels.labels.data(), options) {}
  /// A temporary Dataset would dangle: bind it to a variable first.
  NumpyInputFn(const Dataset&& dataset, const Options& options) = delete;

  /// Batches over uint8 arrays (IDX pixels): `features` holds num_examples x num_features
  /// values, example-major, converted to X and multiplied by options.scale; `labels` holds
  /// num_examples class indices converted to Y, or is nullptr for features only. X must be
  /// float or double. The arrays must outlive this object. Throws std::invalid_argument on
  /// negative sizes, a null `features` with examples, batch_size <= 0, num_epochs <= 0, or
  /// batch buffers too large to index.
  NumpyInputFn(const std::uint8_t* features, std::int64_t num_examples, std::int64_t num_features,
               const std::uint8_t* labels, const Options& options)
      : order_(kWho, num_examples, options), nf_(num_features), scale_(options.scale) {
    static_assert(std::is_floating_point_v<X>,
                  "NumpyInputFn: uint8 pixels are scaled into float or double features");
    x8_ = features;
    y8_ = labels;
    allocate(features != nullptr, labels != nullptr);
  }

  /// Batches over arrays of the features' and targets' own types (numpy_input_fn(x, y)):
  /// `features` holds num_examples x num_features values of X, example-major (row-major);
  /// `targets` holds num_examples values of Y, or is nullptr (y=None: features only, for
  /// prediction). Values are copied unchanged. Same lifetime and errors as above.
  NumpyInputFn(const X* features, std::int64_t num_examples, std::int64_t num_features,
               const Y* targets, const Options& options)
      : order_(kWho, num_examples, options), nf_(num_features), scale_(options.scale) {
    x_ = features;
    y_ = targets;
    allocate(features != nullptr, targets != nullptr);
  }
  /// Features only (y=None).
  NumpyInputFn(const X* features, std::int64_t num_examples, std::int64_t num_features,
               const Options& options)
      : NumpyInputFn(features, num_examples, num_features, static_cast<const Y*>(nullptr),
                     options) {}

  /// Fills the next batch; returns false at end of input (all num_epochs epochs delivered, or
  /// no examples), TensorFlow's OutOfRangeError. After false, rows() is 0 and next() keeps
  /// returning false until reset(). Does not allocate.
  bool next() {
    if (!order_.next()) return false;
    if (x8_ != nullptr) {
      hookfuse::detail::gather_rows_scaled(features_.data(), x8_, nf_, scale_, order_);
    } else if (x_ != nullptr) {
      hookfuse::detail::gather_rows(features_.data(), x_, nf_, order_);
    }
    if (y8_ != nullptr) {
      for (std::int64_t r = 0; r < order_.rows(); ++r)
        labels_.data()[r] = static_cast<Y>(y8_[order_.example(r)]);
    } else if (y_ != nullptr) {
      hookfuse::detail::gather_rows(labels_.data(), y_, 1, order_);
    }
    return true;
  }

  /// next(), throwing OutOfRangeError("End of sequence") at end of input, like a TF iterator's
  /// get_next().
  void get_next() {
    if (!next()) hookfuse::detail::fail<OutOfRangeError>("End of sequence");
  }

  /// Back to the start of epoch 0 with the RNG reseeded: replays exactly the same batches.
  void reset() { order_.reset(); }

  /// The current batch: rows() x num_features() feature values, row-major.
  FeatureMap features() const { return FeatureMap(features_.data(), rows(), nf_); }
  /// The current batch's targets, rows() x 1 (0 x 1 when constructed without targets).
  LabelMap labels() const { return LabelMap(labels_.data(), has_labels() ? rows() : 0); }
  /// Pointers to the batch buffers (capacity rows; the first rows() are the current batch).
  const X* features_data() const { return features_.data(); }
  const Y* labels_data() const { return labels_.data(); }

  /// The session's view (autodiff/feeds.hpp): tensor 0 the features, tensor 1 the targets.
  std::int64_t num_tensors() const { return has_labels() ? 2 : 1; }
  template <std::size_t K>
  auto tensor() const {
    static_assert(K < 2, "NumpyInputFn holds two tensors: the features and the targets");
    if constexpr (K == 0) return BatchTensor<X>{features_.data(), nf_};
    else return BatchTensor<Y>{labels_.data(), 1};
  }

  /// Examples in the current batch: batch_size() or fewer at the end of an epoch (a shard: its
  /// slice of that, possibly 0); 0 before the first next() and after end of input.
  std::int64_t rows() const { return order_.rows(); }
  std::int64_t num_features() const { return nf_; }
  std::int64_t num_examples() const { return order_.num_examples(); }
  std::int64_t batch_size() const { return order_.batch_size(); }
  /// Rows the buffers hold: min(batch_size, num_examples), divided by num_shards, rounded up.
  std::int64_t capacity() const { return order_.capacity(); }
  /// The shards the global batches are split into, and this input's (options.num_shards,
  /// options.shard_index).
  std::int64_t num_shards() const { return order_.num_shards(); }
  std::int64_t shard_index() const { return order_.shard_index(); }
  /// Zero-based epoch of the current batch (the last epoch after end of input).
  int epoch() const { return order_.epoch(); }
  std::optional<int> num_epochs() const { return order_.num_epochs(); }
  bool shuffle() const { return order_.shuffle(); }
  bool has_labels() const { return y8_ != nullptr || y_ != nullptr; }
  /// The current epoch's visiting order (example indices; identity when not shuffling).
  const std::vector<std::int64_t>& order() const { return order_.order(); }

 private:
  static constexpr const char* kWho = "NumpyInputFn";

  void allocate(bool has_features, bool has_targets) {
    const std::int64_t n = order_.num_examples();
    if (nf_ < 0) fail("num_features must be >= 0, got " + std::to_string(nf_));
    if (n > 0 && nf_ > 0 && !has_features) fail("features is null but num_examples > 0");
    const std::int64_t capacity = order_.capacity();
    if (nf_ > 0 && capacity > std::numeric_limits<Eigen::Index>::max() / nf_) {
      fail("batch buffer of " + std::to_string(capacity) + " x " + std::to_string(nf_) +
           " values is too large");
    }
    features_.resize(capacity, nf_);
    labels_.resize(has_targets ? capacity : 0);
  }

  static const std::uint8_t* checked_pixels(const Dataset& ds) {
    const auto& im = ds.images;
    if (im.count < 0 || im.rows < 0 || im.cols < 0 ||
        im.pixels.size() != static_cast<std::size_t>(im.count * im.rows * im.cols)) {
      fail("dataset images hold " + std::to_string(im.pixels.size()) + " bytes, expected " +
           std::to_string(im.count) + " x " + std::to_string(im.rows) + " x " +
           std::to_string(im.cols));
    }
    if (ds.labels.count() != im.count) {
      fail("dataset has " + std::to_string(im.count) + " images but " +
           std::to_string(ds.labels.count()) + " labels");
    }
    return im.pixels.data();
  }

  [[noreturn]] static void fail(const std::string& what) {
    hookfuse::detail::BatchOrder::fail(kWho, what);
  }

  hookfuse::detail::BatchOrder order_;
  std::int64_t nf_;
  X scale_;
  const std::uint8_t* x8_ = nullptr;
  const X* x_ = nullptr;
  const std::uint8_t* y8_ = nullptr;
  const Y* y_ = nullptr;
  FeatureMatrix features_;
  LabelVector labels_;
};

}  // namespace hookfuse::data
