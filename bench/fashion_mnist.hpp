// bench/fashion_mnist.hpp: the Fashion-MNIST epoch shared by bench/epoch.cpp and the peers in
// bench/peers/: where the data is found, the batch order, the FLOPs of an epoch, and one test-set
// evaluator that every implementation's trained weights go through.
//
// The epoch: the 60,000 training images once at batch 32, SGD 0.1, in the order of
// hookfuse::data::NumpyInputFn<float> {.batch_size = 32, .num_epochs = 1, .shuffle = true,
// .seed = 7} (the order examples/fashion_mnist uses), from hookfuse_bench::InitialWeights.
#pragma once

#include <benchmark/benchmark.h>

#include "hookfuse/detail/eigen.hpp"  // Eigen, GCC 12 AVX-512 false positive silenced
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <hookfuse/data/idx.hpp>
#include <hookfuse/data/input_fn.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "mlp.hpp"
#include "peak.hpp"

namespace hookfuse_bench {

constexpr std::int64_t kEpochBatch = 32;
constexpr float kEpochLearningRate = 0.1f;
constexpr std::uint64_t kEpochSeed = 7;

/// The four Fashion-MNIST files, loaded once per process.
struct FashionMnist {
  hookfuse::data::Dataset train, test;
};

/// The directories searched for the Fashion-MNIST IDX files: $HOOKFUSE_FASHION_MNIST_DIR alone
/// when it is set; otherwise <HOOKFUSE_FIXTURES_DIR>/idx and <HOOKFUSE_FIXTURES_DIR> when the
/// build defines HOOKFUSE_FIXTURES_DIR (the fixtures hold only a 100-image test subset today, so
/// these match only once the full set is placed there), then Debian's dataset-fashion-mnist
/// folder.
inline std::vector<std::filesystem::path> fashion_mnist_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("HOOKFUSE_FASHION_MNIST_DIR"); env != nullptr && *env != 0) {
    dirs.emplace_back(env);
    return dirs;
  }
#ifdef HOOKFUSE_FIXTURES_DIR
  dirs.push_back(std::filesystem::path(HOOKFUSE_FIXTURES_DIR) / "idx");
  dirs.emplace_back(HOOKFUSE_FIXTURES_DIR);
#endif
  dirs.emplace_back(hookfuse::data::default_fashion_mnist_dir);
  return dirs;
}

/// The first directory of fashion_mnist_dirs() holding the training images (raw or .gz).
inline std::optional<std::filesystem::path> find_fashion_mnist_dir() {
  for (const auto& dir : fashion_mnist_dirs()) {
    std::error_code ec;
    if (std::filesystem::exists(dir / "train-images-idx3-ubyte", ec) ||
        std::filesystem::exists(dir / "train-images-idx3-ubyte.gz", ec))
      return dir;
  }
  return std::nullopt;
}

/// The data set, loaded on first use; nullptr when it is absent or unreadable, with the reason
/// (naming every path tried) in `*error`.
inline const FashionMnist* fashion_mnist(std::string* error) {
  static std::string failure;
  static const std::optional<FashionMnist> data = []() -> std::optional<FashionMnist> {
    const auto dir = find_fashion_mnist_dir();
    if (!dir) {
      failure = "Fashion-MNIST not found: no train-images-idx3-ubyte[.gz] in";
      for (const auto& d : fashion_mnist_dirs()) failure += " " + d.string();
      failure += " (set HOOKFUSE_FASHION_MNIST_DIR, or apt-get install dataset-fashion-mnist)";
      return std::nullopt;
    }
    try {
      return FashionMnist{hookfuse::data::load_fashion_mnist(*dir, hookfuse::data::Split::train),
                          hookfuse::data::load_fashion_mnist(*dir, hookfuse::data::Split::test)};
    } catch (const std::exception& e) {
      failure = e.what();
      return std::nullopt;
    }
  }();
  if (!data) *error = failure;
  return data ? &*data : nullptr;
}

/// The data set for an epoch benchmark, or nullptr after state.SkipWithError(reason).
inline const FashionMnist* fashion_mnist_or_skip(benchmark::State& state) {
  std::string error;
  const FashionMnist* data = fashion_mnist(&error);
  if (data == nullptr) state.SkipWithError(error.c_str());
  return data;
}

/// The epoch's input: batch 32, one epoch, shuffled with seed 7.
inline hookfuse::data::NumpyInputFn<float> epoch_input(const FashionMnist& data) {
  return hookfuse::data::NumpyInputFn<float>(
      data.train,
      {.batch_size = kEpochBatch, .num_epochs = 1, .shuffle = true, .seed = kEpochSeed});
}

/// Steps in one epoch (1875 for 60,000 images at batch 32).
inline std::int64_t epoch_steps(const FashionMnist& data) {
  return (data.train.size() + kEpochBatch - 1) / kEpochBatch;
}

/// FLOPs of one epoch: mlp_step_flops summed over its batches (the last may be short).
inline double epoch_flops(const FashionMnist& data) {
  const std::int64_t n = data.train.size();
  return mlp_step_flops(kEpochBatch) * static_cast<double>(n / kEpochBatch) +
         mlp_step_flops(n % kEpochBatch);
}

/// The parameters of a trained model in InitialWeights' layout: w1 [784, 256], w2 [256, 10]
/// (rows are inputs), b1 [256], b2 [10].
struct MlpParams {
  RowMatrix w1, w2;
  Eigen::RowVectorXf b1, b2;
};

/// Fraction of the 10,000 test images whose largest logit (the first, on ties) is the label,
/// for the parameters `p`, computed with Eigen in batches of 1000: the same evaluator for every
/// implementation, so accuracies differ only through the trained weights.
inline double test_accuracy(const FashionMnist& data, const MlpParams& p) {
  hookfuse::data::NumpyInputFn<float> test(data.test,
                                           {.batch_size = 1000, .num_epochs = 1, .shuffle = false});
  RowMatrix h, z;
  std::int64_t hits = 0, seen = 0;
  while (test.next()) {
    h.noalias() = test.features() * p.w1;
    h = (h.rowwise() + p.b1).cwiseMax(0.f);
    z.noalias() = h * p.w2;
    z.rowwise() += p.b2;
    const auto labels = test.labels();
    for (Eigen::Index i = 0; i < z.rows(); ++i) {
      Eigen::Index best = 0;
      z.row(i).maxCoeff(&best);
      hits += best == labels(i) ? 1 : 0;
    }
    seen += test.rows();
  }
  return seen > 0 ? static_cast<double>(hits) / static_cast<double>(seen) : 0.0;
}

/// The timing counters of an epoch benchmark (one iteration = one epoch): "s/epoch", and
/// "GFLOP/s" and "peak" (report_flops). Call right after the timed loop, before evaluating;
/// `start` is taken just before it.
inline void report_epoch(benchmark::State& state, const FashionMnist& data,
                         std::chrono::steady_clock::time_point start) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report_flops(state, epoch_flops(data), start);
  state.counters["s/epoch"] = seconds / static_cast<double>(state.iterations());
}

}  // namespace hookfuse_bench
