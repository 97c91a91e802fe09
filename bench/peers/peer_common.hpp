// bench/peers/peer_common.hpp: what every peer binary (torch_mlp, dlib_mlp) shares: the startup
// self-check that the peer trains exactly the benchmark model, the BLAS library the process has
// actually loaded, the OpenBLAS core and thread count it runs, and the --threads=N flag.
//
// The self-check trains the peer and hookfuse_bench::HandwrittenMlp side by side from
// InitialWeights on one RandomBatch: the loss of every step and the final parameters must agree
// to kTolerance (relative), or the binary exits before any benchmark runs, so a wrong peer is
// never benchmarked.
#pragma once

#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <link.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

namespace detail {

/// The function `name` of the OpenBLAS loaded into this process, found at run time (the peers
/// link libblas.so.3, which may be another BLAS), or nullptr.
template <class Fn>
Fn openblas_function(const char* name) {
  void* symbol = dlsym(RTLD_DEFAULT, name);
  Fn fn = nullptr;
  static_assert(sizeof fn == sizeof symbol);
  std::memcpy(&fn, &symbol, sizeof fn);
  return fn;
}

}  // namespace detail

/// The core whose kernels OpenBLAS runs (openblas_get_corename(): "Haswell", "SkylakeX",
/// "Prescott", ...; set by OPENBLAS_CORETYPE or OpenBLAS's own CPU detection), or "none" when
/// the process has not loaded OpenBLAS.
inline std::string openblas_core() {
  const auto fn = detail::openblas_function<char* (*)()>("openblas_get_corename");
  return fn != nullptr ? std::string(fn()) : std::string("none");
}

/// OpenBLAS's thread count (openblas_get_num_threads()), or 0 without OpenBLAS.
inline int openblas_threads() {
  const auto fn = detail::openblas_function<int (*)()>("openblas_get_num_threads");
  return fn != nullptr ? fn() : 0;
}

/// Removes the flag --threads=N from argv (before benchmark::Initialize sees it) and returns N,
/// the threads the peer's step may use (1 without the flag); sets OpenBLAS's thread count to N
/// when OpenBLAS is loaded. Exits with status 2 and a message naming the flag when N is not an
/// integer in [1, 1024].
inline int take_threads_flag(const char* binary, int& argc, char** argv) {
  int threads = 1;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--threads=", 0) != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    const std::string value = arg.substr(10);
    char* end = nullptr;
    const long n = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 1 || n > 1024) {
      std::fprintf(stderr, "%s: --threads=%s: expected an integer from 1 to 1024\n", binary,
                   value.c_str());
      std::exit(2);
    }
    threads = static_cast<int>(n);
  }
  argc = kept;
  argv[argc] = nullptr;
  if (const auto set = detail::openblas_function<void (*)(int)>("openblas_set_num_threads"))
    set(threads);
  return threads;
}

/// Prints that the self-check of `binary` passed, with the largest relative difference `worst`
/// it saw, and records it in the benchmark report's context with the BLAS libraries loaded
/// ("blas"), OpenBLAS's core ("openblas_core") and thread count ("openblas_threads").
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
  benchmark::AddCustomContext("openblas_core", openblas_core());
  benchmark::AddCustomContext("openblas_threads", std::to_string(openblas_threads()));
}

}  // namespace hookfuse_bench
