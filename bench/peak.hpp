// bench/peak.hpp: a measured single-core FMA peak, so every benchmark can report the fraction of
// the hardware limit it reaches.
//
// The kernel keeps kChains independent accumulators of Eigen's widest float packet (8 floats
// with AVX2, 16 with AVX-512) and issues one fused multiply-add per accumulator per iteration:
// enough independent chains to cover the FMA latency on two ports. It measures what this core,
// this compiler and these flags can issue, not the data sheet.
#pragma once

#include <benchmark/benchmark.h>

#include "hookfuse/detail/eigen.hpp"  // Eigen, GCC 12 AVX-512 false positive silenced
#include <chrono>
#include <cstdint>

namespace hookfuse_bench {

/// Float FLOPs per second of the peak kernel, measured once on first use: the best of 25 rounds
/// of about 10 ms each (about 0.25 s), so a short disturbance does not lower it.
inline double measured_peak_flops() {
  static const double peak = [] {
    using Packet = typename Eigen::internal::packet_traits<float>::type;
    constexpr int kChains = 12;
    constexpr int kWidth = Eigen::internal::packet_traits<float>::size;
    Packet acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = Eigen::internal::pset1<Packet>(0.001f * float(c));
    const Packet a = Eigen::internal::pset1<Packet>(0.999999f);
    const Packet b = Eigen::internal::pset1<Packet>(1e-7f);
    double best = 0;
    for (int round = 0; round < 25; ++round) {
      constexpr std::int64_t kIters = 2'000'000;
      const auto t0 = std::chrono::steady_clock::now();
      for (std::int64_t i = 0; i < kIters; ++i) {
        for (int c = 0; c < kChains; ++c) acc[c] = Eigen::internal::pmadd(acc[c], a, b);
        // Keeps the accumulators in registers but stops the compiler from folding the loop.
        benchmark::ClobberMemory();
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double flops = double(kIters) * kChains * kWidth * 2.0;
      if (flops / s > best) best = flops / s;
    }
    float sink = 0;
    for (int c = 0; c < kChains; ++c) sink += Eigen::internal::predux(acc[c]);
    benchmark::DoNotOptimize(sink);
    return best;
  }();
  return peak;
}

/// Adds "GFLOP/s" and "peak" (fraction of measured_peak_flops()) counters to a benchmark whose
/// every iteration performs `flops_per_iteration` floating-point operations. `start` is taken
/// just before the timed loop (wall clock, like the benchmark's own Time column):
///
///     const auto start = std::chrono::steady_clock::now();
///     for (auto _ : state) step();
///     report_flops(state, flops, start);
inline void report_flops(benchmark::State& state, double flops_per_iteration,
                         std::chrono::steady_clock::time_point start) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double per_second =
      flops_per_iteration * static_cast<double>(state.iterations()) / seconds;
  state.counters["GFLOP/s"] = per_second * 1e-9;
  state.counters["peak"] = per_second / measured_peak_flops();
}

/// FLOPs of one training step of the 784 -> 256 -> 10 MLP at batch b (forward, both backward
/// products, update ignored): 6 * b * (784 * 256 + 256 * 10), the convention.
constexpr double mlp_step_flops(std::int64_t b) { return 6.0 * double(b) * (784.0 * 256 + 256.0 * 10); }

/// The peak kernel as a benchmark of its own, so the reference appears in every report.
inline void BM_fma_peak(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(measured_peak_flops());
  state.counters["peak_GFLOP/s"] = measured_peak_flops() * 1e-9;
}

}  // namespace hookfuse_bench
