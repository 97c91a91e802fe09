// hookfuse/data/input_fn.hpp: minibatch input function over uint8 examples (numpy_input_fn).
//
// Mirrors `tf.compat.v1.estimator.inputs.numpy_input_fn(x, y, batch_size, num_epochs, shuffle)`
// with the epoch semantics of its tf.data equivalent
// `Dataset.from_tensor_slices((x, y)).shuffle(n, seed, reshuffle_each_iteration=True)
//         .batch(batch_size).repeat(num_epochs)`:
// each epoch visits every example exactly once, in a fresh permutation when shuffling; batches
// never cross an epoch boundary, so the last batch of an epoch is short when batch_size does
// not divide the example count (10 examples, batch 4: 4, 4, 2, 4, 4, 2, ...). End of input
// (TensorFlow's OutOfRangeError) is `next()` returning false.
#pragma once

#include "hookfuse/detail/eigen.hpp"
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"
#include "hookfuse/data/dataset.hpp"
#include "hookfuse/data/errors.hpp"

namespace hookfuse::detail {

/// A uniform integer in [0, bound) from a 64-bit engine, by rejection (no modulo bias).
/// Written out because std::uniform_int_distribution's algorithm is unspecified and differs
/// between standard libraries; std::mt19937_64's output sequence is fixed by the standard, so
/// this gives the same numbers everywhere.
inline std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t bound) {
  // Reject the lowest (2^64 mod bound) values so that every residue is equally likely.
  const std::uint64_t threshold = (std::uint64_t{0} - bound) % bound;
  for (;;) {
    const std::uint64_t x = rng();
    if (x >= threshold) return x % bound;
  }
}

/// Fisher-Yates shuffle of `v` (Durstenfeld, from the back) driven by uniform_below.
inline void portable_shuffle(std::vector<std::int64_t>& v, std::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_below(rng, i));
    std::swap(v[i - 1], v[j]);
  }
}

}  // namespace hookfuse::detail

namespace hookfuse::data {

/// Options of NumpyInputFn, named after numpy_input_fn's arguments. Use designated
/// initializers: `{.batch_size = 32, .num_epochs = std::nullopt, .shuffle = true}`.
template <class Scalar>
struct NumpyInputFnOptions {
  /// Examples per batch (> 0). TF default 128.
  std::int64_t batch_size = 128;
  /// Passes over the data (> 0), or std::nullopt to repeat forever. TF default 1.
  std::optional<int> num_epochs = 1;
  /// Reshuffle the examples at the start of every epoch; false keeps file order. (TF requires
  /// this argument explicitly; here it defaults to true, the usual training setting.)
  bool shuffle = true;
  /// Seed of the std::mt19937_64 permutation generator: the same seed gives the same batches on
  /// every platform and standard library. (TF's seed=None, nondeterministic, has no equivalent.)
  std::uint64_t seed = 0;
  /// Feature value = pixel * scale; the default maps uint8 0..255 onto [0, 1].
  Scalar scale = Scalar(1) / Scalar(255);
};

/// Yields minibatches of (features, labels) from uint8 examples, converting only the rows of
/// the current batch to `Scalar` (float or double).
///
/// Shapes: features() is rows() x num_features(), row-major, one example per row (rows are the
/// batch); labels() is rows() x 1 int32. rows() == batch_size() except for the last batch of an
/// epoch. All buffers (batch_size x num_features features, batch_size labels, the permutation)
/// are allocated once in the constructor; next(), features(), labels() and reset() never
/// allocate. The maps returned by features()/labels() are valid until the next call to next()
/// or reset().
///
/// Lifetime: the input function keeps pointers to the example data (the Dataset or the raw
/// arrays), not copies; that data must outlive it and stay unchanged.
template <class Scalar>
class NumpyInputFn {
  static_assert(std::is_floating_point_v<Scalar>,
                "NumpyInputFn<Scalar>: Scalar is float or double");

 public:
  using Options = NumpyInputFnOptions<Scalar>;
  using FeatureMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using LabelVector = Eigen::Matrix<std::int32_t, Eigen::Dynamic, 1>;
  using FeatureMap = Eigen::Map<const FeatureMatrix>;
  using LabelMap = Eigen::Map<const LabelVector>;

  /// Batches over `dataset` (images flattened to rows*cols features, label i for image i).
  /// Keeps a pointer into `dataset`, which must outlive this object. Throws
  /// std::invalid_argument on bad options or when the dataset's sizes are inconsistent.
  explicit NumpyInputFn(const Dataset& dataset, const Options& options = {})
      : NumpyInputFn(checked_pixels(dataset), dataset.images.count, dataset.images.features(),
                     dataset.labels.labels.data(), options) {}
  /// A temporary Dataset would dangle: bind it to a variable first.
  explicit NumpyInputFn(const Dataset&& dataset, const Options& options = {}) = delete;

