// hookfuse/data/batch_order.hpp: the epoch, shuffle and batch bookkeeping behind numpy_input_fn
// (which examples the next batch holds), and its options.
//
// Epoch semantics of `Dataset.from_tensor_slices(...).shuffle(n, seed,
// reshuffle_each_iteration=True).batch(batch_size).repeat(num_epochs)`, what numpy_input_fn
// does: each epoch visits every example exactly once, in a fresh permutation when shuffling;
// batches never cross an epoch boundary, so the last batch of an epoch is short when batch_size
// does not divide the example count (10 examples, batch 4: 4, 4, 2, 4, 4, 2, ...).
//
// Sharding (num_shards, shard_index; data-parallel ranks): every shard computes the same
// permutation and the same batches of batch_size examples, the global batches, and takes its
// contiguous slice of each: shard i of N gets rows [i * r / N, (i + 1) * r / N) of a batch of r
// rows. The shards' slices, in shard order, are the global batch, and every shard has as many
// batches as the unsharded input, so all shards end an epoch, and the input, at the same batch;
// a slice may be empty (a batch of r < N rows), and is then still a batch, of 0 rows.
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
  /// Data-parallel input, as `Dataset.shard(num_shards, index)` but slicing each global batch:
  /// `batch_size` is the global batch, and this input yields its shard's contiguous slice of
  /// every global batch, rows [shard_index * r / num_shards, (shard_index + 1) * r / num_shards)
  /// of a batch of r rows (possibly 0 rows). Every shard uses the same seed, so the slices of
  /// the num_shards inputs together are the unsharded input's batches, and every shard yields
  /// the same number of batches. num_shards >= 1; 0 <= shard_index < num_shards.
  std::int64_t num_shards = 1;
  std::int64_t shard_index = 0;
};

}  // namespace hookfuse::data

namespace hookfuse::detail {

/// Which examples each batch holds: the permutation of the current epoch and the position in
/// it. All memory (the permutation) is allocated by the constructor; next() and reset() never
/// allocate.
class BatchOrder {
 public:
  /// Throws std::invalid_argument ("<who>: ...") on num_examples < 0, batch_size <= 0,
  /// num_epochs <= 0, num_shards < 1 or shard_index outside [0, num_shards).
  template <class Scalar>
  BatchOrder(const char* who, std::int64_t num_examples,
             const data::NumpyInputFnOptions<Scalar>& options)
      : n_(num_examples),
        batch_size_(options.batch_size),
        num_epochs_(options.num_epochs),
        shuffle_(options.shuffle),
        seed_(options.seed),
        num_shards_(options.num_shards),
        shard_index_(options.shard_index) {
    if (n_ < 0) fail(who, "num_examples must be >= 0, got " + std::to_string(n_));
    if (batch_size_ <= 0)
      fail(who, "batch_size must be > 0, got " + std::to_string(batch_size_));
    if (num_epochs_ && *num_epochs_ <= 0)
      fail(who, "num_epochs must be > 0 or std::nullopt (forever), got " +
                    std::to_string(*num_epochs_));
    if (num_shards_ < 1) fail(who, "num_shards must be >= 1, got " + std::to_string(num_shards_));
    if (shard_index_ < 0 || shard_index_ >= num_shards_)
      fail(who, "shard_index must be in [0, num_shards) = [0, " + std::to_string(num_shards_) +
                    "), got " + std::to_string(shard_index_));
    order_.resize(static_cast<std::size_t>(n_));
    reset();
  }

  /// Moves to the next batch (this shard's slice of the next global batch, possibly 0 rows);
  /// false at end of input (all epochs delivered, or no examples), after which rows() is 0 and
  /// next() stays false until reset().
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
    const std::int64_t global_rows = batch_size_ < n_ - pos_ ? batch_size_ : n_ - pos_;
    const std::int64_t lo = shard_index_ * global_rows / num_shards_;
    const std::int64_t hi = (shard_index_ + 1) * global_rows / num_shards_;
    begin_ = pos_ + lo;
    rows_ = hi - lo;
    pos_ += global_rows;
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
  /// Rows a batch can hold at most: min(batch_size, num_examples), divided by num_shards and
  /// rounded up (a shard's largest slice).
  std::int64_t capacity() const {
    const std::int64_t global = batch_size_ < n_ ? batch_size_ : n_;
    return (global + num_shards_ - 1) / num_shards_;
  }
  std::int64_t num_shards() const { return num_shards_; }
  std::int64_t shard_index() const { return shard_index_; }
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
  std::int64_t num_shards_;
  std::int64_t shard_index_;
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
