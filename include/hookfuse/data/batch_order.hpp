// hookfuse/data/batch_order.hpp: the epoch, shuffle and batch bookkeeping behind numpy_input_fn
// (which examples the next batch holds), and its options.
//
// Epoch semantics of `Dataset.from_tensor_slices(...).shuffle(n, seed,
// reshuffle_each_iteration=True).batch(batch_size).repeat(num_epochs)`, what numpy_input_fn
// does: each epoch visits every example exactly once, in a fresh permutation when shuffling;
// batches never cross an epoch boundary, so the last batch of an epoch is short when batch_size
// does not divide the example count (10 examples, batch 4: 4, 4, 2, 4, 4, 2, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hookfuse/config.hpp"

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

template <class U>
inline constexpr bool always_false = false;

/// An option without a default: leaving it out of a designated initializer is a compile error
/// with the message below (TensorFlow's numpy_input_fn has no default for `shuffle`).
template <class T>
struct RequiredOption {
  T value;
  constexpr RequiredOption(T v) : value(v) {}  // NOLINT: `.shuffle = true`
  template <class U = void>
  RequiredOption() : value() {
    static_assert(always_false<U>,
                  "hookfuse: NumpyInputFn options: `.shuffle` is required (true to reshuffle "
                  "every epoch, false for array order), as numpy_input_fn's shuffle argument");
  }
  constexpr operator T() const { return value; }  // NOLINT
};

}  // namespace hookfuse::detail

namespace hookfuse::data {

/// Options of the numpy_input_fn inputs, named after its arguments. Use designated
/// initializers: `{.batch_size = 32, .num_epochs = std::nullopt, .shuffle = true}`.
/// `shuffle` must be given; leaving it out does not compile.
template <class Scalar>
struct NumpyInputFnOptions {
  /// Examples per batch (> 0). TF default 128.
  std::int64_t batch_size = 128;
  /// Passes over the data (> 0), or std::nullopt to repeat forever. TF default 1.
  std::optional<int> num_epochs = 1;
  /// Reshuffle the examples at the start of every epoch; false keeps array order. Required, as
  /// in TensorFlow.
  hookfuse::detail::RequiredOption<bool> shuffle;
  /// Seed of the std::mt19937_64 permutation generator: the same seed gives the same batches on
  /// every platform and standard library. (TF's seed=None, nondeterministic, has no equivalent.)
  std::uint64_t seed = 0;
  /// For uint8 sources only (IDX images): feature value = pixel * scale; the default maps
  /// 0..255 onto [0, 1]. Ignored for arrays of the feature type.
  Scalar scale = Scalar(1) / Scalar(255);
};

}  // namespace hookfuse::data

namespace hookfuse::detail {

/// Which examples each batch holds: the permutation of the current epoch and the position in
/// it. All memory (the permutation) is allocated by the constructor; next() and reset() never
/// allocate.
class BatchOrder {
 public:
  /// Throws std::invalid_argument ("<who>: ...") on num_examples < 0, batch_size <= 0 or
  /// num_epochs <= 0.
  template <class Scalar>
  BatchOrder(const char* who, std::int64_t num_examples,
             const data::NumpyInputFnOptions<Scalar>& options)
      : n_(num_examples),
        batch_size_(options.batch_size),
        num_epochs_(options.num_epochs),
        shuffle_(options.shuffle),
        seed_(options.seed) {
    if (n_ < 0) fail(who, "num_examples must be >= 0, got " + std::to_string(n_));
    if (batch_size_ <= 0)
      fail(who, "batch_size must be > 0, got " + std::to_string(batch_size_));
    if (num_epochs_ && *num_epochs_ <= 0)
      fail(who, "num_epochs must be > 0 or std::nullopt (forever), got " +
                    std::to_string(*num_epochs_));
    order_.resize(static_cast<std::size_t>(n_));
    reset();
  }

  /// Moves to the next batch; false at end of input (all epochs delivered, or no examples),
  /// after which rows() is 0 and next() stays false until reset().
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
    begin_ = pos_;
    rows_ = batch_size_ < n_ - pos_ ? batch_size_ : n_ - pos_;
    pos_ += rows_;
    return true;
  }

  /// Back to the start of epoch 0 with the RNG reseeded: the same batches again.
  void reset() {
    rng_.seed(seed_);
    epoch_ = 0;
    rows_ = 0;
    done_ = false;
    start_epoch();
  }

  /// The example in row r (< rows()) of the current batch.
  std::int64_t example(std::int64_t r) const {
    return order_[static_cast<std::size_t>(begin_ + r)];
  }
  std::int64_t rows() const { return rows_; }
  std::int64_t num_examples() const { return n_; }
  std::int64_t batch_size() const { return batch_size_; }
  /// Rows a batch can hold at most: min(batch_size, num_examples).
  std::int64_t capacity() const { return batch_size_ < n_ ? batch_size_ : n_; }
  int epoch() const { return epoch_; }
  std::optional<int> num_epochs() const { return num_epochs_; }
  bool shuffle() const { return shuffle_; }
  const std::vector<std::int64_t>& order() const { return order_; }

  [[noreturn]] static void fail(const char* who, const std::string& what) {
    detail::fail<std::invalid_argument>(std::string(who) + ": " + what);
  }

 private:
  void start_epoch() {
    std::iota(order_.begin(), order_.end(), std::int64_t{0});
    if (shuffle_) portable_shuffle(order_, rng_);
    pos_ = 0;
  }

  std::int64_t n_;
  std::int64_t batch_size_;
  std::optional<int> num_epochs_;
  bool shuffle_;
  std::uint64_t seed_;
  std::vector<std::int64_t> order_;
  std::mt19937_64 rng_;
  std::int64_t pos_ = 0;    // next position in order_
  std::int64_t begin_ = 0;  // position of the current batch's first row
  std::int64_t rows_ = 0;
  int epoch_ = 0;
  bool done_ = false;
};

/// Copies the current batch's rows of a [num_examples, cols] array into `dst` (row-major).
template <class T>
void gather_rows(T* dst, const T* src, std::int64_t cols, const BatchOrder& order) {
  for (std::int64_t r = 0; r < order.rows(); ++r) {
    const T* from = src + order.example(r) * cols;
    T* to = dst + r * cols;
    for (std::int64_t k = 0; k < cols; ++k) to[k] = from[k];
  }
}

/// The rows of a uint8 array converted to `T`, times `scale`.
template <class T>
void gather_rows_scaled(T* dst, const std::uint8_t* src, std::int64_t cols, T scale,
                        const BatchOrder& order) {
  for (std::int64_t r = 0; r < order.rows(); ++r) {
    const std::uint8_t* from = src + order.example(r) * cols;
    T* to = dst + r * cols;
    for (std::int64_t k = 0; k < cols; ++k) to[k] = static_cast<T>(from[k]) * scale;
  }
}

}  // namespace hookfuse::detail
