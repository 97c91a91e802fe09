// hookfuse/nn/initializers.hpp: seeded variable initializers (tf.compat.v1 initializers).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "hookfuse/detail/eigen.hpp"

namespace hookfuse::nn {

namespace detail {
// Uniform double in [0, 1) from the top 53 bits: the same numbers with every standard library
// (std::uniform_real_distribution is not specified bit for bit).
inline double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}
// Standard normal by Box-Muller, portable for the same reason.
inline double normal01(std::mt19937_64& rng) {
  double u1 = uniform01(rng);
  while (u1 <= 0.0) u1 = uniform01(rng);
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}
}  // namespace detail

/// All zeros (tf.zeros_initializer).
struct zeros {
  template <class M>
  void operator()(M& m) const { m.setZero(); }
};

/// Every element `value` (tf.constant_initializer).
struct constant {
  double value = 0.0;
  template <class M>
  void operator()(M& m) const { m.setConstant(static_cast<typename M::Scalar>(value)); }
};

/// Uniform in [-limit, limit], limit = sqrt(6 / (fan_in + fan_out)), fan_in = rows, fan_out =
/// cols of the [in, out] kernel (tf.glorot_uniform_initializer). Same seed, same numbers.
struct glorot_uniform {
  std::uint64_t seed = 0;
  template <class M>
  void operator()(M& m) const {
    std::mt19937_64 rng(seed);
    const double limit = std::sqrt(6.0 / static_cast<double>(m.rows() + m.cols()));
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j)
        m(i, j) = static_cast<typename M::Scalar>((2.0 * detail::uniform01(rng) - 1.0) * limit);
  }
};

/// Normal(mean, stddev) redrawn until within two standard deviations
/// (tf.compat.v1.truncated_normal_initializer). Same seed, same numbers.
struct truncated_normal {
  double mean = 0.0;
  double stddev = 1.0;
  std::uint64_t seed = 0;
  template <class M>
  void operator()(M& m) const {
    std::mt19937_64 rng(seed);
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) {
        double z = detail::normal01(rng);
        while (std::abs(z) > 2.0) z = detail::normal01(rng);
        m(i, j) = static_cast<typename M::Scalar>(mean + stddev * z);
      }
  }
};

}  // namespace hookfuse::nn