  /// Batches over raw arrays: `features` holds num_examples x num_features uint8 values,
  /// example-major; `labels` holds num_examples class indices, or is nullptr for features only
  /// (numpy_input_fn's y=None; labels() is then empty). The arrays must outlive this object.
  /// Throws std::invalid_argument on negative sizes, a null `features` with examples, a
  /// batch_size <= 0, num_epochs <= 0, or batch buffers too large to index.
  NumpyInputFn(const std::uint8_t* features, std::int64_t num_examples, std::int64_t num_features,
               const std::uint8_t* labels, const Options& options = {})
      : x_(features),
        y_(labels),
        n_(num_examples),
        nf_(num_features),
        batch_size_(options.batch_size),
        num_epochs_(options.num_epochs),
        shuffle_(options.shuffle),
        seed_(options.seed),
        scale_(options.scale) {
    if (n_ < 0 || nf_ < 0) fail("num_examples and num_features must be >= 0");
    if (n_ > 0 && nf_ > 0 && x_ == nullptr) fail("features is null but num_examples > 0");
    if (batch_size_ <= 0) fail("batch_size must be > 0, got " + std::to_string(batch_size_));
    if (num_epochs_ && *num_epochs_ <= 0) {
      fail("num_epochs must be > 0 or std::nullopt (forever), got " + std::to_string(*num_epochs_));
    }
    // Capacity: a batch never holds more than all the examples, so a huge batch_size over a
    // small data set does not allocate a huge buffer.
    capacity_ = batch_size_ < n_ ? batch_size_ : n_;
    if (nf_ > 0 && capacity_ > std::numeric_limits<Eigen::Index>::max() / nf_) {
      fail("batch buffer of " + std::to_string(capacity_) + " x " + std::to_string(nf_) +
           " values is too large");
    }
    features_.resize(capacity_, nf_);
    labels_.resize(y_ != nullptr ? capacity_ : 0);
    order_.resize(static_cast<std::size_t>(n_));
    reset();
  }

  /// Fills the next batch; returns false at end of input (all num_epochs epochs delivered, or
  /// no examples), TensorFlow's OutOfRangeError. After false, rows() is 0 and next() keeps
  /// returning false until reset(). Does not allocate.
  bool next() {
    if (done_) return false;
    if (pos_ == n_) {  // epoch finished (or no examples at all): start the next one, if any
      if (n_ == 0 || (num_epochs_ && epoch_ + 1 >= *num_epochs_)) {
        done_ = true;
        rows_ = 0;
        return false;
      }
      ++epoch_;
      start_epoch();
    }
    rows_ = batch_size_ < n_ - pos_ ? batch_size_ : n_ - pos_;
    for (std::int64_t r = 0; r < rows_; ++r) {
      const std::int64_t example = order_[static_cast<std::size_t>(pos_ + r)];
      const std::uint8_t* src = x_ + example * nf_;
      Scalar* dst = features_.data() + r * nf_;
      for (std::int64_t k = 0; k < nf_; ++k) dst[k] = static_cast<Scalar>(src[k]) * scale_;
      if (y_ != nullptr) labels_.data()[r] = static_cast<std::int32_t>(y_[example]);
    }
    pos_ += rows_;
    return true;
  }

  /// next(), throwing OutOfRangeError("End of sequence") at end of input, like a TF iterator's
  /// get_next().
  void get_next() {
    if (!next()) detail::fail<OutOfRangeError>("End of sequence");
  }

  /// Back to the start of epoch 0 with the RNG reseeded: replays exactly the same batches.
  void reset() {
    rng_.seed(seed_);
    epoch_ = 0;
    rows_ = 0;
    done_ = false;
    start_epoch();
  }

  /// The current batch: rows() x num_features() feature values, pixel * scale, row-major.
  FeatureMap features() const { return FeatureMap(features_.data(), rows_, nf_); }
  /// The current batch's labels, rows() x 1 (0 x 1 when constructed without labels).
  LabelMap labels() const { return LabelMap(labels_.data(), y_ != nullptr ? rows_ : 0); }
  /// Pointers to the batch buffers (capacity rows; the first rows() are the current batch).
  const Scalar* features_data() const { return features_.data(); }
  const std::int32_t* labels_data() const { return labels_.data(); }

  /// Examples in the current batch: batch_size() or fewer at the end of an epoch; 0 before the
  /// first next() and after end of input.
  std::int64_t rows() const { return rows_; }
  std::int64_t num_features() const { return nf_; }
  std::int64_t num_examples() const { return n_; }
  std::int64_t batch_size() const { return batch_size_; }
  /// Rows the buffers hold: min(batch_size, num_examples).
  std::int64_t capacity() const { return capacity_; }
  /// Zero-based epoch of the current batch (the last epoch after end of input).
  int epoch() const { return epoch_; }
  std::optional<int> num_epochs() const { return num_epochs_; }
  bool shuffle() const { return shuffle_; }
  bool has_labels() const { return y_ != nullptr; }
  /// The current epoch's visiting order (example indices; identity when not shuffling).
  const std::vector<std::int64_t>& order() const { return order_; }

 private:
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
    detail::fail<std::invalid_argument>("NumpyInputFn: " + what);
  }

  void start_epoch() {
    std::iota(order_.begin(), order_.end(), std::int64_t{0});
    if (shuffle_) detail::portable_shuffle(order_, rng_);
    pos_ = 0;
  }

  const std::uint8_t* x_;
  const std::uint8_t* y_;
  std::int64_t n_;
  std::int64_t nf_;
  std::int64_t batch_size_;
  std::optional<int> num_epochs_;
  bool shuffle_;
  std::uint64_t seed_;
  Scalar scale_;

  std::int64_t capacity_ = 0;
  FeatureMatrix features_;
  LabelVector labels_;
  std::vector<std::int64_t> order_;
  std::mt19937_64 rng_;
  std::int64_t pos_ = 0;  // next position in order_
  std::int64_t rows_ = 0;
  int epoch_ = 0;
  bool done_ = false;
};

}  // namespace hookfuse::data
