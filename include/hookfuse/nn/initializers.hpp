// hookfuse/nn/initializers.hpp: seeded variable initializers (tf.compat.v1 initializers).
//
// A random initializer takes an optional seed. With one, the numbers depend on the seed alone.
// Without one, the seed is derived from the name of the variable being initialized
// (seed_from_name: FNV-1a, 64 bits, over the name's bytes), so two variables of the same shape
// start different and every run, on every platform, starts the same. Dense passes its
// variables' names ("dense/kernel"); an initializer called on a bare matrix without a seed and
// without a name uses the hash of the empty name.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <type_traits>

#include "hookfuse/detail/eigen.hpp"

namespace hookfuse::nn {

/// The seed a random initializer without an explicit seed uses for the variable `name`: the
/// 64-bit FNV-1a hash of the name's bytes (offset basis 0xcbf29ce484222325, prime
/// 0x100000001b3; for each byte, xor it in, then multiply modulo 2^64). Fixed by this
/// definition: the same on every platform and standard library.
constexpr std::uint64_t seed_from_name(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : name) {
    h ^= static_cast<std::uint64_t>(static_cast<unsigned char>(c));
    h *= 0x100000001b3ULL;
  }
  return h;
}

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
inline std::uint64_t seed_or_name(const std::optional<std::uint64_t>& seed,
                                  std::string_view name) {
  return seed ? *seed : seed_from_name(name);
}
}  // namespace detail

/// All zeros (tf.zeros_initializer).
struct zeros {
  template <class M>
  void operator()(M& m, std::string_view = {}) const { m.setZero(); }
};

/// Every element `value` (tf.constant_initializer).
struct constant {
  double value = 0.0;
  template <class M>
  void operator()(M& m, std::string_view = {}) const {
    m.setConstant(static_cast<typename M::Scalar>(value));
  }
};

/// Uniform in [-limit, limit], limit = sqrt(6 / (fan_in + fan_out)), fan_in = rows, fan_out =
/// cols of the [in, out] kernel (tf.glorot_uniform_initializer). Same seed, same numbers; no
/// seed: seed_from_name(name of the variable).
struct glorot_uniform {
  std::optional<std::uint64_t> seed = std::nullopt;
  template <class M>
  void operator()(M& m, std::string_view name = {}) const {
    std::mt19937_64 rng(detail::seed_or_name(seed, name));
    const double limit = std::sqrt(6.0 / static_cast<double>(m.rows() + m.cols()));
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j)
        m(i, j) = static_cast<typename M::Scalar>((2.0 * detail::uniform01(rng) - 1.0) * limit);
  }
};

/// Normal(mean, stddev) redrawn until within two standard deviations
/// (tf.compat.v1.truncated_normal_initializer). Same seed, same numbers; no seed:
/// seed_from_name(name of the variable).
struct truncated_normal {
  double mean = 0.0;
  double stddev = 1.0;
  std::optional<std::uint64_t> seed = std::nullopt;
  template <class M>
  void operator()(M& m, std::string_view name = {}) const {
    std::mt19937_64 rng(detail::seed_or_name(seed, name));
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) {
        double z = detail::normal01(rng);
        while (std::abs(z) > 2.0) z = detail::normal01(rng);
        m(i, j) = static_cast<typename M::Scalar>(mean + stddev * z);
      }
  }
};

namespace detail {
/// Runs an initializer on a variable's value, passing the variable's name when the initializer
/// takes one (any callable on the matrix alone is an initializer too).
template <class Init, class M>
void initialize(const Init& init, M& m, std::string_view name) {
  if constexpr (std::is_invocable_v<const Init&, M&, std::string_view>) init(m, name);
  else init(m);
}
}  // namespace detail

}  // namespace hookfuse::nn
