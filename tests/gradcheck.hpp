// tests/gradcheck.hpp: finite-difference gradient checking for the autodiff tests.
//
// The numerical gradient is the fourth-order central difference
//
//     f'(w) ~ (f(w - 2h) - 8 f(w - h) + 8 f(w + h) - f(w + 2h)) / (12 h),   h = 1e-3,
//
// whose truncation error is h^4 |f^(5)| / 30 ~ 1e-13 for the smooth losses used here, and whose
// rounding error is ~ eps |f| / h ~ 1e-13 in double precision: both far below the tolerance, so a
// wrong analytic gradient cannot hide in the noise. (Relu inputs stay further than 2h from 0.)
//
// Relative error of one gradient element (numerical fd, analytic an):
//
//     rel(fd, an) = |fd - an| / max(|fd|, |an|, kGradFloor)
//
// i.e. the usual relative error, except that an element whose true value is below kGradFloor
// in magnitude is held to the absolute error kGradTolerance * kGradFloor (1e-12) instead: a
// relative error of an almost-zero element is meaningless, but the absolute bound still fails a
// gradient that is wrong by more than 1e-12 there. A check passes when the largest rel over
// every element of every Variable is below kGradTolerance.
#pragma once

#include "hookfuse/detail/eigen.hpp"  // Eigen, GCC 12 AVX-512 false positive silenced
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

namespace hookfuse_test {

inline constexpr double kGradStep = 1e-3;
inline constexpr double kGradFloor = 1e-6;
inline constexpr double kGradTolerance = 1e-6;

/// Deterministic random numbers, identical on every standard library
/// (std::uniform_real_distribution is implementation-defined; mt19937_64's output is not).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(gen_() >> 11) * 0x1.0p-53;
  }
  /// Magnitude uniform in [lo, hi), sign random.
  double signed_uniform(double lo, double hi) {
    const double m = uniform(lo, hi);
    return (gen_() & 1U) ? m : -m;
  }
  /// Uniform integer in [0, n).
  std::int32_t below(std::int32_t n) {
    return static_cast<std::int32_t>(gen_() % static_cast<std::uint64_t>(n));
  }

 private:
  std::mt19937_64 gen_;
};

/// `n` values uniform in [lo, hi) (random sign when `random_sign`).
inline std::vector<double> random_values(Rng& rng, Eigen::Index n, double lo, double hi,
                                         bool random_sign = false) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = random_sign ? rng.signed_uniform(lo, hi) : rng.uniform(lo, hi);
  return v;
}

/// Fills an Eigen matrix (a Variable's value) like random_values.
template <class M>
void randomize(M& m, Rng& rng, double lo, double hi, bool random_sign = false) {
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      m(i, j) = static_cast<typename M::Scalar>(random_sign ? rng.signed_uniform(lo, hi)
                                                            : rng.uniform(lo, hi));
}

/// A loss evaluation: re-runs a graph's forward pass and returns the loss. Type-erased, so the
/// finite-difference loop is compiled once per matrix type rather than once per graph.
using LossFn = std::function<double()>;

/// d loss / d value by fourth-order central differences: perturbs each element of `value` (a
/// Variable's value), calling `loss` for each perturbation. Leaves `value` as it found it.
template <class Matrix>
Eigen::MatrixXd numeric_gradient(const LossFn& loss, Matrix& value, double h = kGradStep) {
  using S = typename Matrix::Scalar;
  Eigen::MatrixXd fd(value.rows(), value.cols());
  for (Eigen::Index i = 0; i < value.rows(); ++i) {
    for (Eigen::Index j = 0; j < value.cols(); ++j) {
      const S w0 = value(i, j);
      auto f = [&](double d) {
        value(i, j) = static_cast<S>(static_cast<double>(w0) + d);
        return loss();
      };
      fd(i, j) = (f(-2 * h) - 8 * f(-h) + 8 * f(h) - f(2 * h)) / (12 * h);
      value(i, j) = w0;
    }
  }
  return fd;
}

/// d loss / d v for a Variable v of graph g, by finite differences.
template <class G, class V>
Eigen::MatrixXd numeric_gradient(G& g, V& v, double h = kGradStep) {
  return numeric_gradient(LossFn([&g] { return static_cast<double>(g.forward()); }), v.value, h);
}

/// d loss / d v as computed by the graph: forward(), backward(), then v.grad.
template <class G, class V>
Eigen::MatrixXd analytic_gradient(G& g, V& v) {
  g.forward();
  g.backward();
  return v.grad.template cast<double>();
}

inline double relative_error(double fd, double an) {
  return std::abs(fd - an) / std::max({std::abs(fd), std::abs(an), kGradFloor});
}

/// Largest relative_error over all elements; infinity when the shapes differ or a value is not
/// finite.
inline double max_relative_error(const Eigen::MatrixXd& fd, const Eigen::MatrixXd& an) {
  if (fd.rows() != an.rows() || fd.cols() != an.cols())
    return std::numeric_limits<double>::infinity();
  if (!fd.allFinite() || !an.allFinite()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (Eigen::Index i = 0; i < fd.rows(); ++i)
    for (Eigen::Index j = 0; j < fd.cols(); ++j)
      worst = std::max(worst, relative_error(fd(i, j), an(i, j)));
  return worst;
}

/// max |a - b| / max(max |b|, 1e-300): 0 for identical matrices.
template <class A, class B>
double max_rel_diff(const A& a, const B& b) {
  const Eigen::MatrixXd da = a.template cast<double>(), db = b.template cast<double>();
  if (da.rows() != db.rows() || da.cols() != db.cols())
    return std::numeric_limits<double>::infinity();
  return (da - db).cwiseAbs().maxCoeff() / std::max(db.cwiseAbs().maxCoeff(), 1e-300);
}

}  // namespace hookfuse_test
