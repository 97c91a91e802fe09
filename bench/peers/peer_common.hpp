// bench/peers/peer_common.hpp: what every peer binary (torch_mlp, dlib_mlp) shares: the startup
// self-check that the peer trains exactly the benchmark model, and the BLAS library the process
// has actually loaded.
//
// The self-check trains the peer and hookfuse_bench::HandwrittenMlp side by side from
// InitialWeights on one RandomBatch: the loss of every step and the final parameters must agree
// to kTolerance (relative), or the binary exits before any benchmark runs, so a wrong peer is
// never benchmarked.
#pragma once

#include <benchmark/benchmark.h>
#include <link.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>

#include "../fashion_mnist.hpp"
#include "../mlp.hpp"

namespace hookfuse_bench {

/// Relative tolerance of the self-check: on each step's loss, and on each parameter tensor
/// (max |peer - reference| over max |reference|).
constexpr double kTolerance = 1e-4;
/// What the self-check trains: 20 SGD steps at learning rate 0.1, at batch 1 and at batch 32.
constexpr int kSelfCheckSteps = 20;
constexpr float kSelfCheckLearningRate = 0.1f;
constexpr Eigen::Index kSelfCheckBatches[] = {1, 32};

namespace detail {

inline double max_relative_difference(const Eigen::Ref<const Eigen::MatrixXf>& got,
                                      const Eigen::Ref<const Eigen::MatrixXf>& want) {
  const double scale = std::max(static_cast<double>(want.cwiseAbs().maxCoeff()), 1e-30);
  return static_cast<double>((got - want).cwiseAbs().maxCoeff()) / scale;
}

}  // namespace detail

/// Runs `steps` SGD steps (learning rate `lr`) of the peer and of HandwrittenMlp<false> on
/// RandomBatch(batch). `step()` performs one step of the peer on that batch and returns its
/// loss; `params()` returns the peer's parameters (MlpParams layout). Exits with status 1 and a
/// message on stderr naming `binary` at the first disagreement beyond kTolerance. Returns the
/// largest relative difference seen (losses and parameters).
template <class Step, class Params>
double check_against_handwritten(const char* binary, Eigen::Index batch, float lr, int steps,
                                 Step&& step, Params&& params) {
  const RandomBatch data(batch);
  HandwrittenMlp reference(batch, lr);
  double worst = 0;
  for (int i = 0; i < steps; ++i) {
    const double want = reference.step<false>(data.x, data.y);
    const double got = step();
    const double diff = std::abs(got - want) / std::max(std::abs(want), 1e-30);
    worst = std::max(worst, diff);
    if (!(diff <= kTolerance)) {
      std::fprintf(stderr,
                   "%s: SELF-CHECK FAILED at batch %lld, step %d: loss %.8g, hand-written Eigen "
                   "%.8g (relative difference %.3g > %.0e). This peer does not train the "
                   "benchmark model; not benchmarking it.\n",
                   binary, static_cast<long long>(batch), i, got, want, diff, kTolerance);
      std::exit(1);
    }
  }
  const MlpParams p = params();
  const struct {
    const char* name;
    double diff;
  } tensors[] = {{"w1", detail::max_relative_difference(p.w1, reference.w1())},
                 {"b1", detail::max_relative_difference(p.b1, reference.b1())},
                 {"w2", detail::max_relative_difference(p.w2, reference.w2())},
                 {"b2", detail::max_relative_difference(p.b2, reference.b2())}};
  for (const auto& t : tensors) {
    worst = std::max(worst, t.diff);
    if (!(t.diff <= kTolerance)) {
      std::fprintf(stderr,
                   "%s: SELF-CHECK FAILED at batch %lld: after %d steps parameter %s differs from "
                   "the hand-written Eigen step's by %.3g (relative, > %.0e). Not benchmarking.\n",
                   binary, static_cast<long long>(batch), steps, t.name, t.diff, kTolerance);
      std::exit(1);
    }
  }
  return worst;
}

/// The BLAS/LAPACK shared objects mapped into this process (symlinks resolved), space-separated,
/// e.g. "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ...", or "none".
inline std::string loaded_blas_libraries() {
  std::set<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const std::string file = std::filesystem::path(name).filename().string();
        if (file.find("blas") != std::string::npos || file.find("lapack") != std::string::npos ||
            file.find("mkl") != std::string::npos) {
          std::error_code ec;
          const auto real = std::filesystem::canonical(name, ec);
          static_cast<std::set<std::string>*>(out)->insert(ec ? name : real.string());
        }
        return 0;
      },
      &found);
  std::string list;
  for (const auto& f : found) list += (list.empty() ? "" : " ") + f;
  return list.empty() ? "none" : list;
}

/// Prints that the self-check of `binary` passed, with the largest relative difference `worst`
/// it saw, and records it (and the BLAS libraries loaded) in the benchmark report's context.
/// Call before benchmark::Initialize.
inline void report_self_check(const char* binary, double worst) {
  std::fprintf(stderr,
               "%s: self-check passed: %d SGD steps (lr %g) at batch %lld and %lld match the "
               "hand-written Eigen step; largest relative difference %.2g (losses and "
               "parameters)\n",
               binary, kSelfCheckSteps, static_cast<double>(kSelfCheckLearningRate),
               static_cast<long long>(kSelfCheckBatches[0]),
               static_cast<long long>(kSelfCheckBatches[1]), worst);
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", worst);
  benchmark::AddCustomContext("self_check_max_rel_diff", text);
  benchmark::AddCustomContext("blas", loaded_blas_libraries());
}

}  // namespace hookfuse_bench
